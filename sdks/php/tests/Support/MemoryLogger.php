<?php

declare(strict_types=1);

namespace Fileshare\Tests\Support;

use Psr\Log\AbstractLogger;

/** A PSR-3 logger that keeps its lines. */
final class MemoryLogger extends AbstractLogger
{
    /** @var list<array{level: string, message: string, context: array<mixed>}> */
    public array $lines = [];

    /** @param array<mixed> $context */
    public function log($level, $message, array $context = []): void
    {
        $this->lines[] = ['level' => (string) $level, 'message' => (string) $message, 'context' => $context];
    }

    public function text(): string
    {
        return implode("\n", array_map(static fn (array $l): string => $l['level'] . ' ' . $l['message'] . ' ' . json_encode($l['context']), $this->lines));
    }
}
