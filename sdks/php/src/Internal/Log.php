<?php

declare(strict_types=1);

namespace Fileshare\Internal;

/**
 * The SDK's log: a PSR-3 logger passed as the `logger` option, else lines on stderr when
 * FILESHARE_LOG is `debug` or `info`, else nothing. `info`: one line per HTTP exchange, retry
 * and resumable upload step; `debug`: the headers too. The API key never appears (Authorization
 * is logged as `Bearer [redacted]`), nor the token of a link or grant (`/download/[redacted]`).
 *
 * @internal
 */
final class Log
{
    private const LEVELS = ['debug' => 0, 'info' => 1];

    /**
     * @param object|null $logger a Psr\Log\LoggerInterface (duck-typed: psr/log need not be loaded without one)
     * @param int|null    $stderr the lowest level written to stderr (0 debug, 1 info), null: none
     */
    public function __construct(private readonly ?object $logger, private readonly ?int $stderr)
    {
    }

    /** From the `logger` option, else FILESHARE_LOG. */
    public static function create(mixed $logger, ?string $env): self
    {
        if ($logger !== null) {
            return new self($logger, null);
        }
        $level = strtolower(trim((string) $env));

        return new self(null, self::LEVELS[$level] ?? null);
    }

    public function enabled(string $level): bool
    {
        return $this->logger !== null || ($this->stderr !== null && self::LEVELS[$level] >= $this->stderr);
    }

    /** @param array<string, mixed> $context */
    public function log(string $level, string $message, array $context = []): void
    {
        if ($this->logger !== null) {
            $this->logger->log($level, $message, $context);

            return;
        }
        if (!$this->enabled($level)) {
            return;
        }
        $line = sprintf("[fileshare %s] %s %s", gmdate('Y-m-d\TH:i:s\Z'), $level, $message);
        if ($context !== []) {
            $line .= ' ' . json_encode($context, \JSON_UNESCAPED_SLASHES | \JSON_UNESCAPED_UNICODE | \JSON_PARTIAL_OUTPUT_ON_ERROR);
        }
        fwrite(\defined('STDERR') ? \STDERR : fopen('php://stderr', 'wb'), $line . "\n");
    }

    /** A URL as it may be logged: the token of a link or grant replaced. */
    public static function url(string $url): string
    {
        return (string) preg_replace('#/download/[^?\#]+#', '/download/[redacted]', $url);
    }

    /**
     * Headers as they may be logged (Authorization redacted).
     *
     * @param array<string, list<string>> $headers
     *
     * @return array<string, string>
     */
    public static function headers(array $headers): array
    {
        $out = [];
        foreach ($headers as $name => $values) {
            $lower = strtolower((string) $name);
            $out[(string) $name] = match (true) {
                $lower === 'authorization' => 'Bearer [redacted]',
                $lower === 'location' => self::url(implode(', ', $values)),
                default => implode(', ', $values),
            };
        }

        return $out;
    }
}
