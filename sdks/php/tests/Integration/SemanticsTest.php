<?php

declare(strict_types=1);

namespace Fileshare\Tests\Integration;

use Fileshare\Client;
use Fileshare\Exception\BadRequestException;
use Fileshare\Exception\ConfigurationException;
use Fileshare\Exception\IntegrityException;
use Fileshare\Exception\LimitExceededException;
use Fileshare\Tests\Support\IntegrationTestCase;
use Fileshare\Tests\Support\Server;
use Fileshare\UploadSource;
use GuzzleHttp\Exception\ConnectException;
use GuzzleHttp\HandlerStack;
use GuzzleHttp\Promise\Create;
use GuzzleHttp\Utils;
use Psr\Http\Message\RequestInterface;
use Psr\Http\Message\ResponseInterface;

/**
 * Safe retries, stable paging and storage quotas against the real server, each test on an account
 * of its own (made with the CLI), so that its counts are its own.
 */
final class SemanticsTest extends IntegrationTestCase
{
    /** @var list<array{request: RequestInterface, response: ?ResponseInterface}> what went out and what came back (also the answers cut) */
    private array $exchanges = [];
    /** The next request of this method whose path ends so gets through to the server, but its answer is cut. */
    private ?array $cut = null;

    /**
     * A client on a new pro account whose transport records every exchange and, for the request
     * $this->cut names, lets it through to the server and then cuts the answer: the server acted,
     * the SDK sees a dropped connection.
     *
     * @param array<string, int|string> $limits set with the CLI before the account's first request (the server
     *                                         caches an account's limits for up to FILESHARE_CACHE_TTL_MS)
     *
     * @return array{Client, int} the client and the account's id
     */
    private function client(array $limits = []): array
    {
        $account = Server::createAccount();
        if ($limits !== []) {
            Server::setLimits($account['account_id'], $limits);
        }
        $real = Utils::chooseHandler();
        $handler = function (RequestInterface $request, array $options) use ($real) {
            $n = \count($this->exchanges);
            $this->exchanges[] = ['request' => $request, 'response' => null];
            $cut = $this->cut !== null && $request->getMethod() === $this->cut[0] && str_ends_with($request->getUri()->getPath(), $this->cut[1]);
            if ($cut) {
                $this->cut = null;
            }

            return $real($request, $options)->then(function (ResponseInterface $response) use ($n, $cut, $request) {
                $this->exchanges[$n]['response'] = $response;

                return $cut ? Create::rejectionFor(new ConnectException('Connection reset by peer (cut by the test)', $request)) : $response;
            });
        };
        $client = Server::client('pro', [
            'api_key' => $account['api_key'],
            'http_client' => new \GuzzleHttp\Client(['handler' => HandlerStack::create($handler)]),
            'chunk_size' => 1 << 20,
        ]);

        return [$client, $account['account_id']];
    }

    /** @return list<array{request: RequestInterface, response: ?ResponseInterface}> the exchanges of $method whose path ends in $suffix */
    private function exchanges(string $method, string $suffix = ''): array
    {
        return array_values(array_filter($this->exchanges, static fn (array $e): bool => $e['request']->getMethod() === $method
            && str_ends_with($e['request']->getUri()->getPath(), $suffix)));
    }

    /** Both attempts carried one key, and the retry got the first (cut) answer again, replayed. */
    private function assertOneKeyAndAReplay(string $method, string $suffix): void
    {
        $attempts = $this->exchanges($method, $suffix);
        self::assertCount(2, $attempts, "$method $suffix: the cut attempt and the retry");
        [$cut, $retry] = $attempts;
        $key = $cut['request']->getHeaderLine('Idempotency-Key');
        self::assertNotSame('', $key);
        self::assertSame($key, $retry['request']->getHeaderLine('Idempotency-Key'));
        self::assertSame($cut['response']?->getStatusCode(), $retry['response']?->getStatusCode());
        self::assertSame('', $cut['response']?->getHeaderLine('Idempotent-Replayed'));
        self::assertSame('true', $retry['response']?->getHeaderLine('Idempotent-Replayed'));
        self::assertSame($cut['response']?->getHeaderLine('Location'), $retry['response']?->getHeaderLine('Location'));
        self::assertSame((string) $cut['response']?->getBody(), (string) $retry['response']?->getBody());
    }

    public function testAMultipartUploadWhoseAnswerIsCutIsStoredOnce(): void
    {
        [$client] = $this->client();
        $this->cut = ['POST', '/files/upload'];
        $path = $this->makeFile('cut.bin', 300_000);
        $file = $client->files->upload($path);
        self::assertSame(hash_file('sha256', $path), $file->sha256);
        $this->assertOneKeyAndAReplay('POST', '/files/upload');
        $first = json_decode((string) $this->exchanges('POST', '/files/upload')[0]['response']?->getBody(), true);
        self::assertSame($first['file_id'] ?? null, $file->file_id, 'the file the cut answer named');

        $list = $client->files->list();
        self::assertSame(1, $list->pagination->total);
        self::assertSame([$file->file_id], array_map(static fn ($f): int => $f->file_id, $list->files));
        $stats = $client->stats()->stats;
        self::assertSame(1, $stats->uploads_today);
        self::assertSame(1, $stats->total_files);
        self::assertSame(300_000, $stats->total_size);
    }

    public function testAResumableUploadWhoseCreationAnswerIsCutIsCreatedOnce(): void
    {
        [$client] = $this->client();
        $this->cut = ['POST', '/uploads'];
        $path = $this->makeFile('cut-tus.bin', 2 * 1024 * 1024 + 5);
        $file = $client->files->upload($path, ['resumable' => true]);
        self::assertSame(hash_file('sha256', $path), $file->sha256);
        $this->assertOneKeyAndAReplay('POST', '/uploads');
        [$cut, $retry] = $this->exchanges('POST', '/uploads');
        foreach (['Upload-Offset', 'Tus-Resumable'] as $header) {
            self::assertNotSame('', $retry['response']?->getHeaderLine($header), $header);
            self::assertSame($cut['response']?->getHeaderLine($header), $retry['response']?->getHeaderLine($header), $header);
        }
        self::assertCount(3, $this->exchanges('PATCH'), 'three chunks, each sent once');
        foreach ($this->exchanges('PATCH') as $patch) {
            self::assertFalse($patch['request']->hasHeader('Idempotency-Key'), 'chunks carry no key');
        }

        self::assertSame(1, $client->files->list()->pagination->total);
        $stats = $client->stats()->stats;
        self::assertSame(1, $stats->uploads_today);
        self::assertSame(0, $stats->storage_reserved, 'nothing stays reserved once the upload is done');
    }

    public function testALinkWhoseAnswerIsCutIsCreatedOnce(): void
    {
        [$client] = $this->client();
        $file = $client->files->upload(UploadSource::fromBytes('linked'), ['filename' => 'linked.txt']);
        $this->cut = ['POST', '/links'];
        $link = $client->links->create($file, ['label' => 'once']);
        $this->assertOneKeyAndAReplay('POST', '/links');
        $links = $client->links->list($file);
        self::assertCount(2, $links, 'the default link and one more');
        self::assertSame($link->link_id, $links[1]->link_id);
    }

    public function testTheSameKeyTwiceGivesTheFirstAnswer(): void
    {
        [$client] = $this->client();
        $first = $client->files->upload(UploadSource::fromBytes('nightly backup'), ['filename' => 'backup.txt', 'idempotency_key' => 'nightly-1']);
        $again = $client->files->upload(UploadSource::fromBytes('nightly backup'), ['filename' => 'backup.txt', 'idempotency_key' => 'nightly-1']);
        self::assertSame($first->file_id, $again->file_id);
        self::assertEquals($first, $again);
        self::assertSame(1, $client->stats()->stats->uploads_today);
        self::assertSame(1, $client->files->list()->pagination->total);

        // Another file under the same key: refused, not retried, nothing stored.
        try {
            $client->files->upload(UploadSource::fromBytes('another file, longer'), ['filename' => 'other.txt', 'idempotency_key' => 'nightly-1']);
            self::fail('no exception');
        } catch (BadRequestException $e) {
            self::assertSame(422, $e->getStatus());
            self::assertSame('idempotency_key_reused', $e->getErrorCode());
        }
        // Other bytes of the same length: the server cannot tell, the SHA-256 does.
        try {
            $client->files->upload(UploadSource::fromBytes('NIGHTLY BACKUP'), ['filename' => 'backup.txt', 'idempotency_key' => 'nightly-1']);
            self::fail('no exception');
        } catch (IntegrityException $e) {
            self::assertSame($first->sha256, $e->getExpected());
            self::assertStringContainsString('nightly-1', $e->getMessage());
        }
        self::assertSame(1, $client->files->list()->pagination->total);

        // A resumable upload of several chunks, twice with one key: the second sends no chunk.
        $path = $this->makeFile('twice.bin', 3 * 1024 * 1024 + 1);
        $tus = $client->files->upload($path, ['resumable' => true, 'idempotency_key' => 'tus-twice']);
        $patches = \count($this->exchanges('PATCH'));
        $tusAgain = $client->files->upload($path, ['resumable' => true, 'idempotency_key' => 'tus-twice']);
        self::assertSame($tus->file_id, $tusAgain->file_id);
        self::assertSame($patches, \count($this->exchanges('PATCH')), 'no chunk sent again');

        // A multipart upload over 1 MiB goes with `Expect: 100-continue`: the server may answer a
        // replay before the body, and the SDK still checks the whole file's SHA-256.
        $big = $this->makeFile('big.bin', 3 * 1024 * 1024);
        $bigFile = $client->files->upload($big, ['resumable' => false, 'idempotency_key' => 'big-twice']);
        self::assertSame($bigFile->file_id, $client->files->upload($big, ['resumable' => false, 'idempotency_key' => 'big-twice'])->file_id);

        // A link, twice with one key.
        $link = $client->links->create($first, ['label' => 'one', 'idempotency_key' => 'link-1']);
        self::assertSame($link->link_id, $client->links->create($first, ['label' => 'one', 'idempotency_key' => 'link-1'])->link_id);
        self::assertCount(2, $client->links->list($first));
        self::assertSame(3, $client->stats()->stats->uploads_today);
        self::assertSame(3, $client->files->list()->pagination->total);
    }

    public function testAnUploadWhoseKeyIsStillRunningWaitsForTheFirstAnswer(): void
    {
        // The first request with the key is sent by hand and held half-way through its body; the
        // SDK's upload with the key gets 409 idempotency_in_progress, and its wait (the `sleep`
        // option) finishes the first request. The SDK's retry then gets the first answer replayed.
        $account = Server::createAccount();
        $bytes = random_bytes(20_000);
        $boundary = '----fileshare-sdk-php-' . str_repeat('0', 32); // as long as the SDK's, so the Content-Length is the same
        $body = "--$boundary\r\nContent-Disposition: form-data; name=\"file\"; filename=\"race.bin\"\r\nContent-Type: application/octet-stream\r\n\r\n"
            . $bytes . "\r\n--$boundary--\r\n";
        $url = parse_url(Server::info()['base_url']);
        $socket = stream_socket_client("tcp://{$url['host']}:{$url['port']}", $errno, $error, 5);
        self::assertIsResource($socket, $error);
        fwrite($socket, "POST {$url['path']}/files/upload HTTP/1.1\r\nHost: {$url['host']}:{$url['port']}\r\nAuthorization: Bearer {$account['api_key']}\r\n"
            . "Idempotency-Key: race-1\r\nContent-Type: multipart/form-data; boundary=$boundary\r\nContent-Length: " . \strlen($body)
            . "\r\nConnection: close\r\n\r\n" . substr($body, 0, 10_000));
        usleep(300_000);

        $first = null;
        $sleeps = [];
        $client = Server::client('pro', ['api_key' => $account['api_key'], 'sleep' => static function (float $seconds) use (&$sleeps, &$first, $socket, $body): void {
            $sleeps[] = $seconds;
            if ($first === null) {
                fwrite($socket, substr($body, 10_000));
                $first = (string) stream_get_contents($socket);
            }
        }]);
        $file = $client->files->upload(UploadSource::fromBytes($bytes), ['filename' => 'race.bin', 'idempotency_key' => 'race-1']);
        fclose($socket);
        self::assertSame([1.0], $sleeps, 'Retry-After: 1, once');
        self::assertStringStartsWith('HTTP/1.1 201', (string) $first);
        $answer = json_decode(substr((string) $first, (int) strpos((string) $first, "\r\n\r\n") + 4), true);
        self::assertSame($answer['file_id'] ?? null, $file->file_id, 'the first request\'s file');
        self::assertSame(hash('sha256', $bytes), $file->sha256);
        self::assertSame(1, $client->files->list()->pagination->total);
        self::assertSame(1, $client->stats()->stats->uploads_today);
    }

    public function testIterateWhileDeletingEveryFileLeavesNone(): void
    {
        [$client] = $this->client();
        for ($i = 0; $i < 250; ++$i) {
            $client->files->upload(UploadSource::fromBytes("file $i"), ['filename' => "f$i.txt"]);
        }
        $seen = [];
        foreach ($client->files->iterate(limit: 100) as $file) {
            $seen[] = $file->file_id;
            $client->files->delete($file);
        }
        self::assertCount(250, $seen);
        self::assertSame(array_unique($seen), $seen);
        $list = $client->files->list();
        self::assertSame(0, $list->pagination->total);
        self::assertSame([], $list->files);
        $requests = array_map(static fn (array $e): string => $e['request']->getUri()->getQuery(), $this->exchanges('GET', '/files'));
        self::assertSame('limit=100', $requests[0]);
        self::assertMatchesRegularExpression('/^limit=100&before_id=\d+$/', $requests[1]);
        self::assertCount(4, $requests, 'three pages, then the check above');
    }

    public function testPagingByBeforeId(): void
    {
        [$client] = $this->client();
        $ids = [];
        for ($i = 0; $i < 5; ++$i) {
            $ids[] = $client->files->upload(UploadSource::fromBytes("p$i"), ['filename' => "p$i.txt"])->file_id;
        }
        rsort($ids);
        $first = $client->files->list(limit: 2);
        self::assertSame(1, $first->pagination->page);
        self::assertSame($ids[1], $first->pagination->next_before_id);
        $second = $client->files->list(limit: 2, beforeId: $first->pagination->next_before_id);
        self::assertNull($second->pagination->page);
        self::assertSame([$ids[2], $ids[3]], array_map(static fn ($f): int => $f->file_id, $second->files));
        self::assertSame(5, $second->pagination->total);
        self::assertSame(3, $second->pagination->pages);
        $last = $client->files->list(limit: 2, beforeId: $second->pagination->next_before_id);
        self::assertSame([$ids[4]], array_map(static fn ($f): int => $f->file_id, $last->files));
        self::assertNull($last->pagination->next_before_id);
        $full = $client->files->list(limit: 5);
        self::assertNull($full->pagination->next_before_id, 'a full page with nothing after it');

        // before_id follows the integer rules; with page, the SDK refuses before sending.
        foreach ([0, -1, 2 ** 53] as $bad) {
            try {
                $client->files->list(beforeId: $bad);
                self::fail("no exception for $bad");
            } catch (BadRequestException $e) {
                self::assertSame(400, $e->getStatus());
                self::assertSame('invalid_parameter', $e->getErrorCode());
            }
        }
        $this->expectException(ConfigurationException::class);
        $client->files->list(page: 1, beforeId: $ids[0]);
    }

    public function testStatsCarryTheQuotaAndAnUploadOverItIsRefused(): void
    {
        [$client] = $this->client();
        $stats = $client->stats();
        self::assertSame(100 * 1024 ** 3, $stats->limits->max_storage, "the pro plan's default");
        self::assertSame(0, $stats->stats->storage_reserved);

        [$client, $accountId] = $this->client(['max-storage' => 5000]);
        self::assertSame(5000, $client->stats()->limits->max_storage);
        $client->files->upload(UploadSource::fromBytes(str_repeat('a', 3000)), ['filename' => 'fits.bin']);
        foreach ([false, true] as $resumable) {
            try {
                $client->files->upload(UploadSource::fromBytes(str_repeat('b', 3000)), ['filename' => 'over.bin', 'resumable' => $resumable]);
                self::fail('no exception');
            } catch (LimitExceededException $e) {
                self::assertSame(403, $e->getStatus(), $resumable ? 'resumable' : 'multipart');
                self::assertSame('storage_quota_exceeded', $e->getErrorCode());
            }
        }
        $after = $client->stats();
        self::assertSame(3000, $after->stats->total_size);
        self::assertSame(0, $after->stats->storage_reserved, 'a refused upload leaves no reservation');
        self::assertSame(1, $after->stats->total_files);
        self::assertSame(1, $after->stats->uploads_today, 'a refused upload takes no daily slot');

        // stats() reads the limits afresh (uploads see a change within FILESHARE_CACHE_TTL_MS).
        Server::setLimits($accountId, ['max-storage' => 'unlimited']);
        self::assertNull($client->stats()->limits->max_storage);
        Server::setLimits($accountId, ['max-storage' => 'default']);
        self::assertSame(100 * 1024 ** 3, $client->stats()->limits->max_storage);
    }
}
