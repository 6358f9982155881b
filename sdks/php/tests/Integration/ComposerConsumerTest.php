<?php

declare(strict_types=1);

namespace Fileshare\Tests\Integration;

use Fileshare\Client;
use Fileshare\Tests\Support\IntegrationTestCase;
use Fileshare\Tests\Support\Server;

/**
 * Issue 30, item 7: a project installs the SDK from this repository with Composer (a `path`
 * repository, Packagist off, no network), its dependencies resolved against Debian's packaged
 * Guzzle, PSR-7/17/18 and PSR-3 (`provide` + their autoloaders), as the README's "From source"
 * section shows; then it calls the real server through vendor/autoload.php alone.
 */
final class ComposerConsumerTest extends IntegrationTestCase
{
    /** Debian's packages and the Composer names they provide. */
    private const DEBIAN = [
        'php-guzzlehttp-guzzle' => ['guzzlehttp/guzzle', 'GuzzleHttp/autoload.php'],
        'php-guzzlehttp-psr7' => ['guzzlehttp/psr7', 'GuzzleHttp/Psr7/autoload.php'],
        'php-guzzlehttp-promises' => ['guzzlehttp/promises', 'GuzzleHttp/Promise/autoload.php'],
        'php-psr-http-client' => ['psr/http-client', 'Psr/Http/Client/autoload.php'],
        'php-psr-http-factory' => ['psr/http-factory', 'Psr/Http/Message/factory-autoload.php'],
        'php-psr-http-message' => ['psr/http-message', 'Psr/Http/Message/autoload.php'],
        'php-psr-log' => ['psr/log', 'Psr/Log/autoload.php'],
    ];

    /** @return array{0: int, 1: string} exit code and output */
    private static function exec(array $command, string $cwd, array $env = []): array
    {
        $process = proc_open($command, [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['redirect', 1]], $pipes, $cwd, $env + getenv());
        $out = (string) stream_get_contents($pipes[1]);
        fclose($pipes[1]);

        return [proc_close($process), $out];
    }

    public function testAConsumerProjectInstallsTheSdkFromThisFolder(): void
    {
        $composer = trim((string) shell_exec('command -v composer'));
        if ($composer === '' || !is_file('/usr/share/php/GuzzleHttp/autoload.php') || trim((string) shell_exec('command -v dpkg-query')) === '') {
            self::markTestSkipped('needs composer and Debian\'s php-guzzlehttp-guzzle (run-tests.sh installs them)');
        }
        $sdk = \dirname(__DIR__, 2);
        $provide = [];
        $files = [];
        foreach (self::DEBIAN as $package => [$name, $autoload]) {
            $version = trim((string) shell_exec('dpkg-query -W -f=\'${Version}\' ' . escapeshellarg($package) . ' 2>/dev/null'));
            if ($version === '' || !is_file("/usr/share/php/$autoload")) {
                self::markTestSkipped("Debian's $package is not installed");
            }
            // 7.4.5-1+deb12u1 -> 7.4.5
            $provide[$name] = preg_replace('/^(?:\d+:)?([0-9.]+).*$/', '$1', $version);
            $files[] = "/usr/share/php/$autoload";
        }
        $project = [
            'name' => 'example/fileshare-consumer',
            'type' => 'project',
            'repositories' => [['packagist.org' => false], ['type' => 'path', 'url' => $sdk]],
            'require' => ['php' => '>=8.2', 'fileshare/sdk' => '*@dev'],
            'provide' => $provide,
            'autoload' => ['files' => $files],
        ];
        file_put_contents("$this->dir/composer.json", json_encode($project, \JSON_PRETTY_PRINT | \JSON_UNESCAPED_SLASHES));
        copy(\dirname(__DIR__) . '/Consumer/consumer.php', "$this->dir/consumer.php");
        $env = ['COMPOSER_HOME' => "$this->dir/.composer-home", 'COMPOSER_DISABLE_NETWORK' => '1', 'COMPOSER_NO_INTERACTION' => '1',
            'COMPOSER_ALLOW_SUPERUSER' => '1'];
        [$code, $out] = self::exec([$composer, 'install', '--no-progress', '--no-interaction'], $this->dir, $env);
        self::assertSame(0, $code, "composer install:\n$out");
        self::assertStringContainsString('fileshare/sdk', $out);
        self::assertFileExists("$this->dir/vendor/fileshare/sdk/src/Client.php");

        [$code, $out] = self::exec([\PHP_BINARY, 'consumer.php'], $this->dir,
            ['FILESHARE_BASE_URL' => Server::info()['base_url'], 'FILESHARE_API_KEY' => Server::key('pro')]);
        self::assertSame(0, $code, $out);
        $answer = json_decode($out, true, flags: \JSON_THROW_ON_ERROR);
        self::assertSame(Client::VERSION, $answer['version']);
        self::assertTrue($answer['installed']);
        self::assertSame(hash('sha256', 'hello from a consumer project'), $answer['sha256']);
        self::assertSame(realpath("$sdk/src/Client.php"), realpath($answer['sdk_path']), 'the path repository links this folder');
        self::assertSame('pro', $answer['plan']);
    }

    protected function tearDown(): void
    {
        \exec('rm -rf ' . escapeshellarg($this->dir));
    }
}
