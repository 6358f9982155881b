<?php

declare(strict_types=1);

namespace Fileshare\Internal;

use Fileshare\Cancellation;
use Fileshare\Client;
use Fileshare\Exception\APIConnectionException;
use Fileshare\Exception\APITimeoutException;
use Fileshare\Exception\CancelledException;
use Fileshare\Exception\ConfigurationException;
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
     * @param \Closure(float): void                  $sleep      waits this many seconds
     * @param \Closure(): float                      $random     a number in [0, 1)
     * @param float                                 $timeout    connect and idle timeout in seconds (0: none)
     * @param array<string, string>                 $headers    extra headers of every request (per-request option `headers`)
     * @param (\Closure(ResponseInterface): void)|null $onResponse sees every response (raw responses)
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
        public readonly float $timeout = 60.0,
        public readonly array $headers = [],
        public readonly Log $log = new Log(null, null),
        public readonly ?Cancellation $cancellation = null,
        private readonly ?\Closure $onResponse = null,
    ) {
    }

    /** The request options every call takes. */
    public const REQUEST_OPTIONS = ['timeout', 'max_retries', 'headers', 'cancellation'];

    /**
     * A copy with other settings: `timeout`, `max_retries`, `headers` (added to, and replacing,
     * those set before), `cancellation`, `on_response`. Unknown keys are ignored (the caller
     * checks its own).
     *
     * @param array<string, mixed> $options
     */
    public function with(array $options): self
    {
        $options = array_intersect_key($options, array_flip([...self::REQUEST_OPTIONS, 'on_response']));
        if ($options === []) {
            return $this;
        }
        $timeout = $options['timeout'] ?? $this->timeout;
        if ((!\is_int($timeout) && !\is_float($timeout)) || $timeout < 0) {
            throw new ConfigurationException('timeout must be a non-negative number of seconds (0: none)');
        }
        $maxRetries = $options['max_retries'] ?? $this->maxRetries;
        if (!\is_int($maxRetries) || $maxRetries < 0) {
            throw new ConfigurationException('max_retries must be an integer of at least 0');
        }
        $cancellation = $options['cancellation'] ?? $this->cancellation;
        if ($cancellation !== null && !$cancellation instanceof Cancellation) {
            throw new ConfigurationException('cancellation must be a Fileshare\Cancellation');
        }
        $onResponse = \array_key_exists('on_response', $options) ? $options['on_response'] : $this->onResponse;

        return new self($this->baseUrl, $this->apiKey, $maxRetries, $this->transport, $this->requests, $this->streams, $this->sleep,
            $this->random, (float) $timeout, array_merge($this->headers, self::headerOption($options['headers'] ?? [])), $this->log,
            $cancellation, $onResponse);
    }

    /**
     * Extra headers as given (name => value): names and values are checked, and the SDK's own
     * (Authorization, User-Agent) cannot be replaced this way.
     *
     * @return array<string, string>
     */
    public static function headerOption(mixed $headers): array
    {
        if (!\is_array($headers)) {
            throw new ConfigurationException('headers must be an array of name => value');
        }
        $out = [];
        foreach ($headers as $name => $value) {
            if (!\is_string($name) || preg_match("/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/", $name) !== 1) {
                throw new ConfigurationException('a header name must be a token (letters, digits, - and the like)');
            }
            if (\in_array(strtolower($name), ['authorization', 'user-agent', 'host'], true)) {
                throw new ConfigurationException("the $name header is the SDK's own");
            }
            if ((!\is_string($value) && !\is_int($value)) || preg_match('/[\r\n\0]/', (string) $value) === 1) {
                throw new ConfigurationException("the $name header's value must be a string without line breaks");
            }
            $out[$name] = (string) $value;
        }

        return $out;
    }

    /**
     * The URL of `$path` with the parameters that are not null; a list is sent as the name
     * repeated, once per value (`type=a&type=b`, not PHP's `type[0]=a`), none when empty.
     *
     * @param array<string, int|string|list<string>|null> $query
     */
    public function url(string $path, array $query = []): string
    {
        $pairs = [];
        foreach ($query as $name => $value) {
            foreach (\is_array($value) ? $value : [$value] as $each) {
                if ($each !== null) {
                    $pairs[] = rawurlencode($name) . '=' . rawurlencode((string) $each);
                }
            }
        }

        return $this->baseUrl . $path . ($pairs === [] ? '' : '?' . implode('&', $pairs));
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
        foreach ($headers + ($auth ? $this->headers : []) as $name => $value) {
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
        $this->cancellation?->check();
        $body = $request->getBody();
        $cancellation = $this->cancellation;
        if ($cancellation !== null) {
            if ($body instanceof BodyStream) {
                $body->stopWhen(static fn (): bool => $cancellation->isCancelled());
            }
            if ($sink !== null) {
                $sink = new CancellableSink($sink, $cancellation);
            }
        }
        $started = microtime(true);
        $url = Log::url((string) $request->getUri());
        if ($this->log->enabled('debug')) {
            $this->log->log('debug', "{$request->getMethod()} $url", ['headers' => Log::headers($request->getHeaders())]);
        }
        try {
            $response = $this->transport->send($request, $sink, $this->timeout);
        } catch (FileshareException $error) {
            $cancellation?->check();
            if ($body instanceof BodyStream && $body->failure() !== null) {
                $error = new FileshareException($body->failure(), previous: $error);
            }
            $this->log->log('info', sprintf('%s %s failed after %d ms: %s', $request->getMethod(), $url, (microtime(true) - $started) * 1000,
                $error->getMessage()));
            throw $error;
        }
        $cancellation?->check();
        if ($body instanceof BodyStream && $body->failure() !== null) {
            throw new FileshareException($body->failure());
        }
        $requestId = $response->getHeaderLine('X-Request-Id');
        $this->log->log('info', sprintf('%s %s -> %d in %d ms%s', $request->getMethod(), $url, $response->getStatusCode(),
            (microtime(true) - $started) * 1000, $requestId === '' ? '' : " (request id $requestId)"));
        if ($this->log->enabled('debug')) {
            $this->log->log('debug', 'response headers', ['headers' => Log::headers($response->getHeaders())]);
        }
        if ($this->onResponse !== null) {
            ($this->onResponse)($response);
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
            throw new FileshareException("$status: the answer is not JSON: " . ErrorFactory::excerpt($text), $status, null,
                $requestId === '' ? null : $requestId, null, null, $response->getHeaders(), $text);
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
        if ($error instanceof CancelledException) {
            return false;
        }
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
        $this->cancellation?->check();
        $delay = $this->delay($attempt, $error);
        $this->log->log('info', sprintf('retrying in %.2f s (retry %d of %d) after: %s', $delay, $attempt + 1, $this->maxRetries, $error->getMessage()));
        ($this->sleep)($delay);
        $this->cancellation?->check();
    }

    /** The exception for a failure without a response (or our own, found inside the client's). */
    public static function connectionError(\Throwable $error): FileshareException
    {
        $timeout = false;
        for ($e = $error, $depth = 0; $e !== null && $depth < 6; $e = $e->getPrevious(), ++$depth) {
            if ($e instanceof FileshareException) {
                return $e;
            }
            // cURL's error 28 (CURLE_OPERATION_TIMEDOUT: connect timeout, or the idle/low-speed limit), or a stream's "timed out".
            $context = method_exists($e, 'getHandlerContext') ? $e->getHandlerContext() : [];
            if ((\is_array($context) && ($context['errno'] ?? null) === 28) || preg_match('/timed? ?out|too slow/i', $e->getMessage()) === 1) {
                $timeout = true;
            }
        }
        if ($timeout) {
            return new APITimeoutException('timed out: ' . $error->getMessage(), previous: $error);
        }

        return new APIConnectionException('connection failed: ' . $error->getMessage(), previous: $error);
    }
}
