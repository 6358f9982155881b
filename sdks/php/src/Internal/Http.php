<?php

declare(strict_types=1);

namespace Fileshare\Internal;

use Fileshare\Client;
use Fileshare\Exception\APIConnectionException;
use Fileshare\Exception\BadRequestException;
use Fileshare\Exception\FileshareException;
use Fileshare\Exception\RateLimitException;
use Fileshare\Exception\ServerException;
use Psr\Http\Message\RequestFactoryInterface;
use Psr\Http\Message\RequestInterface;
use Psr\Http\Message\ResponseInterface;
use Psr\Http\Message\StreamFactoryInterface;
use Psr\Http\Message\StreamInterface;

/**
 * Requests, error mapping and the retry loop.
 *
 * @internal
 */
final class Http
{
    /**
     * A `Retry-After` of up to this many seconds is waited for; a longer one is not slept
     * through: the error is thrown at once (a RateLimitException for a 429, with getRetryAfter()).
     */
    public const MAX_RETRY_AFTER = 60;
    /** The header of the creating POSTs (uploads, tus creation, links): one key per call, sent on every attempt. */
    public const IDEMPOTENCY_KEY = 'Idempotency-Key';
    /** 5xx statuses worth another attempt. */
    private const RETRYABLE_STATUSES = [500, 502, 503, 504];
    /** First backoff step in seconds (full jitter: a random wait up to this, doubling per attempt). */
    public const BACKOFF_BASE = 0.5;
    /** Largest backoff step in seconds. */
    public const BACKOFF_MAX = 8.0;

    /**
     * @param \Closure(float): void $sleep  waits this many seconds
     * @param \Closure(): float     $random a number in [0, 1)
     */
    public function __construct(
        public readonly string $baseUrl,
        private readonly ApiKey $apiKey,
        public readonly int $maxRetries,
        private readonly Transport $transport,
        private readonly RequestFactoryInterface $requests,
        public readonly StreamFactoryInterface $streams,
        private readonly \Closure $sleep,
        private readonly \Closure $random,
    ) {
    }

    /** @param array<string, int|string|null> $query */
    public function url(string $path, array $query = []): string
    {
        $query = array_filter($query, static fn ($v) => $v !== null);

        return $this->baseUrl . $path . ($query === [] ? '' : '?' . http_build_query($query, '', '&', \PHP_QUERY_RFC3986));
    }

    /** @param array<string, string> $headers */
    public function build(string $method, string $url, array $headers = [], bool $auth = true, ?StreamInterface $body = null): RequestInterface
    {
        $request = $this->requests->createRequest($method, $url)->withHeader('User-Agent', Client::USER_AGENT);
        if ($auth) {
            $request = $request->withHeader('Authorization', 'Bearer ' . $this->apiKey->reveal());
        }
        if (!isset(array_change_key_case($headers)['accept'])) {
            $request = $request->withHeader('Accept', 'application/json');
        }
        foreach ($headers as $name => $value) {
            $request = $request->withHeader($name, $value);
        }
        if ($body !== null) {
            $request = $request->withBody($body);
        }

        return $request;
    }

    /** One attempt: any response comes back (errors too); no response is an APIConnectionException. */
    public function send(RequestInterface $request, ?ResponseSink $sink = null): ResponseInterface
    {
        $body = $request->getBody();
        try {
            $response = $this->transport->send($request, $sink);
        } catch (APIConnectionException $error) {
            if ($body instanceof BodyStream && $body->failure() !== null) {
                throw new FileshareException($body->failure(), previous: $error);
            }
            throw $error;
        }
        if ($body instanceof BodyStream && $body->failure() !== null) {
            throw new FileshareException($body->failure());
        }

        return $response;
    }

    /**
     * One attempt that throws the mapped exception for an answer that is not 2xx.
     *
     * @return array{0: ResponseInterface, 1: array<string, mixed>}
     */
    public function json(RequestInterface $request): array
    {
        $response = $this->send($request);
        try {
            $text = (string) $response->getBody();
        } catch (\RuntimeException $error) {
            throw self::connectionError($error);
        }
        $status = $response->getStatusCode();
        if ($status < 200 || $status > 299) {
            throw ErrorFactory::fromResponse($response, $text);
        }
        if (trim($text) === '') {
            return [$response, []];
        }
        $data = json_decode($text, true);
        if (!\is_array($data)) {
            $requestId = $response->getHeaderLine('X-Request-Id');
            throw new FileshareException("$status: the answer is not JSON", $status, null, $requestId === '' ? null : $requestId);
        }

        return [$response, $data];
    }

    /**
     * A JSON call with retries (GET, HEAD, DELETE, and POSTs that carry an idempotency key).
     *
     * @param array<string, string> $headers
     *
     * @return array{0: ResponseInterface, 1: array<string, mixed>}
     */
    public function call(string $method, string $url, array $headers = [], bool $auth = true): array
    {
        return $this->retry(fn () => $this->json($this->build($method, $url, $headers, $auth)));
    }

    /**
     * A write (POST, PATCH) with a JSON object as its body (`null` values are sent as JSON null),
     * or with no body. With an idempotency key (sent as `Idempotency-Key` on every attempt) it is
     * retried as a GET is: the server never acts twice on one key. Without one it is retried only
     * when the server refused it (429, 503: it did nothing), never after a connection failure or
     * another 5xx (the server may have acted on it).
     *
     * @param array<string, mixed>|null $body
     *
     * @return array{0: ResponseInterface, 1: array<string, mixed>}
     */
    public function write(string $method, string $url, ?array $body, ?string $idempotencyKey = null): array
    {
        $json = $body === null ? null : json_encode((object) $body, \JSON_THROW_ON_ERROR | \JSON_UNESCAPED_SLASHES | \JSON_UNESCAPED_UNICODE);
        $headers = $json === null ? [] : ['Content-Type' => 'application/json'];
        if ($idempotencyKey !== null) {
            $headers[self::IDEMPOTENCY_KEY] = $idempotencyKey;
        }

        return $this->retry(
            fn () => $this->json($this->build($method, $url, $headers, true, $json === null ? null : $this->streams->createStream($json))),
            $idempotencyKey === null ? [self::class, 'wasRefused'] : null,
        );
    }

    /**
     * A retry veto for requests the server must not act on twice and that carry no idempotency
     * key (writes, a link's download POST): only a refusal (429, 503), where it did nothing.
     */
    public static function wasRefused(FileshareException $error): bool
    {
        return $error instanceof RateLimitException || ($error instanceof ServerException && $error->getStatus() === 503);
    }

    /** Whether an answer is the stored answer to an earlier request with the same idempotency key. */
    public static function isReplayed(ResponseInterface $response): bool
    {
        return strtolower(trim($response->getHeaderLine('Idempotent-Replayed'))) === 'true';
    }

    /** $location (absolute, or relative to $base as a Location header may be) as an absolute URL. */
    public static function resolve(string $base, string $location): string
    {
        if (preg_match('#^https?://#i', $location) === 1) {
            return $location;
        }
        $parts = parse_url($base);
        $origin = ($parts['scheme'] ?? 'http') . '://' . ($parts['host'] ?? '') . (isset($parts['port']) ? ':' . $parts['port'] : '');
        if (str_starts_with($location, '/')) {
            return $origin . $location;
        }

        return rtrim($base, '/') . '/' . $location;
    }

    /**
     * Runs $attempt until it succeeds, fails with an exception that is not retryable, or the
     * retries are spent. $canRetry may veto a retry (a one-shot body that was already read).
     *
     * @template T
     *
     * @param callable(int): T                        $attempt
     * @param (callable(FileshareException): bool)|null $canRetry
     *
     * @return T
     */
    public function retry(callable $attempt, ?callable $canRetry = null): mixed
    {
        for ($n = 0; ; ++$n) {
            try {
                return $attempt($n);
            } catch (FileshareException $error) {
                if ($n >= $this->maxRetries || !self::isRetryable($error) || ($canRetry !== null && !$canRetry($error))) {
                    throw $error;
                }
                $this->pause($n, $error);
            }
        }
    }

    /**
     * 429, 500, 502, 503, 504, connection failures, and 409 `idempotency_in_progress` (the same
     * key's first request is still running) are worth another attempt; nothing else is.
     */
    public static function isRetryable(\Throwable $error): bool
    {
        if ($error instanceof RateLimitException || $error instanceof APIConnectionException) {
            return true;
        }
        if ($error instanceof BadRequestException) {
            return $error->getStatus() === 409 && $error->getErrorCode() === 'idempotency_in_progress';
        }

        return $error instanceof ServerException && \in_array($error->getStatus(), self::RETRYABLE_STATUSES, true);
    }

    /**
     * Seconds to wait before retry number $attempt (0 for the first): the server's Retry-After
     * when it sent one, else exponential backoff with full jitter.
     */
    public function delay(int $attempt, FileshareException $error): float
    {
        if ($error->getRetryAfter() !== null) {
            return (float) $error->getRetryAfter();
        }
        $ceiling = min(self::BACKOFF_MAX, self::BACKOFF_BASE * 2 ** $attempt);

        return ($this->random)() * $ceiling;
    }

    /**
     * Waits before retry number $attempt; a Retry-After over MAX_RETRY_AFTER is not slept
     * through: $error is thrown at once.
     */
    public function pause(int $attempt, FileshareException $error): void
    {
        if ($error->getRetryAfter() !== null && $error->getRetryAfter() > self::MAX_RETRY_AFTER) {
            throw $error;
        }
        ($this->sleep)($this->delay($attempt, $error));
    }

    /** The exception for a failure without a response (or our own, found inside the client's). */
    public static function connectionError(\Throwable $error): FileshareException
    {
        for ($e = $error, $depth = 0; $e !== null && $depth < 6; $e = $e->getPrevious(), ++$depth) {
            if ($e instanceof FileshareException) {
                return $e;
            }
        }

        return new APIConnectionException('connection failed: ' . $error->getMessage(), previous: $error);
    }
}
