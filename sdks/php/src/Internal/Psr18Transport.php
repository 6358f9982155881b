<?php

declare(strict_types=1);

namespace Fileshare\Internal;

use Psr\Http\Client\ClientExceptionInterface;
use Psr\Http\Client\ClientInterface;
use Psr\Http\Message\RequestInterface;
use Psr\Http\Message\ResponseInterface;

/**
 * Sends through any PSR-18 client. Timeouts, proxies and the like are the client's own settings.
 *
 * @internal
 */
final class Psr18Transport implements Transport
{
    public function __construct(private readonly ClientInterface $client)
    {
    }

    public function send(RequestInterface $request, ?ResponseSink $sink = null, float $timeout = 0.0): ResponseInterface
    {
        try {
            $response = $this->client->sendRequest($request);
        } catch (ClientExceptionInterface $error) {
            throw Http::connectionError($error);
        }
        if ($sink !== null) {
            $sink->begin($response);
            $body = $response->getBody();
            try {
                while (!$body->eof()) {
                    $piece = $body->read(1 << 20);
                    if ($piece === '') {
                        break;
                    }
                    $sink->write($piece);
                }
            } catch (\RuntimeException $error) {
                throw Http::connectionError($error);
            }
        }

        return $response;
    }
}
