<?php

declare(strict_types=1);

namespace Fileshare\Tests\Unit;

use Fileshare\Exception\ConfigurationException;
use Fileshare\Exception\FileshareException;
use Fileshare\Exception\IntegrityException;
use Fileshare\Tests\Support\Mock;
use Fileshare\UploadSource;
use GuzzleHttp\Psr7\Response;
use GuzzleHttp\Psr7\Utils;
use PHPUnit\Framework\TestCase;
use Psr\Http\Message\RequestInterface;

final class UploadTest extends TestCase
{
    private string $dir;

    protected function setUp(): void
    {
        $this->dir = sys_get_temp_dir() . '/fileshare-php-unit-' . bin2hex(random_bytes(4));
        mkdir($this->dir);
    }

    protected function tearDown(): void
    {
        array_map('unlink', glob($this->dir . '/*') ?: []);
        rmdir($this->dir);
    }

    private function created(string $bytes, ?string $sha = null): Response
    {
        return Mock::json(201, ['success' => true] + Mock::file($bytes, 5, 'x.bin', $sha), ['Location' => '/api/v1/files/5']);
    }

    public function testMultipartFromAPathWithProgressAndSha256(): void
    {
        $bytes = random_bytes(300_000);
        file_put_contents("$this->dir/photo \"1\".jpg", $bytes);
        $mock = new Mock([$this->created($bytes)]);
        $progress = [];
        $file = $mock->client->files->upload("$this->dir/photo \"1\".jpg", ['on_progress' => function (int $sent, ?int $total) use (&$progress): void {
            $progress[] = [$sent, $total];
        }]);
        self::assertSame(5, $file->file_id);
        $request = $mock->requests[0]['request'];
        self::assertSame('POST', $request->getMethod());
        self::assertSame(Mock::BASE . '/files/upload', (string) $request->getUri());
        self::assertMatchesRegularExpression('#^multipart/form-data; boundary=(----fileshare-sdk-php-[0-9a-f]{32})$#', $request->getHeaderLine('Content-Type'));
        $boundary = substr($request->getHeaderLine('Content-Type'), \strlen('multipart/form-data; boundary='));
        $expected = "--$boundary\r\nContent-Disposition: form-data; name=\"file\"; filename=\"photo %221%22.jpg\"\r\nContent-Type: application/octet-stream\r\n\r\n"
            . $bytes . "\r\n--$boundary--\r\n";
        self::assertSame($expected, $mock->requests[0]['body']);
        self::assertSame((string) \strlen($expected), $request->getHeaderLine('Content-Length'));
        self::assertSame([0, 300_000], $progress[0]);
        self::assertSame([300_000, 300_000], end($progress));
        $sent = array_column($progress, 0);
        $sorted = $sent;
        sort($sorted);
        self::assertSame($sorted, $sent, 'progress never goes back');
    }

    public function testIntegrityExceptionWhenTheServerStoredOtherBytes(): void
    {
        $bytes = 'the bytes';
        $mock = new Mock([$this->created($bytes, str_repeat('0', 64))]);
        try {
            $mock->client->files->upload(UploadSource::fromBytes($bytes));
            self::fail('no exception');
        } catch (IntegrityException $e) {
            self::assertSame(str_repeat('0', 64), $e->getExpected());
            self::assertSame(hash('sha256', $bytes), $e->getActual());
        }
        self::assertStringContainsString('filename="file"', $mock->requests[0]['body']);
    }

    public function testStreamsResourcesAndPsr7(): void
    {
        $bytes = str_repeat('abc', 10_000);
        // A seekable resource is read from its current position.
        $handle = fopen('php://temp', 'w+b');
        fwrite($handle, 'SKIP' . $bytes);
        fseek($handle, 4);
        $mock = new Mock([$this->created($bytes)]);
        $mock->client->files->upload($handle, ['filename' => 'r.txt', 'content_type' => 'text/plain']);
        self::assertStringContainsString("filename=\"r.txt\"\r\nContent-Type: text/plain\r\n\r\n$bytes\r\n", $mock->requests[0]['body']);
        self::assertSame((string) \strlen($mock->requests[0]['body']), $mock->requests[0]['request']->getHeaderLine('Content-Length'));

        // A PSR-7 stream.
        $mock = new Mock([$this->created($bytes)]);
        $mock->client->files->upload(Utils::streamFor($bytes));
        self::assertStringContainsString("\r\n\r\n$bytes\r\n", $mock->requests[0]['body']);

        // A pipe: unknown length, sent chunked.
        $pipe = popen('printf hello', 'r');
        $mock = new Mock([$this->created('hello')]);
        $progress = [];
        $mock->client->files->upload($pipe, ['on_progress' => function (int $sent, ?int $total) use (&$progress): void {
            $progress[] = [$sent, $total];
        }]);
        pclose($pipe);
        self::assertSame('', $mock->requests[0]['request']->getHeaderLine('Content-Length'));
        self::assertSame([0, null], $progress[0]);
        self::assertSame([5, 5], end($progress));
    }

    public function testExpiresInIsSentAsAHeader(): void
    {
        $mock = new Mock([$this->created('abc')]);
        $mock->client->files->upload(UploadSource::fromBytes('abc'), ['expires_in' => 86_400]);
        self::assertSame('86400', $mock->requests[0]['request']->getHeaderLine('Fileshare-Expires-In'));

        $mock = new Mock([$this->created('abc')]);
        $mock->client->files->upload(UploadSource::fromBytes('abc'));
        self::assertFalse($mock->requests[0]['request']->hasHeader('Fileshare-Expires-In'));
    }

    public function testUnsupportedSourcesAndOptions(): void
    {
        $mock = new Mock([]);
        foreach ([fn () => $mock->client->files->upload("$this->dir/missing.bin"), fn () => $mock->client->files->upload(42),
            fn () => $mock->client->files->upload(UploadSource::fromBytes('x'), ['chunkSize' => 1])] as $call) {
            try {
                $call();
                self::fail('no exception');
            } catch (ConfigurationException) {
                self::addToAssertionCount(1);
            }
        }
        self::assertSame([], $mock->requests);
    }

    public function testASourceThatEndsShortIsNotANetworkError(): void
    {
        file_put_contents("$this->dir/short.bin", 'abc');
        $handle = fopen("$this->dir/short.bin", 'rb');
        $mock = new Mock([static function (RequestInterface $request) {
            return new Response(400, [], '{"success":false,"error":{"code":"invalid_request","message":"truncated"}}');
        }]);
        $this->expectException(FileshareException::class);
        $this->expectExceptionMessage('the upload source ended after 3 of its 10 bytes');
        $mock->client->files->upload($handle, ['size' => 10]);
    }
}
