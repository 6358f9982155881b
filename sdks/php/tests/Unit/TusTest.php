<?php

declare(strict_types=1);

namespace Fileshare\Tests\Unit;

use Fileshare\Exception\ConfigurationException;
use Fileshare\Exception\IntegrityException;
use Fileshare\Exception\LimitExceededException;
use Fileshare\Tests\Support\Mock;
use Fileshare\UploadSource;
use GuzzleHttp\Psr7\Response;
use PHPUnit\Framework\TestCase;
use Psr\Http\Message\RequestInterface;

final class TusTest extends TestCase
{
    private const UPLOAD = 'https://files.test/api/v1/uploads/abc';

    private static function options(): Response
    {
        return new Response(204, ['Tus-Version' => '1.0.0', 'Tus-Extension' => 'creation,creation-with-upload,creation-defer-length,termination,expiration,checksum',
            'Tus-Checksum-Algorithm' => 'sha1,sha256', 'Tus-Max-Size' => '53687091200']);
    }

    private static function created(): Response
    {
        return new Response(201, ['Tus-Resumable' => '1.0.0', 'Location' => '/api/v1/uploads/abc', 'Upload-Offset' => '0']);
    }

    private static function patched(int $offset, ?int $fileId = null): Response
    {
        return new Response(204, ['Upload-Offset' => (string) $offset] + ($fileId ? ['Fileshare-File-Id' => (string) $fileId] : []));
    }

    private static function done(string $bytes, ?string $sha = null): Response
    {
        return Mock::json(200, ['success' => true, 'upload' => ['offset' => \strlen($bytes), 'length' => \strlen($bytes), 'file' => Mock::file($bytes, 9, 'big.bin', $sha)]]);
    }

    public function testChunksWithChecksumsAndResumeAfterADrop(): void
    {
        $bytes = random_bytes(2500);
        $mock = new Mock([
            self::options(),
            self::created(),
            self::patched(1000),
            Mock::drop(),                      // second chunk: connection lost
            self::patched(1000),               // HEAD: the server has 1000 bytes
            self::patched(2000),
            self::patched(2500, 9),
            self::done($bytes),
        ], ['resumable_threshold' => 2000, 'chunk_size' => 1000]);
        $progress = [];
        $file = $mock->client->files->upload(UploadSource::fromBytes($bytes, 'big.bin'), ['on_progress' => function (int $s, ?int $t) use (&$progress): void {
            $progress[] = [$s, $t];
        }]);
        self::assertSame(9, $file->file_id);
        $methods = array_map(static fn (array $r): string => $r['request']->getMethod(), $mock->requests);
        self::assertSame(['OPTIONS', 'POST', 'PATCH', 'PATCH', 'HEAD', 'PATCH', 'PATCH', 'GET'], $methods);
        $post = $mock->requests[1]['request'];
        self::assertSame('2500', $post->getHeaderLine('Upload-Length'));
        self::assertSame('1.0.0', $post->getHeaderLine('Tus-Resumable'));
        self::assertSame('filename ' . base64_encode('big.bin'), $post->getHeaderLine('Upload-Metadata'));
        self::assertSame('', $mock->requests[0]['request']->getHeaderLine('Authorization'), 'OPTIONS needs no key');
        foreach ([[2, 0], [3, 1000], [5, 1000], [6, 2000]] as [$i, $offset]) {
            $patch = $mock->requests[$i]['request'];
            $chunk = substr($bytes, $offset, 1000);
            self::assertSame(self::UPLOAD, (string) $patch->getUri());
            self::assertSame((string) $offset, $patch->getHeaderLine('Upload-Offset'));
            self::assertSame('application/offset+octet-stream', $patch->getHeaderLine('Content-Type'));
            self::assertSame('sha256 ' . base64_encode(hash('sha256', $chunk, true)), $patch->getHeaderLine('Upload-Checksum'));
            self::assertSame($chunk, $mock->requests[$i]['body']);
        }
        self::assertSame([2500, 2500], end($progress));
        self::assertCount(1, $mock->sleeps);
    }

    public function testAStreamOfUnknownLengthDefersItAndKeepsWhatACutChunkKept(): void
    {
        $bytes = str_repeat('0123456789', 250); // 2500
        $pipe = popen('printf ' . escapeshellarg($bytes), 'r');
        $mock = new Mock([
            self::options(),
            self::created(),
            self::patched(600),               // no checksum: the server kept part of the chunk
            self::patched(1600),
            self::patched(2500, 9),
            self::done($bytes),
        ], ['chunk_size' => 1000]);
        $file = $mock->client->files->upload($pipe, ['resumable' => true, 'filename' => 'big.bin']);
        pclose($pipe);
        self::assertSame(9, $file->file_id);
        self::assertSame('1', $mock->requests[1]['request']->getHeaderLine('Upload-Defer-Length'));
        self::assertSame('', $mock->requests[1]['request']->getHeaderLine('Upload-Length'));
        self::assertSame(substr($bytes, 600, 1000), $mock->requests[3]['body']);
        self::assertSame(substr($bytes, 1600), $mock->requests[4]['body']);
        self::assertSame('2500', $mock->requests[4]['request']->getHeaderLine('Upload-Length'), 'the last chunk declares the length');
    }

    public function testExpiresInGoesOnTheCreationPostOnly(): void
    {
        $mock = new Mock([self::options(), self::created(), self::patched(3, 9), self::done('abc')]);
        $mock->client->files->upload(UploadSource::fromBytes('abc'), ['resumable' => true, 'expires_in' => 3600]);
        self::assertSame('POST', $mock->requests[1]['request']->getMethod());
        self::assertSame('3600', $mock->requests[1]['request']->getHeaderLine('Fileshare-Expires-In'));
        self::assertFalse($mock->requests[2]['request']->hasHeader('Fileshare-Expires-In'), 'not on the chunks');
    }

    public function testAFailedUploadIsDeletedAndLimitsAreLimitExceeded(): void
    {
        $mock = new Mock([self::options(), Mock::error(413, 'file_too_large')]);
        $this->expectException(LimitExceededException::class);
        try {
            $mock->client->files->upload(UploadSource::fromBytes('abc'), ['resumable' => true]);
        } finally {
            self::assertCount(2, $mock->requests);
        }
    }

    public function testGivesUpAfterTheRetriesAndDeletesTheUpload(): void
    {
        $mock = new Mock([self::options(), self::created(), Mock::drop(), self::patched(0), Mock::drop(), self::patched(0), Mock::drop(),
            new Response(204)], ['chunk_size' => 1000]);
        try {
            $mock->client->files->upload(UploadSource::fromBytes('abc'), ['resumable' => true]);
            self::fail('no exception');
        } catch (\Fileshare\Exception\APIConnectionException) {
        }
        $last = end($mock->requests)['request'];
        self::assertSame('DELETE', $last->getMethod());
        self::assertSame(self::UPLOAD, (string) $last->getUri());
    }

    public function testIntegrityExceptionWhenTheWholeFileDiffers(): void
    {
        $mock = new Mock([self::options(), self::created(), self::patched(3, 9), self::done('abc', str_repeat('f', 64))]);
        $this->expectException(IntegrityException::class);
        $mock->client->files->upload(UploadSource::fromBytes('abc'), ['resumable' => true]);
    }

    public function testResumableTrueNeedsTheServerToOfferIt(): void
    {
        $mock = new Mock([new Response(404, [], '{}')]);
        $this->expectException(ConfigurationException::class);
        $mock->client->files->upload(UploadSource::fromBytes('abc'), ['resumable' => true]);
    }

    public function testLargeSourcesGoMultipartWhenTheServerHasNoTus(): void
    {
        $mock = new Mock([new Response(404, [], '{}'), static fn (RequestInterface $r) => Mock::json(201, ['success' => true] + Mock::file('abcd'))],
            ['resumable_threshold' => 3]);
        $mock->client->files->upload(UploadSource::fromBytes('abcd'));
        self::assertSame(['OPTIONS', 'POST'], array_map(static fn (array $r): string => $r['request']->getMethod(), $mock->requests));
        self::assertSame(Mock::BASE . '/files/upload', (string) $mock->requests[1]['request']->getUri());
    }

    public function testAnUnansweredOptionsIsAskedAgain(): void
    {
        $mock = new Mock([Mock::drop(), self::options(), self::created(), self::patched(3, 9), self::done('abc')]);
        self::assertFalse($mock->client->resumableUploads()['available']);
        $file = $mock->client->files->upload(UploadSource::fromBytes('abc'), ['resumable' => true]);
        self::assertSame(9, $file->file_id);
        self::assertTrue($mock->client->resumableUploads()['available']);
        self::assertSame(['OPTIONS', 'OPTIONS', 'POST', 'PATCH', 'GET'], array_map(static fn (array $r): string => $r['request']->getMethod(), $mock->requests));
    }

    public function testOnUploadCreatedGetsTheUrlBeforeAnyByte(): void
    {
        $bytes = random_bytes(2000);
        $mock = new Mock([self::options(), self::created(), self::patched(1000), self::patched(2000, 9), self::done($bytes)], ['chunk_size' => 1000]);
        $seen = [];
        $mock->client->files->upload(UploadSource::fromBytes($bytes), ['resumable' => true, 'on_upload_created' => static function (string $url) use (&$seen, $mock): void {
            $seen[] = [$url, \count($mock->requests)];
        }]);
        self::assertSame([[self::UPLOAD, 2]], $seen, 'called once, after the POST and before the first PATCH');
    }

    public function testUploadUrlContinuesFromWhereTheUploadStands(): void
    {
        $bytes = random_bytes(2500);
        $mock = new Mock([self::options(), new Response(200, ['Upload-Offset' => '1000', 'Upload-Length' => '2500', 'Tus-Resumable' => '1.0.0']),
            self::patched(2000), self::patched(2500, 9), self::done($bytes)], ['chunk_size' => 1000]);
        $file = $mock->client->files->upload(UploadSource::fromBytes($bytes), ['upload_url' => self::UPLOAD]);
        self::assertSame(9, $file->file_id);
        self::assertSame(['OPTIONS', 'HEAD', 'PATCH', 'PATCH', 'GET'], array_map(static fn (array $r): string => $r['request']->getMethod(), $mock->requests));
        self::assertSame('1000', $mock->requests[2]['request']->getHeaderLine('Upload-Offset'));
        self::assertSame(substr($bytes, 1000, 1000), $mock->requests[2]['body']);
        self::assertSame(substr($bytes, 2000), $mock->requests[3]['body']);
    }

    public function testUploadUrlChecksTheLengthAndTheServer(): void
    {
        $mock = new Mock([self::options(), new Response(200, ['Upload-Offset' => '0', 'Upload-Length' => '99'])]);
        try {
            $mock->client->files->upload(UploadSource::fromBytes('abc'), ['upload_url' => self::UPLOAD]);
            self::fail('no exception');
        } catch (ConfigurationException $e) {
            self::assertStringContainsString('99 bytes long', $e->getMessage());
        }
        try {
            $mock->client->files->upload(UploadSource::fromBytes('abc'), ['upload_url' => 'https://elsewhere.test/api/v1/uploads/abc']);
            self::fail('no exception');
        } catch (ConfigurationException $e) {
            self::assertStringContainsString(Mock::BASE . '/uploads/', $e->getMessage(), 'the key goes to this server only');
        }
    }

    public function testKeepOnFailureKeepsTheUploadAndFalseDeletesIt(): void
    {
        $mock = new Mock([self::options(), self::created(), Mock::error(460, 'checksum_mismatch'), self::patched(0), Mock::error(460, 'checksum_mismatch'),
            self::patched(0), Mock::error(460, 'checksum_mismatch')], ['chunk_size' => 1000]);
        try {
            $mock->client->files->upload(UploadSource::fromBytes('abc'), ['resumable' => true, 'keep_on_failure' => true]);
            self::fail('no exception');
        } catch (\Fileshare\Exception\BadRequestException) {
        }
        self::assertNotContains('DELETE', array_map(static fn (array $r): string => $r['request']->getMethod(), $mock->requests));

        // With its own key a connection failure keeps it by default; keep_on_failure false deletes it all the same.
        $mock = new Mock([self::options(), self::created(), Mock::drop(), new Response(204)], ['chunk_size' => 1000, 'max_retries' => 0]);
        try {
            $mock->client->files->upload(UploadSource::fromBytes('abc'), ['resumable' => true, 'idempotency_key' => 'mine-1', 'keep_on_failure' => false]);
            self::fail('no exception');
        } catch (\Fileshare\Exception\APIConnectionException) {
        }
        self::assertSame('DELETE', end($mock->requests)['request']->getMethod());
    }
}
