<?php

declare(strict_types=1);

namespace Fileshare\Internal;

/**
 * Holds the API key outside every object property, so that var_dump, print_r, var_export,
 * json_encode, serialize and stack traces never show it.
 *
 * @internal
 */
final class ApiKey
{
    /** @var \WeakMap<self, string>|null */
    private static ?\WeakMap $values = null;

    public function __construct(#[\SensitiveParameter] string $key)
    {
        self::$values ??= new \WeakMap();
        self::$values[$this] = $key;
    }

    public function reveal(): string
    {
        return self::$values[$this] ?? '';
    }

    /** @return array<string, string> */
    public function __debugInfo(): array
    {
        return ['key' => '[redacted]'];
    }

    public function __toString(): string
    {
        return '[redacted]';
    }
}
