<?php

declare(strict_types=1);

namespace Fileshare\Tests\Integration;

use Fileshare\Exception\APIConnectionException;
use Fileshare\Exception\ConfigurationException;
use Fileshare\Exception\NotFoundException;
use Fileshare\Exception\PermissionDeniedException;
use Fileshare\Model\FileRecord;
use Fileshare\Tests\Support\CutStream;
use Fileshare\Tests\Support\IntegrationTestCase;
use Fileshare\Tests\Support\Server;
use Fileshare\UploadSource;
use GuzzleHttp\HandlerStack;
use Psr\Http\Message\RequestInterface;

/** $client->files->downloadArchive() against the real server; the ZIPs are read back with Python's zipfile. */
final class ArchiveTest extends IntegrationTestCase
{
    /**
     * [name, size, sha256, method] of every entry (zipfile checks each CRC-32 as it reads).
     *
     * @return list<array{0: string, 1: int, 2: string, 3: int}>
     */
    private static function entries(string $path): array
    {
        $script = "import hashlib,json,sys,zipfile\nz=zipfile.ZipFile(sys.argv[1])\n"
            . 'print(json.dumps([[i.filename, i.file_size, hashlib.sha256(z.read(i)).hexdigest(), i.compress_type] for i in z.infolist()]))';
        $out = shell_exec('/usr/bin/python3 -c ' . escapeshellarg($script) . ' ' . escapeshellarg($path) . ' 2>&1');
        $entries = json_decode((string) $out, true);
        self::assertIsArray($entries, (string) $out);

        /** @var list<array{0: string, 1: int, 2: string, 3: int}> $entries */
        return $entries;
    }

    /** @return list<array{0: FileRecord, 1: string}> */
    private function upload(): array
    {
        $client = Server::client();
        $made = [];
        foreach (['data.bin' => random_bytes(150_000), 'same.txt' => 'one', 'SAME.txt' => 'two', 'Ünïcödé – empty.txt' => ''] as $name => $data) {
            $made[] = [$client->files->upload(UploadSource::fromBytes($data), ['filename' => (string) $name]), $data];
        }

        return $made;
    }

    public function testAZipToAPathNamesOrderAndBytesExact(): void
    {
        $files = $this->upload();
        $progress = [];
        $result = Server::client()->files->downloadArchive(
            array_map(static fn (array $f) => $f[0], $files),
            "$this->dir/all.zip",
            ['on_progress' => static function (int $done, ?int $total) use (&$progress): void {
                $progress[] = [$done, $total];
            }],
        );
        self::assertMatchesRegularExpression('/^files-\d{8}-\d{6}\.zip$/', (string) $result->filename);
        self::assertSame(filesize("$this->dir/all.zip"), $result->size);
        self::assertSame([$result->size, $result->size], end($progress));
        self::assertSame([
            ['data.bin', 150_000, hash('sha256', $files[0][1]), 0],
            ['same.txt', 3, hash('sha256', 'one'), 0],
            ['SAME (2).txt', 3, hash('sha256', 'two'), 0],
            ['Ünïcödé – empty.txt', 0, hash('sha256', ''), 0],
        ], self::entries("$this->dir/all.zip"));
    }

    public function testAStreamDestinationAndIdsAsStrings(): void
    {
        $file = Server::client()->files->upload(UploadSource::fromBytes('streamed'), ['filename' => 'streamed.txt']);
        $stream = fopen("$this->dir/stream.zip", 'w+b');
        self::assertNotFalse($stream);
        $result = Server::client()->files->downloadArchive([(string) $file->file_id], $stream);
        fclose($stream);
        self::assertSame(filesize("$this->dir/stream.zip"), $result->size);
        self::assertSame('streamed.txt', self::entries("$this->dir/stream.zip")[0][0]);
    }

    public function testAnotherAccountsIdIsNotFoundBeforeAnyByte(): void
    {
        $mine = Server::client()->files->upload(UploadSource::fromBytes('mine'), ['filename' => 'mine.txt']);
        $other = Server::client('pro', ['api_key' => Server::newAccount()]);
        $theirs = $other->files->upload(UploadSource::fromBytes('theirs'), ['filename' => 'theirs.txt']);
        try {
            Server::client()->files->downloadArchive([$mine->file_id, $theirs->file_id], "$this->dir/refused.zip");
            self::fail('no exception');
        } catch (NotFoundException $e) {
            self::assertStringContainsString((string) $theirs->file_id, $e->getMessage());
        }
        self::assertFileDoesNotExist("$this->dir/refused.zip");
    }

    public function testNeedsFilesReadAndLinksWrite(): void
    {
        $file = Server::client()->files->upload(UploadSource::fromBytes('scoped'), ['filename' => 'scoped.txt']);
        try {
            Server::client('auditor')->files->downloadArchive([$file->file_id], "$this->dir/scope.zip");
            self::fail('no exception');
        } catch (PermissionDeniedException $e) {
            self::assertSame('insufficient_scope', $e->getErrorCode());
            self::assertSame('files:read', $e->getRequiredScope());
        }
        // files:read (with links:read and stats:read) reads metadata only: no file's bytes for a read-only key.
        try {
            Server::client('read_only')->files->downloadArchive([$file->file_id], "$this->dir/read-only.zip");
            self::fail('no exception');
        } catch (PermissionDeniedException $e) {
            self::assertSame('insufficient_scope', $e->getErrorCode());
            self::assertSame('links:write', $e->getRequiredScope());
        }
        self::assertFileDoesNotExist("$this->dir/read-only.zip");
        // A key with every scope (both among them) gets it.
        Server::client()->files->downloadArchive([$file->file_id], "$this->dir/both.zip");
        self::assertSame('scoped.txt', self::entries("$this->dir/both.zip")[0][0]);
    }

    public function testRefusesBadIdsBeforeAnyRequest(): void
    {
        foreach ([[], [0], ['abc'], range(1, 1001)] as $ids) {
            try {
                Server::client()->files->downloadArchive($ids, "$this->dir/x.zip");
                self::fail('no exception for ' . json_encode($ids));
            } catch (ConfigurationException) {
                $this->addToAssertionCount(1);
            }
        }
    }

    public function testACutMidArchiveStartsAgainAndAFinalOneRemovesTheFile(): void
    {
        $data = random_bytes(400_000);
        $file = Server::client()->files->upload(UploadSource::fromBytes($data), ['filename' => 'cut.bin']);
        $cutting = static function (int $cutOnCall) {
            $calls = 0;
            $real = \GuzzleHttp\Utils::chooseHandler();

            return static function (RequestInterface $request, array $options) use (&$calls, $real, $cutOnCall) {
                ++$calls;
                if ($calls === $cutOnCall && isset($options['sink'])) {
                    $options['sink'] = new CutStream($options['sink'], 100_000);
                }

                return $real($request, $options);
            };
        };
        $noSleep = static function (): void {
        };
        $retrying = Server::client('pro', ['http_client' => new \GuzzleHttp\Client(['handler' => HandlerStack::create($cutting(1))]), 'sleep' => $noSleep]);
        $result = $retrying->files->downloadArchive([$file->file_id], "$this->dir/cut.zip");
        self::assertSame(filesize("$this->dir/cut.zip"), $result->size);
        self::assertSame([['cut.bin', 400_000, hash('sha256', $data), 0]], self::entries("$this->dir/cut.zip"));

        $once = Server::client('pro', ['http_client' => new \GuzzleHttp\Client(['handler' => HandlerStack::create($cutting(1))]),
            'sleep' => $noSleep, 'max_retries' => 0]);
        try {
            $once->files->downloadArchive([$file->file_id], "$this->dir/cut-for-good.zip");
            self::fail('no exception');
        } catch (APIConnectionException) {
            $this->addToAssertionCount(1);
        }
        self::assertFileDoesNotExist("$this->dir/cut-for-good.zip");
    }
}
