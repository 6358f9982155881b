<?php

declare(strict_types=1);

namespace Fileshare\Tests\Integration;

use Fileshare\Client;
use Fileshare\Exception\APIConnectionException;
use Fileshare\Exception\AuthenticationException;
use Fileshare\Exception\BadRequestException;
use Fileshare\Exception\NotFoundException;
use Fileshare\Exception\PermissionDeniedException;
use Fileshare\Model\FileRecord;
use Fileshare\Model\FileSource;
use Fileshare\Tests\Support\IntegrationTestCase;
use Fileshare\Tests\Support\Server;
use Fileshare\UploadSource;
use GuzzleHttp\Psr7\Utils;

/** Every call against the real server, with the pro account. */
final class ApiTest extends IntegrationTestCase
{
    public function testUploadFromEverySourceThenGet(): void
    {
        $client = Server::client();
        $path = $this->makeFile('report 2026 "final".pdf', 300_000);
        $sha = hash_file('sha256', $path);
        $progress = [];
        $fromPath = $client->files->upload($path, ['on_progress' => function (int $s, ?int $t) use (&$progress): void {
            $progress[] = [$s, $t];
        }]);
        self::assertSame('report 2026 "final".pdf', $fromPath->filename);
        self::assertSame('application/pdf', $fromPath->content_type);
        self::assertSame($sha, $fromPath->sha256);
        self::assertSame(300_000, $fromPath->size);
        self::assertSame([300_000, 300_000], end($progress));

        $fromBytes = $client->files->upload(UploadSource::fromBytes('hello, world'), ['filename' => 'hello.txt']);
        self::assertSame(hash('sha256', 'hello, world'), $fromBytes->sha256);
        self::assertSame('text/plain', $fromBytes->content_type);

        $handle = fopen($path, 'rb');
        $fromResource = $client->files->upload($handle);
        fclose($handle);
        self::assertSame($sha, $fromResource->sha256);
        self::assertSame('report 2026 "final".pdf', $fromResource->filename, 'the name comes from the stream');

        $fromPsr7 = $client->files->upload(Utils::streamFor(fopen($path, 'rb')), ['filename' => 'psr7.bin']);
        self::assertSame($sha, $fromPsr7->sha256);

        $pipe = popen('head -c 100000 ' . escapeshellarg($path), 'r');
        $fromPipe = $client->files->upload($pipe, ['filename' => 'piped.bin']);
        pclose($pipe);
        self::assertSame(100_000, $fromPipe->size);
        self::assertSame(hash('sha256', (string) file_get_contents($path, false, null, 0, 100_000)), $fromPipe->sha256);

        $empty = $client->files->upload(UploadSource::fromBytes(''), ['filename' => 'empty.txt']);
        self::assertSame(0, $empty->size);

        $got = $client->files->get($fromPath->file_id);
        self::assertSame(FileSource::TYPE_API, $got->source?->type, 'uploaded with a key: the API\'s');
        self::assertEquals($fromPath, $got);
        self::assertInstanceOf(\DateTimeImmutable::class, $got->uploaded_at);
        self::assertLessThan(300, abs(time() - $got->uploaded_at->getTimestamp()));
    }

    public function testListAndIterateNeverYieldAFileTwice(): void
    {
        $client = Server::client();
        for ($i = 0; $i < 5; ++$i) {
            $client->files->upload(UploadSource::fromBytes("file $i"), ['filename' => "it-$i.txt"]);
        }
        $page = $client->files->list(page: 1, limit: 2);
        self::assertCount(2, $page->files);
        self::assertSame(1, $page->pagination->page);
        self::assertSame(2, $page->pagination->limit);
        self::assertGreaterThanOrEqual(5, $page->pagination->total);
        self::assertSame((int) ceil($page->pagination->total / 2), $page->pagination->pages);
        $before = array_map(static fn (FileRecord $f): int => $f->file_id, iterator_to_array($client->files->iterate(limit: 100), false));
        self::assertSame($page->pagination->total, \count($before));

        // Uploads during the iteration shift the pages (newest first): nothing comes twice.
        $seen = [];
        foreach ($client->files->iterate(limit: 2) as $n => $file) {
            $seen[] = $file->file_id;
            if (\count($seen) <= 3) {
                $client->files->upload(UploadSource::fromBytes("during $n"), ['filename' => "during-$n.txt"]);
            }
        }
        self::assertSame(array_unique($seen), $seen);
        self::assertSame([], array_diff($before, $seen), 'every file that was there is seen');
    }

    public function testDeleteThenNotFound(): void
    {
        $client = Server::client();
        $file = $client->files->upload(UploadSource::fromBytes('short-lived'), ['filename' => 'gone.txt']);
        $client->files->delete($file->file_id);
        foreach ([fn () => $client->files->get($file->file_id), fn () => $client->files->delete($file),
            fn () => $client->download($file, "$this->dir/gone.txt")] as $call) {
            try {
                $call();
                self::fail('no exception');
            } catch (NotFoundException $e) {
                self::assertSame(404, $e->getStatus());
                self::assertSame('not_found', $e->getErrorCode());
                self::assertMatchesRegularExpression('/^[0-9a-f-]{36}$/', (string) $e->getRequestId());
            }
        }
    }

    public function testStatsKeepsEverything(): void
    {
        $client = Server::client();
        $client->files->upload(UploadSource::fromBytes('x'), ['filename' => 's.txt']);
        $stats = $client->stats();
        self::assertSame('pro', $stats->plan);
        self::assertGreaterThanOrEqual(1, $stats->stats->total_files);
        self::assertGreaterThanOrEqual(1, $stats->stats->uploads_today);
        self::assertSame(Server::info()['limits']['pro']['requests_per_minute'], $stats->limits->requests_per_minute);
        self::assertSame(5 * 1024 ** 3, $stats->limits->max_file_size);
    }

    public function testDownloadResumesWithRangeAndIfRange(): void
    {
        $client = Server::client();
        $path = $this->makeFile('movie.bin', 3 * 1024 * 1024 + 17);
        $file = $client->files->upload($path);
        $dest = "$this->dir/copy.bin";

        $result = $client->download($file, $dest);
        self::assertSame(0, $result->resumed_from);
        self::assertSame($file->sha256, hash_file('sha256', $dest));
        self::assertSame(1, $client->files->get($file->file_id)->download_count);

        // A partial file (the first MiB) is continued through the download's grant: no new download.
        file_put_contents($dest, (string) file_get_contents($path, false, null, 0, 1 << 20));
        $progress = [];
        $result = $client->download($result->grant_url, $dest, ['on_progress' => function (int $s, ?int $t) use (&$progress): void {
            $progress[] = [$s, $t];
        }]);
        self::assertSame(1 << 20, $result->resumed_from);
        self::assertSame($file->size, $result->size);
        self::assertSame($file->sha256, hash_file('sha256', $dest));
        self::assertSame([1 << 20, $file->size], $progress[0]);
        self::assertSame(1, $client->files->get($file->file_id)->download_count);

        // From the record, and from the link alone (HEAD on the grant tells the ETag and size): each
        // asks the link for a grant, which counts one download.
        file_put_contents($dest, (string) file_get_contents($path, false, null, 0, 2000));
        self::assertSame(2000, $client->download($file, $dest)->resumed_from);
        file_put_contents($dest, (string) file_get_contents($path, false, null, 0, 1000));
        $result = $client->download($file->public_link, $dest);
        self::assertSame(1000, $result->resumed_from);
        self::assertSame($file->sha256, hash_file('sha256', $dest));
        self::assertSame(3, $client->files->get($file->file_id)->download_count);

        // A complete file of a record is checked, not fetched again, and counts nothing.
        $result = $client->download($file, $dest);
        self::assertSame($file->size, $result->resumed_from);
        self::assertNull($result->grant_url);

        // To a stream.
        $out = fopen('php://temp', 'w+b');
        $client->download($file, $out);
        rewind($out);
        self::assertSame($file->sha256, hash('sha256', (string) stream_get_contents($out)));
        self::assertSame(4, $client->files->get($file->file_id)->download_count);
    }

    public function testBadRequestException(): void
    {
        try {
            Server::client()->files->list(limit: 500);
            self::fail('no exception');
        } catch (BadRequestException $e) {
            self::assertSame(400, $e->getStatus());
            self::assertSame('invalid_parameter', $e->getErrorCode());
            self::assertStringContainsString('limit must be an integer from 1 to 100', $e->getMessage());
        }
    }

    public function testAuthenticationExceptionWithABadKey(): void
    {
        $client = Server::client('pro', ['api_key' => 'fsk_' . str_repeat('A', 43)]);
        try {
            $client->stats();
            self::fail('no exception');
        } catch (AuthenticationException $e) {
            self::assertSame(401, $e->getStatus());
            self::assertSame('unauthorized', $e->getErrorCode());
            self::assertStringNotContainsString(str_repeat('A', 43), $e->getMessage());
        }
    }

    public function testPermissionDeniedExceptionWithTheFreePlan(): void
    {
        try {
            Server::client('free')->files->list();
            self::fail('no exception');
        } catch (PermissionDeniedException $e) {
            self::assertSame(403, $e->getStatus());
            self::assertSame('plan_not_supported', $e->getErrorCode());
        }
    }

    public function testAPIConnectionException(): void
    {
        // Nobody listens: connection refused.
        $socket = stream_socket_server('tcp://127.0.0.1:0');
        $address = stream_socket_get_name($socket, false);
        fclose($socket);
        $client = new Client(['base_url' => "http://$address/api/v1", 'api_key' => Server::key('pro'), 'max_retries' => 0]);
        try {
            $client->stats();
            self::fail('no exception');
        } catch (APIConnectionException $e) {
            self::assertNull($e->getStatus());
        }

        // Someone listens but never answers: the idle timeout ends it.
        $socket = stream_socket_server('tcp://127.0.0.1:0');
        $address = stream_socket_get_name($socket, false);
        $client = new Client(['base_url' => "http://$address/api/v1", 'api_key' => Server::key('pro'), 'max_retries' => 0, 'timeout' => 1]);
        $started = microtime(true);
        try {
            $client->stats();
            self::fail('no exception');
        } catch (APIConnectionException) {
            self::assertLessThan(10, microtime(true) - $started);
        } finally {
            fclose($socket);
        }
    }
}
