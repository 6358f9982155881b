<?php

declare(strict_types=1);

namespace Fileshare\Tests\Integration;

use Fileshare\Tests\Support\IntegrationTestCase;
use Fileshare\Tests\Support\Server;

/** The examples run as they are, against the real server. */
final class ExamplesTest extends IntegrationTestCase
{
    /** @param list<string> $args @return array{int, string, string} */
    private function runExample(string $example, array $args = []): array
    {
        $env = getenv() + ['FILESHARE_BASE_URL' => Server::info()['base_url'], 'FILESHARE_API_KEY' => Server::key('pro')];
        $env['FILESHARE_BASE_URL'] = Server::info()['base_url'];
        $env['FILESHARE_API_KEY'] = Server::key('pro');
        $process = proc_open(
            array_merge([\PHP_BINARY, \dirname(__DIR__, 2) . "/examples/$example"], $args),
            [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']],
            $pipes,
            null,
            $env,
        );
        $out = (string) stream_get_contents($pipes[1]);
        $err = (string) stream_get_contents($pipes[2]);
        fclose($pipes[1]);
        fclose($pipes[2]);

        return [proc_close($process), $out, $err];
    }

    public function testQuickstart(): void
    {
        [$code, $out, $err] = $this->runExample('quickstart.php');
        self::assertSame(0, $code, $out . $err);
        self::assertMatchesRegularExpression('/uploaded quickstart\.php as file \d+/', $out);
        self::assertStringContainsString('SHA-256 checked against the ETag', $out);
        self::assertMatchesRegularExpression('/deleted file \d+/', $out);
        self::assertMatchesRegularExpression('/GET answered 200, \d+ requests left in the window/', $out);
        self::assertMatchesRegularExpression('/storage: \d+ bytes used, \d+ reserved by uploads in progress, of a quota of \d+/', $out);
    }

    public function testResumable(): void
    {
        $path = $this->makeFile('video.bin', 3 * 1024 * 1024 + 5);
        [$code, $out, $err] = $this->runExample('resumable.php', [$path, '1']);
        self::assertSame(0, $code, $out . $err);
        self::assertStringContainsString('sha256 ' . hash_file('sha256', $path), $out);
        self::assertStringContainsString('download resumed from byte 1572866', $out);
    }

    public function testLinks(): void
    {
        [$code, $out, $err] = $this->runExample('links.php');
        self::assertSame(0, $code, $out . $err);
        self::assertMatchesRegularExpression('/link \d+: http\S+\/download\/\S+ \(active, 3 downloads, password: yes\)/', $out);
        self::assertStringContainsString('a wrong password: invalid_password', $out);
        self::assertStringContainsString('the link has counted 1 download(s)', $out);
        self::assertStringContainsString("updated: label 'auditors, no password', password: no, still 3 downloads", $out);
        self::assertStringContainsString('rotated: the old URL answers 404', $out);
        self::assertMatchesRegularExpression('/deleted file \d+/', $out);
    }

    public function testUploadRequests(): void
    {
        [$code, $out, $err] = $this->runExample('upload-requests.php', [$this->dir]);
        self::assertSame(0, $code, $out . $err);
        self::assertMatchesRegularExpression('#upload request \d+ \(active\): send http\S+/r/[A-Za-z0-9_-]{43} to the guest#', $out);
        self::assertStringContainsString('max files: no limit, password: yes, now expires', $out);
        self::assertStringContainsString("active 'Invoices for March': 0 file(s), 0 bytes", $out);
        self::assertStringContainsString('downloaded 0 received file(s)', $out);
        self::assertStringContainsString('closed: closed', $out);
        self::assertMatchesRegularExpression('/deleted upload request \d+/', $out);
    }

    public function testErrors(): void
    {
        [$code, $out, $err] = $this->runExample('errors.php');
        self::assertSame(0, $code, $out . $err);
        self::assertStringContainsString('get a file that does not exist: not found (not_found', $out);
        self::assertStringContainsString('list 500 per page: refused as sent: 400 invalid_parameter', $out);
        self::assertStringContainsString('a wrong key: check the API key (401)', $out);
        self::assertStringContainsString('a server that is not there: no answer', $out);
        self::assertStringContainsString('a base URL without /api/v1: a mistake in the code: base_url must end in /api/v1: add /api/v1', $out);
        self::assertMatchesRegularExpression('/not found \(not_found, request \S+, \d+ requests left\)/', $out);
    }
}
