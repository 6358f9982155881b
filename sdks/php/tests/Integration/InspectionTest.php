<?php

declare(strict_types=1);

namespace Fileshare\Tests\Integration;

use Fileshare\Cancellation;
use Fileshare\Client;
use Fileshare\Exception\CancelledException;
use Fileshare\Exception\ConfigurationException;
use Fileshare\Exception\NotFoundException;
use Fileshare\Model\FileRecord;
use Fileshare\Model\StatsResult;
use Fileshare\Tests\Support\IntegrationTestCase;
use Fileshare\Tests\Support\MemoryLogger;
use Fileshare\Tests\Support\Server;

/** Issue 30 against the real server: raw responses, error data, logs, the base URL check. */
final class InspectionTest extends IntegrationTestCase
{
    public function testRateLimitRemainingOfASuccessfulCallIsReadable(): void
    {
        $client = Server::client();
        $file = $client->files->uploadBytes('raw response bytes', ['filename' => 'raw.txt']);
        $raw = $client->withRawResponse()->files->get($file->file_id);
        self::assertSame(200, $raw->getStatusCode());
        self::assertInstanceOf(FileRecord::class, $raw->data);
        self::assertSame($file->sha256, $raw->data->sha256);
        self::assertMatchesRegularExpression('/^\d+$/', $raw->getHeaderLine('RateLimit-Remaining'));
        self::assertNotNull($raw->getRateLimit()->remaining);
        self::assertNotNull($raw->getRequestId());

        $stats = $client->withRawResponse()->stats();
        self::assertInstanceOf(StatsResult::class, $stats->data);
        self::assertSame('application/json', explode(';', $stats->getHeaderLine('Content-Type'))[0]);
        $client->files->delete($file->file_id);
    }

    public function testAnApiErrorCarriesHeadersBodyAndRequestId(): void
    {
        try {
            Server::client()->files->get(999999999, ['max_retries' => 0, 'headers' => ['X-Test' => 'inspection']]);
            self::fail('no exception');
        } catch (NotFoundException $e) {
            self::assertSame('not_found', $e->getBody()['error']['code']);
            self::assertNotSame('', $e->getHeaderLine('X-Request-Id'));
            self::assertSame($e->getHeaderLine('X-Request-Id'), $e->getRequestId());
            self::assertStringEndsWith('(request id ' . $e->getRequestId() . ')', $e->getMessage());
        }
    }

    public function testTheServersRootIsRefusedWithWhatToAdd(): void
    {
        $root = Server::info()['server_url'];
        $this->expectException(ConfigurationException::class);
        $this->expectExceptionMessage('add /api/v1 to it (' . rtrim($root, '/') . '/api/v1)');
        new Client(['base_url' => $root, 'api_key' => Server::key('pro')]);
    }

    public function testAPsr3LoggerAndFileshareLogNeverShowTheKey(): void
    {
        $logger = new MemoryLogger();
        Server::client('pro', ['logger' => $logger])->stats();
        self::assertStringContainsString('GET ' . Server::info()['base_url'] . '/stats -> 200', $logger->text());
        self::assertStringNotContainsString(Server::key('pro'), $logger->text());

        // FILESHARE_LOG=debug: lines on stderr, in a separate process.
        $env = ['FILESHARE_BASE_URL' => Server::info()['base_url'], 'FILESHARE_API_KEY' => Server::key('pro'), 'FILESHARE_LOG' => 'debug'] + getenv();
        $code = 'require ' . var_export(\dirname(__DIR__) . '/bootstrap.php', true) . '; (new Fileshare\Client())->stats(); echo "ok";';
        $process = proc_open([\PHP_BINARY, '-r', $code], [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes, null, $env);
        $out = stream_get_contents($pipes[1]);
        $err = stream_get_contents($pipes[2]);
        fclose($pipes[1]);
        fclose($pipes[2]);
        self::assertSame(0, proc_close($process), $err);
        self::assertSame('ok', $out);
        self::assertStringContainsString('debug GET ' . Server::info()['base_url'] . '/stats', $err);
        self::assertStringContainsString('info GET ' . Server::info()['base_url'] . '/stats -> 200', $err);
        self::assertStringContainsString('Bearer [redacted]', $err);
        self::assertStringNotContainsString(Server::key('pro'), $err);
    }

    public function testCancellationStopsARealUploadAndDownload(): void
    {
        $client = Server::client();
        $path = $this->makeFile('cancel.bin', 8 << 20);
        $cancel = new Cancellation();
        $created = null;
        try {
            $client->files->upload($path, ['resumable' => true, 'chunk_size' => 1 << 20, 'cancellation' => $cancel, 'keep_on_failure' => true,
                'on_upload_created' => static function (string $url) use (&$created): void {
                    $created = $url;
                },
                'on_progress' => static function (int $sent) use ($cancel): void {
                    if ($sent >= (3 << 20)) {
                        $cancel->cancel();
                    }
                }]);
            self::fail('not cancelled');
        } catch (CancelledException) {
        }
        self::assertNotNull($created);
        // Kept (keep_on_failure): the same upload is finished from its URL.
        $file = $client->files->upload($path, ['upload_url' => $created, 'chunk_size' => 1 << 20]);
        self::assertSame(hash_file('sha256', $path), $file->sha256);

        $cancel = new Cancellation();
        $got = 0;
        try {
            $client->download($file, "$this->dir/copy.bin", ['cancellation' => $cancel, 'on_progress' => static function (int $n) use ($cancel, &$got): void {
                $got = $n;
                if ($n >= (2 << 20)) {
                    $cancel->cancel();
                }
            }]);
            self::fail('not cancelled');
        } catch (CancelledException) {
        }
        self::assertLessThan(8 << 20, filesize("$this->dir/copy.bin"));
        // What arrived is kept: the next download resumes it.
        $result = $client->download($file, "$this->dir/copy.bin");
        self::assertGreaterThan(0, $result->resumed_from);
        self::assertSame($file->sha256, hash_file('sha256', "$this->dir/copy.bin"));
        $client->files->delete($file->file_id);
    }
}
