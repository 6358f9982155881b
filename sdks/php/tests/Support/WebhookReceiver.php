<?php

declare(strict_types=1);

namespace Fileshare\Tests\Support;

/**
 * A webhook endpoint on 127.0.0.1 for the integration tests: `php -S` running
 * webhook-receiver.php, which saves every request it gets. The server reaches it because the
 * launcher runs it with FILESHARE_WEBHOOKS_ALLOW_PRIVATE=true and FILESHARE_WEBHOOKS_ALLOW_HTTP=true.
 */
final class WebhookReceiver
{
    public readonly string $url;
    private readonly string $dir;
    /** @var resource */
    private $process;

    public function __construct()
    {
        $this->dir = sys_get_temp_dir() . '/fileshare-php-webhooks-' . bin2hex(random_bytes(4));
        mkdir($this->dir);
        $probe = stream_socket_server('tcp://127.0.0.1:0', $errno, $error);
        if ($probe === false) {
            throw new \RuntimeException("no free port: $error");
        }
        $port = (int) substr((string) strrchr((string) stream_socket_get_name($probe, false), ':'), 1);
        fclose($probe);
        $process = proc_open(
            [\PHP_BINARY, '-S', "127.0.0.1:$port", __DIR__ . '/webhook-receiver.php'],
            [0 => ['file', '/dev/null', 'r'], 1 => ['file', "$this->dir.log", 'a'], 2 => ['file', "$this->dir.log", 'a']],
            $pipes,
            null,
            ['WEBHOOK_RECEIVER_DIR' => $this->dir] + getenv(),
        );
        if (!\is_resource($process)) {
            throw new \RuntimeException('could not start php -S');
        }
        $this->process = $process;
        $this->url = "http://127.0.0.1:$port/hooks/fileshare";
        for ($i = 0; $i < 100; ++$i) {
            $socket = @stream_socket_client("tcp://127.0.0.1:$port", $errno, $error, 0.2);
            if ($socket !== false) {
                fclose($socket);

                return;
            }
            usleep(50_000);
        }
        $this->stop();
        throw new \RuntimeException('php -S did not start listening on ' . $port);
    }

    /** The status the next requests are answered with. */
    public function answerWith(int $status): void
    {
        file_put_contents("$this->dir/status", (string) $status);
    }

    /**
     * The requests received so far, oldest first: method, path, headers (as the receiver's
     * getallheaders() gave them), body (raw), status (answered).
     *
     * @return list<array{method: string, path: string, headers: array<string, string>, body: string, status: int}>
     */
    public function requests(): array
    {
        $files = glob("$this->dir/request-*.json") ?: [];
        sort($files);

        return array_map(static function (string $file): array {
            $record = json_decode((string) file_get_contents($file), true, flags: \JSON_THROW_ON_ERROR);
            $record['body'] = base64_decode($record['body'], true);

            return $record;
        }, $files);
    }

    /**
     * The first request $match accepts, waiting for it up to $seconds.
     *
     * @param callable(array{method: string, path: string, headers: array<string, string>, body: string, status: int}): bool $match
     *
     * @return array{method: string, path: string, headers: array<string, string>, body: string, status: int}
     */
    public function waitFor(callable $match, float $seconds = 30.0): array
    {
        $deadline = microtime(true) + $seconds;
        do {
            foreach ($this->requests() as $request) {
                if ($match($request)) {
                    return $request;
                }
            }
            usleep(100_000);
        } while (microtime(true) < $deadline);
        throw new \RuntimeException(sprintf('no matching webhook request within %.0f s (%d received)', $seconds, \count($this->requests())));
    }

    /** One header of a received request, whatever its letter case ('' when absent). */
    public static function header(array $request, string $name): string
    {
        foreach ($request['headers'] as $key => $value) {
            if (strcasecmp((string) $key, $name) === 0) {
                return (string) $value;
            }
        }

        return '';
    }

    public function stop(): void
    {
        if (\is_resource($this->process)) {
            proc_terminate($this->process);
            proc_close($this->process);
        }
        array_map('unlink', glob("$this->dir/*") ?: []);
        @rmdir($this->dir);
        @unlink("$this->dir.log");
    }
}
