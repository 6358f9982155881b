<?php

declare(strict_types=1);

namespace Fileshare\Tests\Integration;

use Fileshare\Exception\LimitExceededException;
use Fileshare\Exception\RateLimitException;
use Fileshare\Tests\Support\IntegrationTestCase;
use Fileshare\Tests\Support\Server;
use Fileshare\UploadSource;

/**
 * The limited account (1 MiB files, 3 uploads a day, 10 requests a minute), in this order:
 * 403 and 413 file_too_large, the daily limit, then the request rate (which spends the minute).
 */
final class LimitsTest extends IntegrationTestCase
{
    /** @return array<string, int> */
    private static function limits(): array
    {
        return Server::info()['limits']['limited'];
    }

    public function testMultipartOverMaxFileSizeIs403FileTooLarge(): void
    {
        $path = $this->makeFile('big.bin', self::limits()['max_file_size'] + 1);
        try {
            Server::client('limited', ['max_retries' => 0])->files->upload($path, ['resumable' => false]);
            self::fail('no exception');
        } catch (LimitExceededException $e) {
            self::assertSame(403, $e->getStatus());
            self::assertSame('file_too_large', $e->getErrorCode());
        }
    }

    public function testResumableOverMaxFileSizeIs413FileTooLarge(): void
    {
        $path = $this->makeFile('big.bin', self::limits()['max_file_size'] + 1);
        try {
            Server::client('limited', ['max_retries' => 0])->files->upload($path, ['resumable' => true]);
            self::fail('no exception');
        } catch (LimitExceededException $e) {
            self::assertSame(413, $e->getStatus());
            self::assertSame('file_too_large', $e->getErrorCode());
        }
    }

    public function testDailyUploadLimit(): void
    {
        $client = Server::client('limited', ['max_retries' => 0]);
        for ($i = 0; $i < self::limits()['daily_uploads']; ++$i) {
            $client->files->upload(UploadSource::fromBytes("day $i"), ['filename' => "day-$i.txt"]);
        }
        try {
            $client->files->upload(UploadSource::fromBytes('one too many'), ['filename' => 'more.txt']);
            self::fail('no exception');
        } catch (LimitExceededException $e) {
            self::assertSame(403, $e->getStatus());
            self::assertSame('daily_upload_limit_exceeded', $e->getErrorCode());
        }
    }

    public function testRateLimitExceptionOnceTheMinuteIsSpent(): void
    {
        $client = Server::client('limited', ['max_retries' => 0]);
        $error = null;
        for ($i = 0; $i <= self::limits()['requests_per_minute'] && $error === null; ++$i) {
            try {
                $client->files->list(limit: 1);
            } catch (RateLimitException $e) {
                $error = $e;
            }
        }
        self::assertInstanceOf(RateLimitException::class, $error);
        self::assertSame(429, $error->getStatus());
        self::assertSame('rate_limited', $error->getErrorCode());
        self::assertGreaterThan(0, $error->getRetryAfter());
        self::assertSame(self::limits()['requests_per_minute'], $error->getRateLimit()->limit);
        self::assertSame(0, $error->getRateLimit()->remaining);
        self::assertGreaterThan(0, $error->getRateLimit()->reset);
    }
}
