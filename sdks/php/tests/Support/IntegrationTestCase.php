<?php

declare(strict_types=1);

namespace Fileshare\Tests\Support;

use Fileshare\Client;
use Fileshare\Model\FileList;
use GuzzleHttp\HandlerStack;
use GuzzleHttp\Middleware;
use PHPUnit\Framework\TestCase;

/** Integration tests: the real server (started once per run), a scratch folder per test. */
abstract class IntegrationTestCase extends TestCase
{
    protected string $dir;

    protected function setUp(): void
    {
        Server::info();
        $this->dir = sys_get_temp_dir() . '/fileshare-php-it-' . bin2hex(random_bytes(4));
        mkdir($this->dir);
    }

    protected function tearDown(): void
    {
        array_map('unlink', glob($this->dir . '/*') ?: []);
        rmdir($this->dir);
    }

    /**
     * A client of the pro server on the account of $key; with $history (not null), every request it
     * sends is noted there (Guzzle's history middleware).
     *
     * @param list<array{request: \Psr\Http\Message\RequestInterface}>|null $history
     */
    protected static function clientFor(string $key, ?array &$history = null, bool $record = false): Client
    {
        $options = ['api_key' => $key];
        if ($record) {
            $history = [];
            $stack = HandlerStack::create();
            $stack->push(Middleware::history($history));
            $options['http_client'] = new \GuzzleHttp\Client(['handler' => $stack]);
        }

        return Server::client('pro', $options);
    }

    /** @return list<string> the names of a page's files, in its order */
    protected static function filenames(FileList $list): array
    {
        return array_map(static fn ($f): string => $f->filename, $list->files);
    }

    /** A file of $size random-looking bytes (a random MiB repeated: quick to write). */
    protected function makeFile(string $name, int $size): string
    {
        $path = "$this->dir/$name";
        $block = random_bytes(min($size, 1 << 20));
        $out = fopen($path, 'wb');
        for ($left = $size; $left > 0; $left -= \strlen($block)) {
            fwrite($out, $left >= \strlen($block) ? $block : substr($block, 0, $left));
        }
        fclose($out);

        return $path;
    }
}
