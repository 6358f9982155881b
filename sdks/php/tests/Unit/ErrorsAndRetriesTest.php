<?php

declare(strict_types=1);

namespace Fileshare\Tests\Unit;

use Fileshare\Exception\APIConnectionException;
use Fileshare\Exception\AuthenticationException;
use Fileshare\Exception\BadRequestException;
use Fileshare\Exception\FileshareException;
use Fileshare\Exception\LimitExceededException;
use Fileshare\Exception\NotFoundException;
use Fileshare\Exception\PermissionDeniedException;
use Fileshare\Exception\RateLimitException;
use Fileshare\Exception\ServerException;
use Fileshare\Internal\ErrorFactory;
use Fileshare\Tests\Support\Mock;
use Fileshare\UploadSource;
use GuzzleHttp\Psr7\Response;
use PHPUnit\Framework\TestCase;

final class ErrorsAndRetriesTest extends TestCase
{
    /** @return iterable<string, array{int, string, class-string<FileshareException>}> */
    public static function statuses(): iterable
    {
        yield '401' => [401, 'unauthorized', AuthenticationException::class];
        yield '403 plan' => [403, 'plan_not_supported', PermissionDeniedException::class];
        yield '403 size' => [403, 'file_too_large', LimitExceededException::class];
        yield '403 daily' => [403, 'daily_upload_limit_exceeded', LimitExceededException::class];
        yield '413 tus' => [413, 'file_too_large', LimitExceededException::class];
        yield '413 length' => [413, 'upload_length_exceeded', BadRequestException::class];
        yield '404' => [404, 'not_found', NotFoundException::class];
        yield '400' => [400, 'invalid_parameter', BadRequestException::class];
        yield '410' => [410, 'upload_expired', BadRequestException::class];
        yield '429' => [429, 'rate_limited', RateLimitException::class];
        yield '500' => [500, 'internal_error', ServerException::class];
        yield '507' => [507, 'insufficient_storage', ServerException::class];
    }

    /**
     * @dataProvider statuses
     *
     * @param class-string<FileshareException> $class
     */
    public function testStatusesMapToExceptions(int $status, string $code, string $class): void
    {
        $mock = new Mock([Mock::error($status, $code, 'Because.', ['RateLimit-Limit' => '10', 'RateLimit-Remaining' => '0', 'RateLimit-Reset' => '42', 'Retry-After' => '42'])], ['max_retries' => 0]);
        try {
            $mock->client->files->list();
            self::fail('no exception');
        } catch (FileshareException $e) {
            self::assertInstanceOf($class, $e);
            self::assertSame($status, $e->getStatus());
            self::assertSame($status, $e->getCode());
            self::assertSame($code, $e->getErrorCode());
            self::assertSame("req-$status", $e->getRequestId());
            self::assertSame(42, $e->getRetryAfter());
            self::assertSame("$status $code: Because.", $e->getMessage());
            if ($e instanceof RateLimitException) {
                self::assertSame(10, $e->getRateLimit()->limit);
                self::assertSame(0, $e->getRateLimit()->remaining);
                self::assertSame(42, $e->getRateLimit()->reset);
            }
        }
    }

    public function testNonJsonErrorBody(): void
    {
        $mock = new Mock([new Response(502, [], '<html>Bad gateway</html>')], ['max_retries' => 0]);
        $this->expectException(ServerException::class);
        $this->expectExceptionMessage('502: <html>Bad gateway</html>');
        $mock->client->stats();
    }

    public function testRetryAfterAsDateAndCap(): void
    {
        self::assertSame(30, ErrorFactory::parseRetryAfter(gmdate('D, d M Y H:i:s', 1_000_030) . ' GMT', 1_000_000));
        self::assertNull(ErrorFactory::parseRetryAfter('soon'));
        $mock = new Mock([Mock::error(429, 'rate_limited', 'x', ['Retry-After' => '3600']), Mock::json(200, ['success' => true, 'files' => [], 'pagination' => ['page' => 1, 'limit' => 20, 'total' => 0, 'pages' => 0]])]);
        $mock->client->files->list();
        self::assertSame([60.0], $mock->sleeps);
    }

    public function testRetries429And503ThenSucceeds(): void
    {
        $ok = Mock::json(200, ['success' => true, 'file' => Mock::file('x')]);
        $mock = new Mock([Mock::error(429, 'rate_limited', 'x', ['Retry-After' => '2']), Mock::error(503, 'service_unavailable'), $ok]);
        self::assertSame(1, $mock->client->files->get(1)->file_id);
        // Retry-After first, then backoff with full jitter (random 0.5 of a 1 s ceiling).
        self::assertSame([2.0, 0.5], $mock->sleeps);
        self::assertCount(3, $mock->requests);
    }

    public function testGivesUpAfterMaxRetries(): void
    {
        $mock = new Mock([Mock::error(503, 'service_unavailable'), Mock::error(503, 'service_unavailable'), Mock::error(503, 'service_unavailable')]);
        try {
            $mock->client->files->delete(1);
            self::fail('no exception');
        } catch (ServerException $e) {
            self::assertSame(503, $e->getStatus());
        }
        self::assertCount(3, $mock->requests); // 1 + max_retries (2)
        self::assertSame([0.25, 0.5], $mock->sleeps);
        self::assertSame('DELETE', $mock->requests[0]['request']->getMethod());
    }

    public function testConnectionFailuresAreRetriedThenAPIConnectionException(): void
    {
        $mock = new Mock([Mock::drop(), Mock::drop(), Mock::drop('Connection refused')]);
        try {
            $mock->client->files->list();
            self::fail('no exception');
        } catch (APIConnectionException $e) {
            self::assertStringContainsString('Connection refused', $e->getMessage());
            self::assertNull($e->getStatus());
        }
        self::assertCount(3, $mock->requests);
    }

    public function testOtherErrorsAreNotRetried(): void
    {
        foreach ([[500, 'internal_error'], [400, 'invalid_parameter'], [404, 'not_found'], [401, 'unauthorized']] as [$status, $code]) {
            $mock = new Mock([Mock::error($status, $code), Mock::json(200, ['success' => true])]);
            try {
                $mock->client->files->get(1);
                self::fail('no exception');
            } catch (FileshareException) {
            }
            self::assertCount(1, $mock->requests, "$status retried");
        }
    }

    public function testBackoffIsExponentialWithFullJitterCapped(): void
    {
        $mock = new Mock([], ['random' => static fn (): float => 0.999]);
        $http = (new \ReflectionProperty($mock->client, 'http'))->getValue($mock->client);
        $error = new APIConnectionException('x');
        self::assertEqualsWithDelta(0.4995, $http->delay(0, $error), 1e-9);
        self::assertEqualsWithDelta(0.999, $http->delay(1, $error), 1e-9);
        self::assertEqualsWithDelta(7.992, $http->delay(10, $error), 1e-9);
    }

    public function testMultipartUploadRetriedOnlyWhenTheSourceReplays(): void
    {
        $bytes = str_repeat('r', 1000);
        $mock = new Mock([Mock::error(503, 'service_unavailable'), Mock::json(201, ['success' => true] + Mock::file($bytes))]);
        $file = $mock->client->files->upload(UploadSource::fromBytes($bytes), ['filename' => 'r.bin']);
        self::assertSame(hash('sha256', $bytes), $file->sha256);
        self::assertCount(2, $mock->requests);
        self::assertSame($mock->requests[0]['body'], $mock->requests[1]['body']);

        // A pipe is a one-shot stream: not retried.
        $pipe = popen('printf abc', 'r');
        $mock = new Mock([Mock::error(503, 'service_unavailable'), Mock::json(201, ['success' => true] + Mock::file('abc'))]);
        try {
            $mock->client->files->upload($pipe, ['filename' => 'p.bin']);
            self::fail('no exception');
        } catch (ServerException) {
        } finally {
            pclose($pipe);
        }
        self::assertCount(1, $mock->requests);
    }
}
