<?php

declare(strict_types=1);

namespace Fileshare\Tests\Support;

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
