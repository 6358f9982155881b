<?php

declare(strict_types=1);

namespace Fileshare;

use Fileshare\Exception\ConfigurationException;
use Fileshare\Internal\ApiKey;
use Fileshare\Internal\Downloader;
use Fileshare\Internal\GuzzleTransport;
use Fileshare\Internal\Http;
use Fileshare\Internal\Log;
use Fileshare\Internal\Params;
use Fileshare\Internal\RawResponses;
use Fileshare\Internal\Psr18Transport;
use Fileshare\Internal\Tus;
use Fileshare\Model\CurrentKey;
use Fileshare\Model\DownloadResult;
use Fileshare\Model\FileRecord;
use Fileshare\Model\Link;
use Fileshare\Model\StatsResult;
use GuzzleHttp\ClientInterface as GuzzleClientInterface;
use GuzzleHttp\Psr7\HttpFactory;
use Psr\Http\Client\ClientInterface;
use Psr\Http\Message\RequestFactoryInterface;
use Psr\Http\Message\ResponseInterface;
use Psr\Http\Message\StreamFactoryInterface;
use Psr\Http\Message\StreamInterface;

/**
 * The Fileshare API client.
 *
 * ```php
 * $client = new Fileshare\Client(['base_url' => 'https://files.example.com/api/v1', 'api_key' => 'fsk_…']);
 * $file = $client->files->upload('video.mp4');
 * ```
 *
 * The API key never appears in messages, var_dump/print_r/var_export, json_encode or traces.
 */
final class Client
{
    public const VERSION = '0.2.0';
    public const USER_AGENT = 'fileshare-sdk-php/' . self::VERSION;
    public const DEFAULT_MAX_RETRIES = 2;
    public const DEFAULT_TIMEOUT = 60.0;
    public const DEFAULT_RESUMABLE_THRESHOLD = 64 * 1024 * 1024;
    public const DEFAULT_CHUNK_SIZE = 16 * 1024 * 1024;

    private const OPTIONS = ['base_url', 'api_key', 'max_retries', 'timeout', 'http_client', 'request_factory', 'stream_factory',
        'resumable_threshold', 'chunk_size', 'headers', 'logger', 'sleep', 'random'];

    /** Upload, list, iterate, get, update, delete. */
    public readonly Files $files;
    /** A file's links: create, list, get, update, delete, rotate. */
    public readonly Links $links;
    /** The account's audit log: list, iterate (the key needs `audit:read`). */
    public readonly AuditEvents $auditEvents;
    /**
     * The account's webhook endpoints: create, list, get, update, delete, rotateSecret, test,
     * deliveries, iterateDeliveries, retryDelivery (the key needs `webhooks:manage`). Verifying a
     * message needs no client: Webhooks::verify().
     */
    public readonly Webhooks $webhooks;
    /**
     * Upload requests, pages where someone without an account sends files into this one: create,
     * list, get, update, delete, close, files, iterateFiles (the key needs `requests:manage`).
     */
    public readonly UploadRequests $uploadRequests;
    public readonly string $baseUrl;
    public readonly int $maxRetries;
    /** Seconds: connect and idle timeout (never a deadline for a whole transfer). */
    public readonly float $timeout;
    public readonly int $resumableThreshold;
    public readonly int $chunkSize;

    private readonly Http $http;
    /** @var array<string, mixed> the options, for withOptions() (the key held as an ApiKey) */
    private readonly array $config;
    /** @var array{available: bool, checksum: bool, max_size: ?int}|null */
    private ?array $tus = null;

    /**
     * @param array{base_url?: string, api_key?: string, max_retries?: int, timeout?: float|int, http_client?: ClientInterface,
     *     request_factory?: RequestFactoryInterface, stream_factory?: StreamFactoryInterface, resumable_threshold?: int,
     *     chunk_size?: int, headers?: array<string, string>, logger?: \Psr\Log\LoggerInterface, sleep?: callable(float): void,
     *     random?: callable(): float} $options
     *
     * Options: `base_url` (ends in /api/v1; default FILESHARE_BASE_URL), `api_key` (default
     * FILESHARE_API_KEY), `max_retries` (2), `timeout` (60 s, connect and idle), `http_client` (a
     * Guzzle client or any PSR-18 client; default a new Guzzle client), `request_factory` and
     * `stream_factory` (PSR-17; default Guzzle's), `resumable_threshold` (64 MiB), `chunk_size`
     * (16 MiB), `headers` (sent with every API request), `logger` (a PSR-3 logger; default: stderr
     * when FILESHARE_LOG is `debug` or `info`). `sleep` and `random` replace the waits between
     * retries (tests).
     */
    public function __construct(#[\SensitiveParameter] array $options = [])
    {
        $this->init($options, null);
    }

    /**
     * A copy of this client with some options changed (any constructor option, e.g. `timeout`,
     * `max_retries`, `headers`, `logger`); this client is left as it is. The copy shares the HTTP
     * client (and its connections).
     *
     * ```php
     * $patient = $client->withOptions(['timeout' => 300, 'max_retries' => 5]);
     * ```
     *
     * @param array<string, mixed> $options
     */
    public function withOptions(#[\SensitiveParameter] array $options): self
    {
        $copy = (new \ReflectionClass(self::class))->newInstanceWithoutConstructor();
        $copy->init($options + $this->config, null);

        return $copy;
    }

    /**
     * The same calls, each answering a RawResponse: the HTTP status and headers (e.g.
     * `RateLimit-Remaining`) with the usual result as `->data`.
     *
     * ```php
     * $raw = $client->withRawResponse()->files->get($id);
     * $remaining = $raw->getHeaderLine('RateLimit-Remaining');
     * $file = $raw->data;
     * ```
     */
    public function withRawResponse(): RawResponseClient
    {
        $recorder = new RawResponses($this);
        $copy = (new \ReflectionClass(self::class))->newInstanceWithoutConstructor();
        $copy->init($this->config, $recorder->record(...));

        return new RawResponseClient($copy, $recorder);
    }

    /**
     * @param array<string, mixed>                         $options
     * @param (\Closure(ResponseInterface): void)|null     $onResponse
     */
    private function init(#[\SensitiveParameter] array $options, ?\Closure $onResponse): void
    {
        $unknown = array_diff(array_keys($options), self::OPTIONS);
        if ($unknown !== []) {
            throw new ConfigurationException('unknown option(s): ' . implode(', ', $unknown) . ' (known: ' . implode(', ', self::OPTIONS) . ')');
        }
        $baseUrl = $options['base_url'] ?? self::env('FILESHARE_BASE_URL');
        $apiKey = $options['api_key'] ?? self::env('FILESHARE_API_KEY');
        $this->baseUrl = self::baseUrl($baseUrl);
        if ($apiKey instanceof ApiKey) {
            $key = $apiKey;
        } elseif (\is_string($apiKey) && $apiKey !== '') {
            $key = new ApiKey($apiKey);
        } else {
            throw new ConfigurationException("no API key: pass ['api_key' => 'fsk_…'] or set FILESHARE_API_KEY");
        }
        $this->maxRetries = self::integer($options, 'max_retries', self::DEFAULT_MAX_RETRIES, 0);
        $this->resumableThreshold = self::integer($options, 'resumable_threshold', self::DEFAULT_RESUMABLE_THRESHOLD, 0);
        $this->chunkSize = self::integer($options, 'chunk_size', self::DEFAULT_CHUNK_SIZE, 1);
        $timeout = $options['timeout'] ?? self::DEFAULT_TIMEOUT;
        if ((!\is_int($timeout) && !\is_float($timeout)) || $timeout < 0) {
            throw new ConfigurationException('timeout must be a non-negative number of seconds (0: none)');
        }
        $this->timeout = (float) $timeout;

        $httpClient = $options['http_client'] ?? new \GuzzleHttp\Client();
        if ($httpClient instanceof GuzzleClientInterface) {
            $transport = new GuzzleTransport($httpClient);
        } elseif ($httpClient instanceof ClientInterface) {
            $transport = new Psr18Transport($httpClient);
        } else {
            throw new ConfigurationException('http_client must be a Guzzle client or a PSR-18 client (Psr\Http\Client\ClientInterface)');
        }
        $factory = null;
        $requests = $options['request_factory'] ?? ($factory ??= new HttpFactory());
        $streams = $options['stream_factory'] ?? ($factory ??= new HttpFactory());
        if (!$requests instanceof RequestFactoryInterface || !$streams instanceof StreamFactoryInterface) {
            throw new ConfigurationException('request_factory and stream_factory must be PSR-17 factories');
        }
        $sleep = $options['sleep'] ?? static function (float $seconds): void {
            if ($seconds > 0) {
                usleep((int) round($seconds * 1_000_000));
            }
        };
        $random = $options['random'] ?? static fn (): float => mt_rand() / (mt_getrandmax() + 1);
        if (!\is_callable($sleep) || !\is_callable($random)) {
            throw new ConfigurationException('sleep and random must be callable');
        }
        $logger = $options['logger'] ?? null;
        if ($logger !== null && (!\is_object($logger) || !method_exists($logger, 'log'))) {
            throw new ConfigurationException('logger must be a PSR-3 logger (Psr\Log\LoggerInterface)');
        }

        $this->http = new Http(
            $this->baseUrl,
            $key,
            $this->maxRetries,
            $transport,
            $requests,
            $streams,
            \Closure::fromCallable($sleep),
            \Closure::fromCallable($random),
            $this->timeout,
            Http::headerOption($options['headers'] ?? []),
            Log::create($logger, self::env('FILESHARE_LOG')),
            null,
            $onResponse,
        );
        $this->config = ['api_key' => $key, 'http_client' => $httpClient] + $options;
        $this->files = new Files($this->http, $this->resumableThreshold, $this->chunkSize, fn (): array => $this->resumableUploads());
        $this->links = new Links($this->http);
        $this->auditEvents = new AuditEvents($this->http);
        $this->webhooks = new Webhooks($this->http);
        $this->uploadRequests = new UploadRequests($this->http);
    }

    /** A base URL as the client keeps it (no trailing slash), or a ConfigurationException saying what is wrong. */
    private static function baseUrl(mixed $baseUrl): string
    {
        if ($baseUrl === null || $baseUrl === '') {
            throw new ConfigurationException("no base URL: pass ['base_url' => 'https://files.example.com/api/v1'] or set FILESHARE_BASE_URL");
        }
        if (!\is_string($baseUrl) || preg_match('#^https?://[^/?\#\s]+#i', $baseUrl) !== 1) {
            throw new ConfigurationException('base_url must be an http(s) URL ending in /api/v1, e.g. https://files.example.com/api/v1');
        }
        $trimmed = rtrim($baseUrl, '/');
        if (preg_match('#/api/v1$#', $trimmed) !== 1) {
            $shown = \strlen($trimmed) > 200 ? substr($trimmed, 0, 200) . '…' : $trimmed;
            if (str_contains($trimmed, '?') || str_contains($trimmed, '#')) {
                throw new ConfigurationException("base_url must end in /api/v1, without a query or fragment (got $shown)");
            }
            throw new ConfigurationException("base_url must end in /api/v1: add /api/v1 to it ($shown/api/v1)");
        }

        return $trimmed;
    }

    /**
     * The account's statistics, limits and plan (fields this SDK does not know are kept in `extra`).
     *
     * @param array{timeout?: float|int, max_retries?: int, headers?: array<string, string>, cancellation?: Cancellation} $requestOptions
     */
    public function stats(array $requestOptions = []): StatsResult
    {
        $http = $this->http->with(Params::requestOptions($requestOptions, 'stats'));
        [, $data] = $http->call('GET', $http->url('/stats'));

        return StatsResult::fromArray($data);
    }

    /**
     * The API key this client calls with (`GET /key`): its id, name, prefix, scopes, allowed
     * addresses, creation, expiry and last use, and the account's plan. Any valid key may ask (no
     * scope is needed); it counts against the rate limits.
     *
     * @param array{timeout?: float|int, max_retries?: int, headers?: array<string, string>, cancellation?: Cancellation} $requestOptions
     */
    public function key(array $requestOptions = []): CurrentKey
    {
        $http = $this->http->with(Params::requestOptions($requestOptions, 'key'));
        [, $data] = $http->call('GET', $http->url('/key'));

        return CurrentKey::fromArray($data);
    }

    /**
     * Downloads a file (its record, a Link, or a link's URL; no key is sent to the link) to a
     * path, a writable stream resource or a PSR-7 stream.
     *
     * The link is asked for a grant first (`POST`, with `password` when given: this counts one
     * download), then the grant URL is read; it counts nothing more, so a download that drops is
     * continued through it for free. A grant URL (DownloadResult's `grant_url`, valid an hour)
     * may be passed instead of the link to resume later without counting again. With `resume`
     * (default true) a partial destination file is continued with `Range` + `If-Range`; the
     * finished bytes are checked against the `ETag` (the file's SHA-256). A missing or wrong
     * password is an AuthenticationException with getErrorCode() `invalid_password`.
     *
     * @param FileRecord|Link|string                       $fileOrLink
     * @param string|\SplFileInfo|resource|StreamInterface $destination
     * Takes the request options too (`timeout`, `max_retries`, `headers`, `cancellation`).
     *
     * @param array{on_progress?: callable(int, ?int): void, resume?: bool, password?: string, timeout?: float|int,
     *     max_retries?: int, headers?: array<string, string>, cancellation?: Cancellation} $options
     */
    public function download(FileRecord|Link|string $fileOrLink, mixed $destination, #[\SensitiveParameter] array $options = []): DownloadResult
    {
        $unknown = array_diff(array_keys($options), ['on_progress', 'resume', 'password', ...Http::REQUEST_OPTIONS]);
        if ($unknown !== []) {
            throw new ConfigurationException('unknown download option(s): ' . implode(', ', $unknown));
        }
        $http = $this->http->with($options);
        $onProgress = $options['on_progress'] ?? null;
        if ($onProgress !== null && !\is_callable($onProgress)) {
            throw new ConfigurationException('on_progress must be callable');
        }
        $password = $options['password'] ?? null;
        if ($password !== null && !\is_string($password)) {
            throw new ConfigurationException('password must be a string');
        }

        return Downloader::download($http, $fileOrLink, $destination, $onProgress, (bool) ($options['resume'] ?? true), $password);
    }

    /**
     * What the server offers for resumable uploads (asked once with OPTIONS /uploads, then kept).
     *
     * @return array{available: bool, checksum: bool, max_size: ?int}
     */
    public function resumableUploads(): array
    {
        if ($this->tus === null) {
            $answer = Tus::detect($this->http);
            if ($answer === null) {
                return ['available' => false, 'checksum' => false, 'max_size' => null]; // no answer: asked again next time
            }
            $this->tus = $answer;
        }

        return $this->tus;
    }

    /** @return array<string, mixed> */
    public function __debugInfo(): array
    {
        return [
            'baseUrl' => $this->baseUrl,
            'apiKey' => '[redacted]',
            'maxRetries' => $this->maxRetries,
            'timeout' => $this->timeout,
            'resumableThreshold' => $this->resumableThreshold,
            'chunkSize' => $this->chunkSize,
        ];
    }

    public function __toString(): string
    {
        return sprintf('Fileshare\Client { baseUrl: %s, apiKey: [redacted] }', json_encode($this->baseUrl, \JSON_UNESCAPED_SLASHES));
    }

    private static function env(string $name): ?string
    {
        $value = getenv($name);
        if ($value === false || $value === '') {
            $value = $_ENV[$name] ?? $_SERVER[$name] ?? null;
        }

        return \is_string($value) && $value !== '' ? $value : null;
    }

    /** @param array<string, mixed> $options */
    private static function integer(array $options, string $name, int $default, int $min): int
    {
        $value = $options[$name] ?? $default;
        if (!\is_int($value) || $value < $min) {
            throw new ConfigurationException("$name must be an integer of at least $min");
        }

        return $value;
    }
}
