<?php

declare(strict_types=1);

namespace Fileshare\Internal;

use Fileshare\Exception\ConfigurationException;

/**
 * Ids in paths and the JSON bodies of writes, checked before anything is sent.
 *
 * @internal
 */
final class Params
{
    /** A positive integer id for a path ("file", "link"), as text. */
    public static function id(int|string $id, string $what): string
    {
        $text = (string) $id;
        if (preg_match('/^[1-9]\d*$/', $text) !== 1) {
            throw new ConfigurationException("a $what id is a positive integer, got " . substr(json_encode($text) ?: '?', 0, 40));
        }

        return $text;
    }

    /**
     * The `Idempotency-Key` of one creating call: the caller's (1 to 255 printable ASCII
     * characters, as the server requires), or a new UUID v4.
     */
    public static function idempotencyKey(mixed $given): string
    {
        if ($given === null) {
            $bytes = random_bytes(16);
            $bytes[6] = \chr((\ord($bytes[6]) & 0x0F) | 0x40);
            $bytes[8] = \chr((\ord($bytes[8]) & 0x3F) | 0x80);

            return vsprintf('%s%s-%s-%s-%s-%s%s%s', str_split(bin2hex($bytes), 4));
        }
        if (!\is_string($given) || preg_match('/^[\x20-\x7E]{1,255}$/', $given) !== 1) {
            throw new ConfigurationException('idempotency_key must be 1 to 255 printable ASCII characters');
        }

        return $given;
    }

    /**
     * A call's request options (`timeout`, `max_retries`, `headers`, `cancellation`, and
     * `idempotency_key` where the call creates): unknown keys are a ConfigurationException.
     *
     * @param array<string, mixed> $options
     * @param list<string>         $extra   the call's other keys
     *
     * @return array<string, mixed>
     */
    public static function requestOptions(array $options, string $call, array $extra = []): array
    {
        $allowed = [...Http::REQUEST_OPTIONS, ...$extra];
        $unknown = array_diff(array_keys($options), $allowed);
        if ($unknown !== []) {
            throw new ConfigurationException("unknown $call request option(s): " . implode(', ', $unknown) . ' (known: ' . implode(', ', $allowed) . ')');
        }

        return $options;
    }

    /**
     * The JSON body of a write from its options: unknown keys are a ConfigurationException (a
     * typo is caught before the request); a DateTimeInterface becomes the API's UTC
     * `YYYY-MM-DD HH:MM:SS`. With $keepNull a key present with null is sent as null (PATCH:
     * clear the field); otherwise it is left out. Values are otherwise the server's to judge.
     *
     * @param array<string, mixed> $options
     * @param list<string>         $allowed
     *
     * @return array<string, mixed>
     */
    public static function body(array $options, array $allowed, string $call, bool $keepNull): array
    {
        $unknown = array_diff(array_keys($options), $allowed);
        if ($unknown !== []) {
            throw new ConfigurationException("unknown $call option(s): " . implode(', ', $unknown) . ' (known: ' . implode(', ', $allowed) . ')');
        }
        $body = [];
        foreach ($options as $name => $value) {
            if ($value === null && !$keepNull) {
                continue;
            }
            if ($value instanceof \DateTimeInterface) {
                $value = self::time($value);
            }
            $body[$name] = $value;
        }

        return $body;
    }

    /** A date-time as the API writes it: UTC `YYYY-MM-DD HH:MM:SS`. */
    public static function time(\DateTimeInterface $time): string
    {
        return \DateTimeImmutable::createFromInterface($time)->setTimezone(new \DateTimeZone('UTC'))->format('Y-m-d H:i:s');
    }
}
