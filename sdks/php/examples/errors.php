<?php

declare(strict_types=1);

// What the SDK throws, and how to tell the cases apart. Usage: php examples/errors.php

require __DIR__ . '/autoload.php';

use Fileshare\Client;
use Fileshare\Exception\APIConnectionException;
use Fileshare\Exception\AuthenticationException;
use Fileshare\Exception\BadRequestException;
use Fileshare\Exception\ConfigurationException;
use Fileshare\Exception\ExceptionInterface;
use Fileshare\Exception\FileshareException;
use Fileshare\Exception\LimitExceededException;
use Fileshare\Exception\NotFoundException;
use Fileshare\Exception\RateLimitException;

$client = new Client();

function attempt(string $what, callable $call): void
{
    try {
        $call();
        echo "$what: ok\n";
    } catch (NotFoundException $e) {
        echo "$what: not found ({$e->getErrorCode()}, request {$e->getRequestId()}, {$e->getHeaderLine('RateLimit-Remaining')} requests left)\n";
    } catch (BadRequestException $e) {
        echo "$what: refused as sent: {$e->getMessage()}\n";
    } catch (LimitExceededException $e) {
        echo "$what: account limit {$e->getErrorCode()}\n";
    } catch (RateLimitException $e) {
        echo "$what: too many requests, retry in {$e->getRetryAfter()} s (remaining {$e->getRateLimit()->remaining})\n";
    } catch (AuthenticationException $e) {
        echo "$what: check the API key ({$e->getStatus()})\n";
    } catch (APIConnectionException $e) {
        echo "$what: no answer: {$e->getMessage()}\n";
    } catch (FileshareException $e) {
        echo "$what: " . $e::class . ": {$e->getMessage()}\n";
    } catch (ConfigurationException $e) {
        echo "$what: a mistake in the code: {$e->getMessage()}\n";
    } catch (ExceptionInterface $e) { // every exception of the SDK implements it
        echo "$what: " . $e::class . "\n";
    }
}

attempt('get a file that does not exist', static fn () => $client->files->get(999_999_999));
attempt('list 500 per page', static fn () => $client->files->list(limit: 500));
attempt('a wrong key', static fn () => (new Client(['api_key' => 'fsk_' . str_repeat('x', 43)]))->stats());
attempt('a base URL without /api/v1', static fn () => new Client(['base_url' => 'https://files.example.com']));
attempt('a server that is not there', static fn () => (new Client(['base_url' => 'http://127.0.0.1:9/api/v1', 'max_retries' => 0]))->stats());
