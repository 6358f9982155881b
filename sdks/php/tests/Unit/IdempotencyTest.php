<?php

declare(strict_types=1);

namespace Fileshare\Tests\Unit;

use Fileshare\Exception\BadRequestException;
use Fileshare\Exception\FileshareException;
use Fileshare\Exception\IntegrityException;
use Fileshare\Tests\Support\Mock;
use Fileshare\UploadSource;
use GuzzleHttp\Psr7\Response;
use PHPUnit\Framework\TestCase;

/** Idempotency keys on uploads: one per call, on every attempt, and what a replayed answer means. */
final class IdempotencyTest extends TestCase
{
    private const UUID4 = '/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/';
    private const UPLOAD = 'https://files.test/api/v1/uploads/abc';

    private static function stored(string $bytes, array $headers = []): Response
    {
        return Mock::json(201, ['success' => true] + Mock::file($bytes, 5), $headers);
    }

    /** @return list<string> the Idempotency-Key of each request ('' where none) */
    private static function keys(Mock $mock): array
    {
        return array_map(static fn (array $r): string => $r['request']->getHeaderLine('Idempotency-Key'), $mock->requests);
    }

    /** @return list<string> */
    private static function methods(Mock $mock): array
    {
        return array_map(static fn (array $r): string => $r['request']->getMethod(), $mock->requests);
    }

    public function testAMultipartUploadSendsOneKeyOnEveryAttempt(): void
    {
        $bytes = random_bytes(3000);
        // The answer to the first attempt is lost, the second finds the first still running, the third gets the stored answer.
        $mock = new Mock([Mock::drop(), Mock::error(409, 'idempotency_in_progress', 'x', ['Retry-After' => '1']), Mock::error(502, 'bad_gateway'),
            self::stored($bytes, ['Idempotent-Replayed' => 'true'])], ['max_retries' => 3]);
        $file = $mock->client->files->upload(UploadSource::fromBytes($bytes));
        self::assertSame(5, $file->file_id);
        $keys = self::keys($mock);
        self::assertCount(4, $keys);
        self::assertMatchesRegularExpression(self::UUID4, $keys[0]);
        self::assertSame(array_fill(0, 4, $keys[0]), $keys);
        self::assertSame(array_fill(0, 4, $mock->requests[0]['body']), array_column($mock->requests, 'body'));
        self::assertSame([0.25, 1.0, 1.0], $mock->sleeps);

        // Each call has its own key.
        $mock = new Mock([self::stored('a'), self::stored('a')]);
        $mock->client->files->upload(UploadSource::fromBytes('a'));
        $mock->client->files->upload(UploadSource::fromBytes('a'));
        [$first, $second] = self::keys($mock);
        self::assertMatchesRegularExpression(self::UUID4, $second);
        self::assertNotSame($first, $second);
    }

    public function testTheCallersKeyAndItsLimits(): void
    {
        $key = str_repeat('~', 209) . ' !"#$%&\'()*+,-./0123456789:;<=>?@AZ[\\]^_`az{|}';
        self::assertSame(255, \strlen($key));
        $mock = new Mock([self::stored('a'), self::stored('a')]);
        $mock->client->files->upload(UploadSource::fromBytes('a'), ['idempotency_key' => $key]);
        $mock->client->files->upload(UploadSource::fromBytes('a'), ['idempotency_key' => 'x']);
        self::assertSame([$key, 'x'], self::keys($mock));
    }

    public function testInProgressCountsAgainstTheRetriesAndAReusedKeyIsNotRetried(): void
    {
        $busy = static fn (): Response => Mock::error(409, 'idempotency_in_progress', 'A request with this key is running.', ['Retry-After' => '1']);
        $mock = new Mock([$busy(), $busy(), $busy(), self::stored('a')]);
        try {
            $mock->client->files->upload(UploadSource::fromBytes('a'));
            self::fail('no exception');
        } catch (BadRequestException $e) {
            self::assertSame(409, $e->getStatus());
            self::assertSame('idempotency_in_progress', $e->getErrorCode());
        }
        self::assertCount(3, $mock->requests);
        self::assertSame([1.0, 1.0], $mock->sleeps);

        $mock = new Mock([Mock::error(422, 'idempotency_key_reused'), self::stored('a')]);
        try {
            $mock->client->files->upload(UploadSource::fromBytes('a'), ['idempotency_key' => 'k']);
            self::fail('no exception');
        } catch (BadRequestException $e) {
            self::assertSame(422, $e->getStatus());
            self::assertSame('idempotency_key_reused', $e->getErrorCode());
        }
        self::assertCount(1, $mock->requests);
    }

    public function testAOneShotStreamIsNotSentAgainEvenWithAKey(): void
    {
        $pipe = popen('printf abc', 'r');
        $mock = new Mock([Mock::drop(), self::stored('abc')]);
        try {
            $mock->client->files->upload($pipe, ['filename' => 'p.bin']);
            self::fail('no exception');
        } catch (FileshareException) {
        } finally {
            pclose($pipe);
        }
        self::assertCount(1, $mock->requests);
        self::assertMatchesRegularExpression(self::UUID4, self::keys($mock)[0]);
    }

    public function testAReplayedAnswerForOtherBytesIsAnIntegrityExceptionNamingTheKey(): void
    {
        $mock = new Mock([self::stored('other', ['Idempotent-Replayed' => 'true'])]);
        try {
            $mock->client->files->upload(UploadSource::fromBytes('these'), ['idempotency_key' => 'nightly-2026-11-27']);
            self::fail('no exception');
        } catch (IntegrityException $e) {
            self::assertSame(hash('sha256', 'other'), $e->getExpected());
            self::assertSame(hash('sha256', 'these'), $e->getActual());
            self::assertStringContainsString('idempotency key "nightly-2026-11-27"', $e->getMessage());
        }
    }

    public function testAReplayAnsweredBeforeTheBodyWasSentStillChecksTheWholeSource(): void
    {
        // The server answers a replay at once (`Expect: 100-continue`): the transport reads none of the body.
        $bytes = random_bytes(3 * 1024 * 1024 + 5);
        $answer = self::stored($bytes, ['Idempotent-Replayed' => 'true']);
        $client = static fn (Response $answer): \Fileshare\Client => new \Fileshare\Client(['base_url' => Mock::BASE, 'api_key' => Mock::KEY,
            'http_client' => new \GuzzleHttp\Client(['handler' => static fn () => \GuzzleHttp\Promise\Create::promiseFor($answer)])]);
        $progress = [];
        $file = $client($answer)->files->upload(UploadSource::fromBytes($bytes), ['on_progress' => function (int $sent, ?int $total) use (&$progress): void {
            $progress[] = [$sent, $total];
        }]);
        self::assertSame(5, $file->file_id);
        self::assertSame([[0, \strlen($bytes)], [\strlen($bytes), \strlen($bytes)]], $progress, 'nothing reported as sent but the end');

        // A pipe is read to its end for the check; other bytes are an IntegrityException.
        $pipe = popen('head -c 100000 /dev/zero', 'r');
        try {
            $client($answer)->files->upload($pipe, ['idempotency_key' => 'k']);
            self::fail('no exception');
        } catch (IntegrityException $e) {
            self::assertSame(hash('sha256', str_repeat("\0", 100_000)), $e->getActual());
        } finally {
            pclose($pipe);
        }
    }

    private static function tusOptions(): Response
    {
        return new Response(204, ['Tus-Version' => '1.0.0', 'Tus-Extension' => 'creation,creation-defer-length,termination,checksum',
            'Tus-Checksum-Algorithm' => 'sha256']);
    }

    private static function tusCreated(bool $replayed = false): Response
    {
        return new Response(201, ['Tus-Resumable' => '1.0.0', 'Location' => '/api/v1/uploads/abc', 'Upload-Offset' => '0']
            + ($replayed ? ['Idempotent-Replayed' => 'true'] : []));
    }

    private static function standsAt(int $offset, ?int $fileId = null): Response
    {
        return new Response($fileId === null ? 204 : 200, ['Upload-Offset' => (string) $offset] + ($fileId ? ['Fileshare-File-Id' => (string) $fileId] : []));
    }

    private static function done(string $bytes): Response
    {
        return Mock::json(200, ['success' => true, 'upload' => ['offset' => \strlen($bytes), 'length' => \strlen($bytes), 'file' => Mock::file($bytes, 9)]]);
    }

    public function testTheTusCreationCarriesTheKeyOnEveryAttemptAndTheChunksNone(): void
    {
        $bytes = random_bytes(1500);
        $mock = new Mock([self::tusOptions(), Mock::drop(), self::tusCreated(), self::standsAt(1000), self::standsAt(1500, 9), self::done($bytes)],
            ['chunk_size' => 1000]);
        $mock->client->files->upload(UploadSource::fromBytes($bytes), ['resumable' => true, 'idempotency_key' => 'tus-key']);
        self::assertSame(['OPTIONS', 'POST', 'POST', 'PATCH', 'PATCH', 'GET'], self::methods($mock));
        self::assertSame(['', 'tus-key', 'tus-key', '', '', ''], self::keys($mock));
    }

    public function testAReplayedTusCreationCarriesOnWhereTheUploadStands(): void
    {
        // The key's first use sent the first chunk: the SDK asks (HEAD) and sends the rest only.
        $bytes = random_bytes(2500);
        $mock = new Mock([self::tusOptions(), self::tusCreated(true), self::standsAt(1000), self::standsAt(2000), self::standsAt(2500, 9), self::done($bytes)],
            ['chunk_size' => 1000]);
        $progress = [];
        $file = $mock->client->files->upload(UploadSource::fromBytes($bytes), ['resumable' => true, 'on_progress' => function (int $s) use (&$progress): void {
            $progress[] = $s;
        }]);
        self::assertSame(9, $file->file_id);
        self::assertSame(['OPTIONS', 'POST', 'HEAD', 'PATCH', 'PATCH', 'GET'], self::methods($mock));
        self::assertSame(self::UPLOAD, (string) $mock->requests[2]['request']->getUri());
        self::assertSame('1000', $mock->requests[3]['request']->getHeaderLine('Upload-Offset'));
        self::assertSame(substr($bytes, 1000, 1000), $mock->requests[3]['body']);
        self::assertSame(substr($bytes, 2000), $mock->requests[4]['body']);
        self::assertSame(1000, $progress[0]);
        self::assertSame(2500, end($progress));

        // The same from a pipe (read once): the first 1000 bytes are read and hashed, not sent.
        $pipe = popen('head -c 2500 /dev/zero', 'r');
        $zeros = str_repeat("\0", 2500);
        $mock = new Mock([self::tusOptions(), self::tusCreated(true), self::standsAt(1000), self::standsAt(2000), self::standsAt(2500, 9), self::done($zeros)],
            ['chunk_size' => 1000]);
        $mock->client->files->upload($pipe, ['resumable' => true]);
        pclose($pipe);
        self::assertSame(['OPTIONS', 'POST', 'HEAD', 'PATCH', 'PATCH', 'GET'], self::methods($mock));
        self::assertSame(str_repeat("\0", 1000), $mock->requests[3]['body']);
        self::assertSame(str_repeat("\0", 500), $mock->requests[4]['body']);
        self::assertSame('2500', $mock->requests[4]['request']->getHeaderLine('Upload-Length'), 'the deferred length, on the last chunk');
    }

    public function testAReplayedTusCreationOfACompleteUploadSendsNothing(): void
    {
        $bytes = random_bytes(2500);
        $mock = new Mock([self::tusOptions(), self::tusCreated(true), self::standsAt(2500, 9), self::done($bytes)], ['chunk_size' => 1000]);
        self::assertSame(9, $mock->client->files->upload(UploadSource::fromBytes($bytes), ['resumable' => true])->file_id);
        self::assertSame(['OPTIONS', 'POST', 'HEAD', 'GET'], self::methods($mock));

        // Other bytes of the same length under the same key: the SHA-256 tells.
        $mock = new Mock([self::tusOptions(), self::tusCreated(true), self::standsAt(2500, 9), self::done($bytes)], ['chunk_size' => 1000]);
        try {
            $mock->client->files->upload(UploadSource::fromBytes(random_bytes(2500)), ['resumable' => true, 'idempotency_key' => 'same']);
            self::fail('no exception');
        } catch (IntegrityException $e) {
            self::assertStringContainsString('idempotency key "same"', $e->getMessage());
        }

        // A stream of unknown length with more bytes than the upload the key made.
        $pipe = popen('head -c 3000 /dev/zero', 'r');
        $mock = new Mock([self::tusOptions(), self::tusCreated(true), self::standsAt(2500, 9), new Response(204)], ['chunk_size' => 1000]);
        try {
            $mock->client->files->upload($pipe, ['resumable' => true]);
            self::fail('no exception');
        } catch (FileshareException $e) {
            self::assertStringContainsString('the source holds more', $e->getMessage());
        } finally {
            pclose($pipe);
        }
    }

    public function testAResumableUploadWithTheCallersKeyIsKeptForTheNextCallUnlessRefused(): void
    {
        $bytes = random_bytes(2500);
        // The connection fails for good on the second chunk: the upload is kept (no DELETE) ...
        $mock = new Mock([self::tusOptions(), self::tusCreated(), self::standsAt(1000), Mock::drop(), self::standsAt(1000), Mock::drop()],
            ['chunk_size' => 1000, 'max_retries' => 1]);
        try {
            $mock->client->files->upload(UploadSource::fromBytes($bytes), ['resumable' => true, 'idempotency_key' => 'mine']);
            self::fail('no exception');
        } catch (FileshareException) {
        }
        self::assertSame(['OPTIONS', 'POST', 'PATCH', 'PATCH', 'HEAD', 'PATCH'], self::methods($mock));

        // ... and the next call with the key continues it where it stands.
        $mock = new Mock([self::tusOptions(), self::tusCreated(true), self::standsAt(1000), self::standsAt(2000), self::standsAt(2500, 9),
            self::done($bytes)], ['chunk_size' => 1000]);
        self::assertSame(9, $mock->client->files->upload(UploadSource::fromBytes($bytes), ['resumable' => true, 'idempotency_key' => 'mine'])->file_id);
        self::assertSame(['OPTIONS', 'POST', 'HEAD', 'PATCH', 'PATCH', 'GET'], self::methods($mock));

        // Refused for good (a 403 on a chunk): deleted, key or not.
        $mock = new Mock([self::tusOptions(), self::tusCreated(), Mock::error(403, 'storage_quota_exceeded'), new Response(204)], ['chunk_size' => 1000]);
        try {
            $mock->client->files->upload(UploadSource::fromBytes($bytes), ['resumable' => true, 'idempotency_key' => 'mine-too']);
            self::fail('no exception');
        } catch (FileshareException $e) {
            self::assertSame('storage_quota_exceeded', $e->getErrorCode());
        }
        self::assertSame(['OPTIONS', 'POST', 'PATCH', 'DELETE'], self::methods($mock));
    }
}
