<?php

declare(strict_types=1);

namespace Fileshare\Tests\Support;

use Fileshare\Client;

/**
 * The real server for the integration tests, started once per run through the shared launcher
 * (sdks/launcher/launch-server.mjs): read its JSON line, close its stdin at the end.
 */
final class Server
{
    /** @var array<string, mixed>|null */
    private static ?array $info = null;
    /** @var resource|null */
    private static $process = null;
    /** @var array<int, resource> */
    private static array $pipes = [];

    /** @return array<string, mixed> */
    public static function info(): array
    {
        if (self::$info !== null) {
            return self::$info;
        }
        $root = \dirname(__DIR__, 4);
        if (!is_file("$root/dist/server.js")) {
            throw new \RuntimeException("no server build: run `npm run build` in $root first");
        }
        $process = proc_open(
            ['node', "$root/sdks/launcher/launch-server.mjs"],
            [0 => ['pipe', 'r'], 1 => ['pipe', 'w'], 2 => ['file', self::logFile(), 'w']],
            $pipes,
            $root,
        );
        if (!\is_resource($process)) {
            throw new \RuntimeException('could not start node sdks/launcher/launch-server.mjs');
        }
        self::$process = $process;
        self::$pipes = $pipes;
        register_shutdown_function([self::class, 'stop']);
        $line = fgets($pipes[1]);
        $info = \is_string($line) ? json_decode($line, true) : null;
        if (!\is_array($info) || !isset($info['base_url'])) {
            self::stop();
            throw new \RuntimeException('the launcher printed no JSON line; its log (' . self::logFile() . "):\n"
                . substr((string) @file_get_contents(self::logFile()), -4000));
        }

        return self::$info = $info;
    }

    /** The launcher's and the server's log (stderr): FILESHARE_SDK_TEST_LOG, or a file in the temp folder. */
    public static function logFile(): string
    {
        return getenv('FILESHARE_SDK_TEST_LOG') ?: sys_get_temp_dir() . '/fileshare-sdk-php-server.log';
    }

    public static function stop(): void
    {
        if (self::$process === null) {
            return;
        }
        foreach (self::$pipes as $pipe) {
            if (\is_resource($pipe)) {
                fclose($pipe); // closing stdin stops the server and removes its data folder
            }
        }
        proc_close(self::$process);
        self::$process = null;
    }

    public static function key(string $account): string
    {
        return self::info()['keys'][$account];
    }

    /**
     * A new account of $plan made with the `fileshare` CLI in the server's data folder (as the
     * launcher makes its own): its API key. For tests that need a second owner.
     */
    public static function newAccount(string $plan = 'pro'): string
    {
        return self::createAccount($plan)['api_key'];
    }

    /**
     * A new account of $plan made with the `fileshare` CLI: `account_id` and `api_key`.
     *
     * @return array{account_id: int, api_key: string}
     */
    public static function createAccount(string $plan = 'pro'): array
    {
        $email = 'php-' . bin2hex(random_bytes(6)) . '@sdk-tests.invalid';
        $created = self::cli(['account', 'create', '--email', $email, '--plan', $plan, '--json']);
        if (!\is_int($created['account_id'] ?? null) || !\is_string($created['api_key'] ?? null)) {
            throw new \RuntimeException('fileshare account create printed no account_id and api_key');
        }

        return ['account_id' => $created['account_id'], 'api_key' => $created['api_key']];
    }

    /**
     * `fileshare account set-limits ID --FLAG VALUE…` (flags without the dashes: `max-storage`
     * => '5000', 'unlimited' or 'default'): the account's overrides as the CLI prints them.
     *
     * @param array<string, int|string> $limits
     *
     * @return array<string, mixed>
     */
    public static function setLimits(int $accountId, array $limits): array
    {
        $args = ['account', 'set-limits', (string) $accountId, '--json'];
        foreach ($limits as $flag => $value) {
            array_push($args, "--$flag", (string) $value);
        }

        return self::cli($args);
    }

    /**
     * Runs the `fileshare` CLI on the server's data folder: the JSON of its last line of output.
     *
     * @param list<string> $args
     *
     * @return array<string, mixed>
     */
    private static function cli(array $args): array
    {
        $info = self::info();
        $root = \dirname(__DIR__, 4);
        $env = getenv();
        unset($env['FILESHARE_DATABASE_URL'], $env['FILESHARE_REDIS_URL'], $env['FILESHARE_STORAGE']);
        $env = ['FILESHARE_DATA_DIR' => $info['data_dir'], 'FILESHARE_PUBLIC_URL' => $info['server_url'], 'FILESHARE_LOG_LEVEL' => 'warn'] + $env;
        $process = proc_open(
            ['node', "$root/bin/fileshare.js", ...$args],
            [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']],
            $pipes,
            $root,
            $env,
        );
        $out = (string) stream_get_contents($pipes[1]);
        $err = (string) stream_get_contents($pipes[2]);
        fclose($pipes[1]);
        fclose($pipes[2]);
        $code = proc_close($process);
        $lines = explode("\n", trim($out));
        $answer = json_decode((string) end($lines), true);
        if ($code !== 0 || !\is_array($answer)) {
            throw new \RuntimeException('fileshare ' . implode(' ', \array_slice($args, 0, 2)) . " failed ($code): $err $out");
        }

        return $answer;
    }

    /** @param array<string, mixed> $options */
    public static function client(string $account = 'pro', array $options = []): Client
    {
        return new Client($options + ['base_url' => self::info()['base_url'], 'api_key' => self::key($account)]);
    }
}
