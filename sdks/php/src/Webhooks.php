<?php

declare(strict_types=1);

namespace Fileshare;

use Fileshare\Exception\ConfigurationException;
use Fileshare\Exception\WebhookVerificationException;
use Fileshare\Model\WebhookEvent;
use Psr\Http\Message\MessageInterface;
use Psr\Http\Message\StreamInterface;

/**
 * Webhooks, signed per the Standard Webhooks specification (standardwebhooks.com).
 *
 * `Webhooks::verify()` checks a message your endpoint received, with no client and no request:
 *
 * ```php
 * $event = Fileshare\Webhooks::verify(file_get_contents('php://input'), getallheaders(), getenv('FILESHARE_WEBHOOK_SECRET'));
 * if ($event->type === 'file.uploaded') { … $event->data['file_id'] … }
 * ```
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
