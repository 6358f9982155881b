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
