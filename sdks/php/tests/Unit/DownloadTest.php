<?php

declare(strict_types=1);

namespace Fileshare\Tests\Unit;

use Fileshare\Exception\IntegrityException;
use Fileshare\Exception\NotFoundException;
use Fileshare\Model\FileRecord;
use Fileshare\Tests\Support\Mock;
use GuzzleHttp\Psr7\Response;
use PHPUnit\Framework\TestCase;

final class DownloadTest extends TestCase
{
    private string $path;
    private string $bytes;
    private FileRecord $file;

    protected function setUp(): void
    {
        $this->path = tempnam(sys_get_temp_dir(), 'fileshare-php-dl-');
        unlink($this->path);
        $this->bytes = random_bytes(5000);
        $this->file = FileRecord::fromArray(Mock::file($this->bytes));
    }

    protected function tearDown(): void
    {
        @unlink($this->path);
    }

    private function etag(): string
    {
        return '"' . hash('sha256', $this->bytes) . '"';
    }

    private function partial(int $from, ?int $to = null): Response
    {
        $to ??= \strlen($this->bytes) - 1;

        return new Response(206, ['ETag' => $this->etag(), 'Content-Range' => "bytes $from-$to/" . \strlen($this->bytes),
            'Content-Length' => (string) ($to - $from + 1)], substr($this->bytes, $from, $to - $from + 1));
    }

    public function testResumesAPartialFileWithRangeAndIfRange(): void
    {
        file_put_contents($this->path, substr($this->bytes, 0, 1200));
        $mock = new Mock([$this->partial(1200)]);
        $progress = [];
        $result = $mock->client->download($this->file, $this->path, ['on_progress' => function (int $s, ?int $t) use (&$progress): void {
            $progress[] = [$s, $t];
        }]);
        self::assertSame(1200, $result->resumed_from);
        self::assertSame(5000, $result->size);
        self::assertSame($this->bytes, file_get_contents($this->path));
        $request = $mock->requests[0]['request'];
        self::assertSame('bytes=1200-', $request->getHeaderLine('Range'));
        self::assertSame($this->etag(), $request->getHeaderLine('If-Range'));
        self::assertSame('', $request->getHeaderLine('Authorization'), 'no key to a public link');
        self::assertSame([1200, 5000], $progress[0]);
        self::assertSame([5000, 5000], end($progress));
    }

    public function testContinuesAfterTheConnectionDropsMidway(): void
    {
        $mock = new Mock([
            new Response(200, ['ETag' => $this->etag(), 'Content-Length' => '5000'], substr($this->bytes, 0, 3000)), // cut short
            Mock::drop(),
            $this->partial(3000),
        ]);
        $result = $mock->client->download($this->file->public_link, $this->path);
        self::assertSame(0, $result->resumed_from);
        self::assertSame($this->bytes, file_get_contents($this->path));
        self::assertSame('', $mock->requests[0]['request']->getHeaderLine('Range'));
        self::assertSame('bytes=3000-', $mock->requests[2]['request']->getHeaderLine('Range'));
        self::assertSame($this->etag(), $mock->requests[2]['request']->getHeaderLine('If-Range'));
    }

    public function testStartsOverWhenTheFileChanged(): void
    {
        file_put_contents($this->path, 'something else entirely');
        $mock = new Mock([new Response(200, ['ETag' => $this->etag(), 'Content-Length' => '5000'], $this->bytes)]);
        $result = $mock->client->download($this->file, $this->path);
        self::assertSame(0, $result->resumed_from);
        self::assertSame($this->bytes, file_get_contents($this->path));
    }

    public function testIntegrityExceptionAfterResumingAForeignPartialFile(): void
    {
        file_put_contents($this->path, str_repeat('x', 1200));
        $mock = new Mock([$this->partial(1200)]);
        try {
            $mock->client->download($this->file, $this->path);
            self::fail('no exception');
        } catch (IntegrityException $e) {
            self::assertStringContainsString("'resume' => false", $e->getMessage());
            self::assertSame(hash('sha256', $this->bytes), $e->getExpected());
        }
        // Without resume the file is downloaded whole.
        $mock = new Mock([new Response(200, ['ETag' => $this->etag()], $this->bytes)]);
        $result = $mock->client->download($this->file, $this->path, ['resume' => false]);
        self::assertSame($this->bytes, file_get_contents($this->path));
        self::assertSame('', $mock->requests[0]['request']->getHeaderLine('Range'));
        self::assertSame(0, $result->resumed_from);
    }

    public function testToAStreamAndErrors(): void
    {
        $mock = new Mock([new Response(200, ['ETag' => $this->etag()], $this->bytes), Mock::error(404, 'not_found', 'No file behind this link.')]);
        $out = fopen('php://memory', 'w+b');
        $mock->client->download($this->file, $out);
        rewind($out);
        self::assertSame($this->bytes, stream_get_contents($out));
        $this->expectException(NotFoundException::class);
        $this->expectExceptionMessage('No file behind this link.');
        $mock->client->download($this->file, $this->path);
    }

    public function testEtagMismatch(): void
    {
        $mock = new Mock([new Response(200, ['ETag' => $this->etag()], 'tampered')]);
        $this->expectException(IntegrityException::class);
        $mock->client->download($this->file->public_link, $this->path);
    }
}
