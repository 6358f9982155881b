<?php

declare(strict_types=1);

namespace Fileshare\Tests\Integration;

use Fileshare\Tests\Support\IntegrationTestCase;
use Fileshare\Tests\Support\Server;

/**
 * Issue 30: a resumable upload's URL is known as soon as it exists (`on_upload_created`), and
 * another process continues it (`upload_url`) after the first was killed midway.
 */
final class CrossProcessResumeTest extends IntegrationTestCase
{
    private const CHUNK = 256 * 1024;

    /**
     * @param list<string> $args
     *
     * @return array{0: resource, 1: resource} the process and its stdout
     */
    private function child(array $args): array
    {
        $env = ['FILESHARE_BASE_URL' => Server::info()['base_url'], 'FILESHARE_API_KEY' => Server::key('pro')] + getenv();
        unset($env['FILESHARE_LOG']);
        $process = proc_open([\PHP_BINARY, \dirname(__DIR__) . '/Support/upload-child.php', ...$args],
            [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['file', "$this->dir/child-stderr.log", 'a']], $pipes, null, $env);
        self::assertIsResource($process);

        return [$process, $pipes[1]];
    }

    /** The child's next line (waiting up to 60 s). @param resource $out */
    private function line($out): string
    {
        $read = [$out];
        $write = $except = null;
        if (stream_select($read, $write, $except, 60) !== 1) {
            self::fail('the child said nothing for 60 s; its stderr: ' . @file_get_contents("$this->dir/child-stderr.log"));
        }
        $line = fgets($out);
        self::assertIsString($line, 'the child ended; its stderr: ' . @file_get_contents("$this->dir/child-stderr.log"));

        return rtrim($line, "\n");
    }

    public function testAKilledUploadIsFinishedByAnotherProcess(): void
    {
        $path = $this->makeFile('big.bin', 4 * self::CHUNK + 12345);

        [$first, $out] = $this->child(['start', $path, (string) self::CHUNK]);
        $url = $this->line($out);
        self::assertMatchesRegularExpression('#^url ' . preg_quote(Server::info()['base_url'], '#') . '/uploads/\S+$#', $url);
        $url = substr($url, 4);
        self::assertStringStartsWith('stalled ', $this->line($out));
        proc_terminate($first, 9); // SIGKILL: no cleanup, no DELETE
        fclose($out);
        proc_close($first);

        [$second, $out] = $this->child(['resume', $path, (string) self::CHUNK, $url]);
        $from = $this->line($out);
        self::assertMatchesRegularExpression('/^from \d+$/', $from);
        $offset = (int) substr($from, 5);
        self::assertGreaterThanOrEqual(self::CHUNK, $offset, 'the first chunk was kept');
        self::assertLessThan(filesize($path), $offset);
        $done = $this->line($out);
        fclose($out);
        self::assertSame(0, proc_close($second), (string) @file_get_contents("$this->dir/child-stderr.log"));
        self::assertStringStartsWith('file ', $done);
        $file = json_decode(substr($done, 5), true, flags: \JSON_THROW_ON_ERROR);
        self::assertSame(hash_file('sha256', $path), $file['sha256']);
        self::assertSame(filesize($path), $file['size']);
        self::assertSame('big.bin', $file['filename']);

        $record = Server::client()->files->get($file['file_id']);
        self::assertSame($file['sha256'], $record->sha256);
        Server::client()->files->delete($file['file_id']);
    }
}
