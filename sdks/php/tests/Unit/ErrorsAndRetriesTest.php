<?php

declare(strict_types=1);

namespace Fileshare\Tests\Unit;

use Fileshare\Exception\APIConnectionException;
use Fileshare\Exception\AuthenticationException;
use Fileshare\Exception\BadRequestException;
use Fileshare\Exception\ExceptionInterface;
use Fileshare\Exception\FileshareException;
use Fileshare\Exception\InsufficientScopeException;
use Fileshare\Exception\IpNotAllowedException;
use Fileshare\Exception\LimitExceededException;
use Fileshare\Exception\NotFoundException;
use Fileshare\Exception\PermissionDeniedException;
use Fileshare\Exception\RateLimitException;
use Fileshare\Exception\ScanPendingException;
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
        yield '403 scope' => [403, 'insufficient_scope', InsufficientScopeException::class];
        yield '403 ip' => [403, 'ip_not_allowed', IpNotAllowedException::class];
        yield '403 size' => [403, 'file_too_large', LimitExceededException::class];
        yield '403 daily' => [403, 'daily_upload_limit_exceeded', LimitExceededException::class];
        yield '403 storage' => [403, 'storage_quota_exceeded', LimitExceededException::class];
        yield '403 upload request full' => [403, 'upload_request_full', LimitExceededException::class];
        yield '403 not scannable' => [403, 'file_not_scannable', LimitExceededException::class];
        yield '413 tus' => [413, 'file_too_large', LimitExceededException::class];
        yield '413 length' => [413, 'upload_length_exceeded', BadRequestException::class];
        yield '404' => [404, 'not_found', NotFoundException::class];
        yield '400' => [400, 'invalid_parameter', BadRequestException::class];
        yield '410' => [410, 'upload_expired', BadRequestException::class];
        yield '409 in progress' => [409, 'idempotency_in_progress', BadRequestException::class];
        yield '409 scan pending' => [409, 'scan_pending', ScanPendingException::class];
        yield '422 key reused' => [422, 'idempotency_key_reused', BadRequestException::class];
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
            self::assertSame("$status $code: Because. (request id req-$status)", $e->getMessage());
            self::assertSame(['success' => false, 'error' => ['code' => $code, 'message' => 'Because.']], $e->getBody());
            self::assertSame('0', $e->getHeaderLine('ratelimit-remaining'));
            self::assertSame(['42'], $e->getHeaders()['Retry-After']);
            self::assertInstanceOf(ExceptionInterface::class, $e);
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

    public function testRetryAfterAsDateAndOverAMinuteIsNotSleptThrough(): void
    {
        self::assertSame(30, ErrorFactory::parseRetryAfter(gmdate('D, d M Y H:i:s', 1_000_030) . ' GMT', 1_000_000));
        self::assertNull(ErrorFactory::parseRetryAfter('soon'));
        $empty = Mock::json(200, ['success' => true, 'files' => [], 'pagination' => ['page' => 1, 'limit' => 20, 'total' => 0, 'pages' => 0]]);

        // Up to 60 s is waited for.
        $mock = new Mock([Mock::error(429, 'rate_limited', 'x', ['Retry-After' => '60']), $empty]);
        $mock->client->files->list();
        self::assertSame([60.0], $mock->sleeps);

        // Longer: thrown at once, with getRetryAfter(), whatever the retries left.
        $mock = new Mock([Mock::error(429, 'rate_limited', 'x', ['Retry-After' => '3600']), $empty]);
        $this->assertThrowsAtOnce(RateLimitException::class, $mock, fn () => $mock->client->files->list());
        self::assertCount(1, $mock->requests);

        // A 503 that asks for more than a minute, as an HTTP date.
        $mock = new Mock([Mock::error(503, 'service_unavailable', 'x', ['Retry-After' => gmdate('D, d M Y H:i:s', time() + 600) . ' GMT']), $empty]);
        $this->assertThrowsAtOnce(ServerException::class, $mock, fn () => $mock->client->files->list());
        self::assertCount(1, $mock->requests);
    }

    public function testALongRetryAfterIsNotSleptThroughInUploadsAndDownloads(): void
    {
        $long = static fn (int $status, string $code): Response => Mock::error($status, $code, 'x', ['Retry-After' => '61']);
        // A multipart upload.
        $mock = new Mock([$long(429, 'rate_limited'), Mock::json(201, ['success' => true] + Mock::file('abc'))]);
        $this->assertThrowsAtOnce(RateLimitException::class, $mock, fn () => $mock->client->files->upload(UploadSource::fromBytes('abc')));
        // A resumable upload's chunk (the upload is then deleted, as after any failure).
        $tus = new Response(204, ['Tus-Version' => '1.0.0', 'Tus-Extension' => 'creation,termination', 'Tus-Checksum-Algorithm' => 'sha256']);
        $created = new Response(201, ['Location' => '/api/v1/uploads/abc', 'Upload-Offset' => '0']);
        $mock = new Mock([$tus, $created, $long(503, 'service_unavailable'), new Response(204)]);
        $this->assertThrowsAtOnce(ServerException::class, $mock, fn () => $mock->client->files->upload(UploadSource::fromBytes('abc'), ['resumable' => true]));
        self::assertSame(['OPTIONS', 'POST', 'PATCH', 'DELETE'], array_map(static fn (array $r): string => $r['request']->getMethod(), $mock->requests));
        // A download's grant URL.
        $path = tempnam(sys_get_temp_dir(), 'fileshare-php-ra-');
        try {
            $mock = new Mock([$long(429, 'rate_limited')]);
            $this->assertThrowsAtOnce(RateLimitException::class, $mock, fn () => $mock->client->download('https://files.test/download/tok1/grant1', $path, ['resume' => false]));
        } finally {
            @unlink($path);
        }
    }

    /**
     * $call throws $class with a Retry-After over a minute, without sleeping.
     *
     * @param class-string<FileshareException> $class
     */
    private function assertThrowsAtOnce(string $class, Mock $mock, callable $call): void
    {
        $before = \count($mock->requests);
        try {
            $call();
            self::fail('no exception');
        } catch (FileshareException $e) {
            self::assertInstanceOf($class, $e);
            self::assertGreaterThan(60, $e->getRetryAfter());
        }
        self::assertSame([], $mock->sleeps);
        self::assertGreaterThan($before, \count($mock->requests));
    }

    public function testServerErrors500502503504AreRetried(): void
    {
        foreach ([500, 502, 503, 504] as $status) {
            $mock = new Mock([Mock::error($status, 'x'), Mock::json(200, ['success' => true, 'file' => Mock::file('x')])]);
            self::assertSame(1, $mock->client->files->get(1)->file_id);
            self::assertCount(2, $mock->requests, "$status not retried");
        }
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
        foreach ([[501, 'not_implemented'], [505, 'x'], [400, 'invalid_parameter'], [404, 'not_found'], [401, 'unauthorized'],
            [409, 'default_link_required'], [422, 'idempotency_key_reused']] as [$status, $code]) {
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
