<?php

declare(strict_types=1);

namespace Fileshare;

use Fileshare\Exception\ConfigurationException;
use Fileshare\Exception\FileshareException;
use Fileshare\Exception\WebhookVerificationException;
use Fileshare\Internal\Http;
use Fileshare\Internal\Params;
use Fileshare\Model\Webhook;
use Fileshare\Model\WebhookDelivery;
use Fileshare\Model\WebhookDeliveryList;
use Fileshare\Model\WebhookEvent;
use Psr\Http\Message\MessageInterface;
use Psr\Http\Message\StreamInterface;

/**
 * Webhooks, signed per the Standard Webhooks specification (standardwebhooks.com).
 *
 * `Webhooks::verify()` checks a message your endpoint received, with no client and no request:
 *
 * ```php
 * $event = Fileshare\Webhooks::verify(file_get_contents('php://input'), getallheaders(), $secret); // $secret: whsec_…
 * if ($event->type === 'file.uploaded') { … $event->data['file_id'] … }
 * ```
 *
 * `$client->webhooks` manages the account's endpoints (the key needs the scope `webhooks:manage`,
 * else InsufficientScopeException): create, list, get, update, delete, rotateSecret, test,
 * deliveries, iterateDeliveries, retryDelivery.
 */
final class Webhooks
{
    /** Seconds a message's `webhook-timestamp` may be away from now, either way (5 minutes). */
    public const TOLERANCE = 300;
    /** The prefix of a webhook secret: `whsec_<base64 of 24 to 64 random bytes>`. */
    public const SECRET_PREFIX = 'whsec_';
    /** The headers of a message. */
    public const HEADER_ID = 'webhook-id';
    public const HEADER_TIMESTAMP = 'webhook-timestamp';
    public const HEADER_SIGNATURE = 'webhook-signature';

    /** @internal */
    public function __construct(private readonly Http $http)
    {
    }

    /**
     * A new endpoint: `url` (absolute https, at most 2048 characters, no credentials; http only
     * where the operator allows it), `events` (event types, the WebhookEvent constants, or `['*']`:
     * all), `description` (optional). The answer holds the endpoint's `secret` (`whsec_…`): store
     * it now, the API never shows it again. A URL refused by the server's guard (a private or
     * loopback address, http) is a BadRequestException `webhook_url_not_allowed`; another bad
     * field `invalid_parameter`; a 21st endpoint LimitExceededException `webhook_limit_exceeded`.
     *
     * The call carries an idempotency key (request option `idempotency_key`; default a new UUID),
     * so a retry never makes a second endpoint: the same key again answers with the first one.
     *
     * @param list<string> $events
     * @param array{timeout?: float|int, max_retries?: int, headers?: array<string, string>, cancellation?: Cancellation, idempotency_key?: string} $requestOptions
     */
    public function create(string $url, array $events, ?string $description = null, array $requestOptions = []): Webhook
    {
        $requestOptions = Params::requestOptions($requestOptions, 'webhook', ['idempotency_key']);
        $key = Params::idempotencyKey($requestOptions['idempotency_key'] ?? null);
        $body = ['url' => $url, 'events' => self::events($events)];
        if ($description !== null && $description !== '') {
            $body['description'] = $description;
        }
        $http = $this->http->with($requestOptions);
        [, $data] = $http->write('POST', $http->url('/webhooks'), $body, $key);

        return Webhook::fromArray($data);
    }

    /**
     * The account's endpoints (without their secrets).
     *
     * @param array{timeout?: float|int, max_retries?: int, headers?: array<string, string>, cancellation?: Cancellation} $requestOptions
     *
     * @return list<Webhook>
     */
    public function list(array $requestOptions = []): array
    {
        [, $data] = $this->http($requestOptions)->call('GET', $this->http->url('/webhooks'));

        return Webhook::listFromArray($data);
    }

    /**
     * One endpoint (without its secret).
     *
     * @param array{timeout?: float|int, max_retries?: int, headers?: array<string, string>, cancellation?: Cancellation} $requestOptions
     */
    public function get(int|string|Webhook $webhookId, array $requestOptions = []): Webhook
    {
        [, $data] = $this->http($requestOptions)->call('GET', $this->url($webhookId));

        return Webhook::fromArray($data);
    }

    /**
     * Changes an endpoint: each argument given is changed, the others are left as they are.
     * `description: ''` removes the description (sent as null). `enabled: true` re-enables an
     * endpoint the server disabled (`disabled_reason` `gone` or `failing`); `enabled: false`
     * disables it (`owner`).
     *
     * @param list<string>|null $events
     * @param array{timeout?: float|int, max_retries?: int, headers?: array<string, string>, cancellation?: Cancellation} $requestOptions
     */
    public function update(int|string|Webhook $webhookId, ?string $url = null, ?array $events = null, ?string $description = null,
        ?bool $enabled = null, array $requestOptions = []): Webhook
    {
        $body = [];
        if ($url !== null) {
            $body['url'] = $url;
        }
        if ($events !== null) {
            $body['events'] = self::events($events);
        }
        if ($description !== null) {
            $body['description'] = $description === '' ? null : $description;
        }
        if ($enabled !== null) {
            $body['enabled'] = $enabled;
        }
        if ($body === []) {
            throw new ConfigurationException('update() needs at least one of url, events, description, enabled');
        }
        [, $data] = $this->http($requestOptions)->write('PATCH', $this->url($webhookId), $body);

        return Webhook::fromArray($data);
    }

    /**
     * Deletes an endpoint; its pending deliveries are dropped.
     *
     * @param array{timeout?: float|int, max_retries?: int, headers?: array<string, string>, cancellation?: Cancellation} $requestOptions
     */
    public function delete(int|string|Webhook $webhookId, array $requestOptions = []): void
    {
        $this->http($requestOptions)->call('DELETE', $this->url($webhookId));
    }

    /**
     * A new secret for an endpoint, in the answer's `secret` (store it now). The previous secret
     * keeps signing too for 24 hours: each message carries both signatures meanwhile, so a
     * receiver still on the old secret keeps verifying while you deploy the new one.
     *
     * @param array{timeout?: float|int, max_retries?: int, headers?: array<string, string>, cancellation?: Cancellation} $requestOptions
     */
    public function rotateSecret(int|string|Webhook $webhookId, array $requestOptions = []): Webhook
    {
        [, $data] = $this->http($requestOptions)->write('POST', $this->url($webhookId) . '/rotate-secret', null);

        return Webhook::fromArray($data);
    }

    /**
     * Sends a `webhook.test` event (`data`: `webhook_id`) to this endpoint only, through the
     * delivery queue (the server answers 202 at once). Returns the message's id (`msg_…`, its
     * `webhook-id` header and the delivery's `message_id`), or null when the server names none.
     *
     * @param array{timeout?: float|int, max_retries?: int, headers?: array<string, string>, cancellation?: Cancellation} $requestOptions
     */
    public function test(int|string|Webhook $webhookId, array $requestOptions = []): ?string
    {
        [, $data] = $this->http($requestOptions)->write('POST', $this->url($webhookId) . '/test', null);

        return \is_string($data['message_id'] ?? null) ? $data['message_id'] : null;
    }

    /**
     * One page of an endpoint's deliveries, newest first: `limit` 1 to 100, `beforeId` (the
     * deliveries whose delivery_id is lower, as `pagination->next_before_id` names the next page's
     * start). Deliveries are kept 30 days.
     *
     * @param array{timeout?: float|int, max_retries?: int, headers?: array<string, string>, cancellation?: Cancellation} $requestOptions
     */
    public function deliveries(int|string|Webhook $webhookId, ?int $limit = null, ?int $beforeId = null, array $requestOptions = []): WebhookDeliveryList
    {
        [, $data] = $this->http($requestOptions)->call('GET', $this->url($webhookId) . '/deliveries'
            . self::query(['limit' => $limit, 'before_id' => $beforeId]));

        return WebhookDeliveryList::fromArray($data);
    }

    /**
     * Every delivery of an endpoint, newest first, `limit` per request: the first page, then
     * `before_id` = the page's `next_before_id` until there is none. A delivery is never yielded
     * twice; deliveries made while iterating are newer, so they are not yielded.
     *
     * @param array{timeout?: float|int, max_retries?: int, headers?: array<string, string>, cancellation?: Cancellation} $requestOptions
     *
     * @return \Generator<int, WebhookDelivery>
     */
    public function iterateDeliveries(int|string|Webhook $webhookId, int $limit = 100, array $requestOptions = []): \Generator
    {
        Params::requestOptions($requestOptions, 'webhook');
        $this->url($webhookId);
        $beforeId = null;
        for (;;) {
            $page = $this->deliveries($webhookId, $limit, $beforeId, $requestOptions);
            foreach ($page->deliveries as $delivery) {
                yield $delivery;
            }
            $next = $page->pagination->next_before_id;
            if ($next === null) {
                return;
            }
            if ($beforeId !== null && $next >= $beforeId) {
                throw new FileshareException("the server's next_before_id ($next) does not go down from $beforeId");
            }
            $beforeId = $next;
        }
    }

    /**
     * Sends a delivery again now (a failed one, or a pending one without waiting for its next
     * attempt); the server answers 202 and the attempt goes through the delivery queue.
     *
     * @param array{timeout?: float|int, max_retries?: int, headers?: array<string, string>, cancellation?: Cancellation} $requestOptions
     */
    public function retryDelivery(int|string|Webhook $webhookId, int|string|WebhookDelivery $deliveryId, array $requestOptions = []): void
    {
        $delivery = Params::id($deliveryId instanceof WebhookDelivery ? $deliveryId->delivery_id : $deliveryId, 'delivery');
        $this->http($requestOptions)->write('POST', $this->url($webhookId) . "/deliveries/$delivery/retry", null);
    }

    /** @param array<string, mixed> $requestOptions */
    private function http(array $requestOptions): Http
    {
        return $this->http->with(Params::requestOptions($requestOptions, 'webhook'));
    }

    private function url(int|string|Webhook $webhookId): string
    {
        return $this->http->url('/webhooks/' . Params::id($webhookId instanceof Webhook ? $webhookId->webhook_id : $webhookId, 'webhook'));
    }

    /** @param array<string, ?int> $query */
    private static function query(array $query): string
    {
        $query = array_filter($query, static fn (?int $v): bool => $v !== null);

        return $query === [] ? '' : '?' . http_build_query($query, '', '&', \PHP_QUERY_RFC3986);
    }

    /**
     * @param array<mixed> $events
     *
     * @return list<string>
     */
    private static function events(array $events): array
    {
        foreach ($events as $event) {
            if (!\is_string($event)) {
                throw new ConfigurationException('events must be a list of event type names (file.uploaded, …) or [\'*\']');
            }
        }

        return array_values($events);
    }

    /**
     * Verifies a webhook message and returns its event, or throws WebhookVerificationException
     * saying why not.
     *
     * - `$body`: the raw body exactly as received (`file_get_contents('php://input')`, a PSR-7
     *   request's body, Laravel's `$request->getContent()`), never JSON decoded and encoded again.
     * - `$headers`: the request's headers, names in any letter case, each value a string or a list
     *   of strings (`getallheaders()`, Laravel's `$request->headers`, any iterable of name =>
     *   value(s)), `$_SERVER` (`HTTP_WEBHOOK_ID`, …), or a PSR-7 message (the request itself).
     * - `$secret`: the endpoint's `whsec_…` secret, as create() or rotateSecret() gave it.
     * - `$tolerance`: seconds `webhook-timestamp` may be away from `$now` (default 300).
     * - `$now`: the current time (unix seconds or a date-time; default: the clock), for tests.
     *
     * The signed content is `<webhook-id>.<webhook-timestamp>.<body>`, HMAC-SHA256 keyed with the
     * base64-decoded part of the secret; `webhook-signature` holds `v1,<base64>` entries separated
     * by spaces (two during a secret rotation): any one that matches is enough, other versions are
     * ignored. Signatures are compared in constant time (hash_equals).
     *
     * @param string|StreamInterface                                              $body
     * @param iterable<string, string|int|list<string>>|MessageInterface $headers
     *
     * @throws WebhookVerificationException
     */
    public static function verify(
        string|StreamInterface $body,
        iterable|MessageInterface $headers,
        #[\SensitiveParameter] string $secret,
        int $tolerance = self::TOLERANCE,
        int|\DateTimeInterface|null $now = null,
    ): WebhookEvent {
        if ($tolerance < 0) {
            throw new ConfigurationException('tolerance must be a non-negative number of seconds');
        }
        $key = self::key($secret);
        $found = self::headers($headers);
        $id = self::single($found, self::HEADER_ID);
        $timestamp = self::single($found, self::HEADER_TIMESTAMP);
        $signatures = trim(implode(' ', $found[self::HEADER_SIGNATURE]));
        if ($signatures === '') {
            throw new WebhookVerificationException('no webhook-signature header', WebhookVerificationException::REASON_MISSING_HEADER);
        }
        if (preg_match('/^\d{1,15}$/', $timestamp) !== 1) {
            throw new WebhookVerificationException('webhook-timestamp is not unix seconds: ' . self::shown($timestamp),
                WebhookVerificationException::REASON_INVALID_HEADER);
        }
        $sent = (int) $timestamp;
        $now = $now instanceof \DateTimeInterface ? $now->getTimestamp() : ($now ?? time());
        if ($sent < $now - $tolerance) {
            throw new WebhookVerificationException(sprintf('webhook-timestamp %d is %d s before now (tolerance %d s): a replayed '
                . 'message, or a clock that is off', $sent, $now - $sent, $tolerance), WebhookVerificationException::REASON_TIMESTAMP_TOO_OLD);
        }
        if ($sent > $now + $tolerance) {
            throw new WebhookVerificationException(sprintf('webhook-timestamp %d is %d s after now (tolerance %d s): a clock that is off',
                $sent, $sent - $now, $tolerance), WebhookVerificationException::REASON_TIMESTAMP_TOO_NEW);
        }

        $body = $body instanceof StreamInterface ? (string) $body : $body;
        $expected = hash_hmac('sha256', "$id.$timestamp.$body", $key, true);
        $checked = 0;
        $matched = false;
        foreach (preg_split('/\s+/', $signatures) ?: [] as $entry) {
            $parts = explode(',', rtrim($entry, ','), 2);
            if ($parts[0] !== 'v1' || !isset($parts[1])) {
                continue; // another version (v1a, v2, …): not ours to check
            }
            ++$checked;
            $given = base64_decode($parts[1], true);
            if ($given !== false && hash_equals($expected, $given)) {
                $matched = true; // no early exit: every entry costs the same
            }
        }
        if ($checked === 0) {
            throw new WebhookVerificationException('webhook-signature holds no v1 signature', WebhookVerificationException::REASON_NO_MATCHING_SIGNATURE);
        }
        if (!$matched) {
            throw new WebhookVerificationException(sprintf('no signature matches (%d v1 signature%s checked): another secret (this '
                . "endpoint's current or previous one is needed), or a body or header changed on the way (pass the raw body exactly "
                . 'as received)', $checked, $checked === 1 ? '' : 's'), WebhookVerificationException::REASON_NO_MATCHING_SIGNATURE);
        }

        try {
            $data = json_decode($body, true, 512, \JSON_THROW_ON_ERROR);
        } catch (\JsonException $e) {
            throw new WebhookVerificationException('the body is not JSON: ' . $e->getMessage(), WebhookVerificationException::REASON_INVALID_BODY, $e);
        }
        if (!\is_array($data) || !str_starts_with(ltrim($body), '{')) {
            throw new WebhookVerificationException('the body is not a JSON object', WebhookVerificationException::REASON_INVALID_BODY);
        }

        return WebhookEvent::fromArray($data, $id);
    }

    /**
     * The `webhook-signature` value of a message (`v1,<base64>`), as the server signs it: for
     * tests of your own endpoint.
     *
     * ```php
     * $headers = ['webhook-id' => 'msg_1', 'webhook-timestamp' => (string) time(),
     *     'webhook-signature' => Webhooks::sign($secret, 'msg_1', time(), $body)];
     * ```
     */
    public static function sign(#[\SensitiveParameter] string $secret, string $messageId, int $timestamp, string $body): string
    {
        return 'v1,' . base64_encode(hash_hmac('sha256', "$messageId.$timestamp.$body", self::key($secret), true));
    }

    /** The HMAC key of a secret: the base64 after `whsec_` (a secret without the prefix is taken whole). */
    private static function key(#[\SensitiveParameter] string $secret): string
    {
        $encoded = str_starts_with($secret, self::SECRET_PREFIX) ? substr($secret, \strlen(self::SECRET_PREFIX)) : $secret;
        $key = $encoded === '' ? false : base64_decode($encoded, true);
        if ($key === false || $key === '') {
            throw new WebhookVerificationException('the secret is not a webhook secret (whsec_ followed by base64, as create() and '
                . 'rotateSecret() give it)', WebhookVerificationException::REASON_INVALID_SECRET);
        }

        return $key;
    }

    /**
     * The values of the three headers, from any letter case (and `$_SERVER`'s `HTTP_WEBHOOK_ID`).
     *
     * @param iterable<mixed, mixed>|MessageInterface $headers
     *
     * @return array<string, list<string>>
     */
    private static function headers(iterable|MessageInterface $headers): array
    {
        $found = [self::HEADER_ID => [], self::HEADER_TIMESTAMP => [], self::HEADER_SIGNATURE => []];
        if ($headers instanceof MessageInterface) {
            foreach (array_keys($found) as $name) {
                $found[$name] = array_values(array_map('strval', $headers->getHeader($name)));
            }

            return $found;
        }
        foreach ($headers as $name => $values) {
            if (!\is_string($name)) {
                continue;
            }
            $name = strtolower($name);
            if (str_starts_with($name, 'http_')) {
                $name = str_replace('_', '-', substr($name, 5));
            }
            if (!isset($found[$name])) {
                continue;
            }
            foreach (\is_array($values) ? $values : [$values] as $value) {
                if (\is_string($value) || \is_int($value)) {
                    $found[$name][] = (string) $value;
                }
            }
        }

        return $found;
    }

    /** @param array<string, list<string>> $found */
    private static function single(array $found, string $name): string
    {
        $values = array_values(array_unique(array_filter(array_map('trim', $found[$name]), static fn (string $v): bool => $v !== '')));
        if ($values === []) {
            throw new WebhookVerificationException("no $name header", WebhookVerificationException::REASON_MISSING_HEADER);
        }
        if (\count($values) > 1) {
            throw new WebhookVerificationException("more than one $name header, with different values", WebhookVerificationException::REASON_INVALID_HEADER);
        }

        return $values[0];
    }

    /** A header's value for a message: JSON-quoted, cut to 40 characters. */
    private static function shown(string $value): string
    {
        return (string) json_encode(\strlen($value) > 40 ? substr($value, 0, 40) . '…' : $value, \JSON_UNESCAPED_SLASHES | \JSON_INVALID_UTF8_SUBSTITUTE);
    }
}
