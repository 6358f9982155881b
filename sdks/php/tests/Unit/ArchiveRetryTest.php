<?php

declare(strict_types=1);

namespace Fileshare\Tests\Unit;

use Fileshare\Exception\APIConnectionException;
use Fileshare\Tests\Support\Mock;
use GuzzleHttp\Psr7\Response;
use PHPUnit\Framework\TestCase;

/**
 * downloadArchive() on Guzzle's MockHandler: how often it asks again when the server cuts the
 * archive. An archive does not resume, so each attempt costs the whole download from its first byte.
 */
final class ArchiveRetryTest extends TestCase
{
    private const LENGTH = 10000;

    private string $path;

    protected function setUp(): void
    {
        $this->path = tempnam(sys_get_temp_dir(), 'fileshare-php-zip-');
        unlink($this->path);
    }

    protected function tearDown(): void
    {
        @unlink($this->path);
    }

    /** A 200 that declares the whole archive and ends after $cutAt bytes of it. */
    private static function cut(int $cutAt): Response
    {
        return new Response(200, ['Content-Type' => 'application/zip', 'Content-Length' => (string) self::LENGTH], str_repeat("\0", $cutAt));
    }

    private static function whole(): Response
    {
        return new Response(200, ['Content-Type' => 'application/zip', 'Content-Length' => (string) self::LENGTH], str_repeat("\7", self::LENGTH));
    }

    public function testTheRetryBudgetIsNeverGivenBackEvenWhenEachCutAttemptGetsFurther(): void
    {
        // A corrupt stored file cuts every attempt near the same offset, a little further each time
        // (socket chunking): the call must still stop after max_retries more attempts. The 20th
        // would succeed, so a budget given back on progress ends in a success here.
        $queue = [];
        for ($n = 1; $n < 20; ++$n) {
            $queue[] = self::cut(1000 + 100 * $n);
        }
        $queue[] = self::whole();
        $mock = new Mock($queue, ['max_retries' => 2]);
        try {
            $mock->client->files->downloadArchive([1, 2], $this->path);
            self::fail('expected APIConnectionException');
        } catch (APIConnectionException $e) {
            self::assertStringContainsString('of 10000 bytes', $e->getMessage());
        }
        self::assertCount(3, $mock->requests);
        foreach ($mock->requests as $request) {
            self::assertSame('POST', $request['request']->getMethod());
            self::assertStringEndsWith('/files/archive', (string) $request['request']->getUri());
        }
        self::assertFileDoesNotExist($this->path); // a path that did not get the whole archive is removed
    }

    public function testACutArchiveIsAskedAgainFromItsFirstByteWithinTheBudget(): void
    {
        $mock = new Mock([self::cut(3000), self::cut(3000), self::whole()], ['max_retries' => 2]);
        $result = $mock->client->files->downloadArchive([1], $this->path);
        self::assertSame(self::LENGTH, $result->size);
        self::assertSame(str_repeat("\7", self::LENGTH), file_get_contents($this->path));
        self::assertCount(3, $mock->requests);
    }
}
