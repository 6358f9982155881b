<?php

declare(strict_types=1);

namespace Fileshare\Internal;

use Psr\Http\Message\ResponseInterface;
use Psr\Http\Message\StreamInterface;

/**
 * A write-only PSR-7 stream that hands what Guzzle writes to a ResponseSink. Pieces written
 * before the sink knows the response (handlers that call no `on_headers`, like MockHandler) are
 * kept and handed over once it does.
 *
 * @internal
 */
final class SinkStream implements StreamInterface
{
    private bool $begun = false;
    private string $early = '';
    private int $written = 0;

    public function __construct(private readonly ResponseSink $sink)
    {
    }

    public function begin(ResponseInterface $response): void
    {
        if ($this->begun) {
            return;
        }
        $this->begun = true;
        $this->sink->begin($response);
        if ($this->early !== '') {
            $early = $this->early;
            $this->early = '';
            $this->sink->write($early);
        }
    }

    public function write($string): int
    {
        $string = (string) $string;
        if ($this->begun) {
            $this->sink->write($string);
        } else {
            $this->early .= $string;
        }
        $this->written += \strlen($string);

        return \strlen($string);
    }

    public function __toString(): string
    {
        return '';
    }

    public function close(): void
    {
    }

    public function detach()
    {
        return null;
    }

    public function getSize(): ?int
    {
        return null;
    }

    public function tell(): int
    {
        return $this->written;
    }

    public function eof(): bool
    {
        return true;
    }

    public function isSeekable(): bool
    {
        return false;
    }

    public function seek($offset, $whence = \SEEK_SET): void
    {
        throw new \RuntimeException('a download sink cannot seek');
    }

    public function rewind(): void
    {
        throw new \RuntimeException('a download sink cannot seek');
    }

    public function isWritable(): bool
    {
        return true;
    }

    public function isReadable(): bool
    {
        return false;
    }

    public function read($length): string
    {
        throw new \RuntimeException('a download sink cannot be read');
    }

    public function getContents(): string
    {
        return '';
    }

    public function getMetadata($key = null)
    {
        return $key === null ? [] : null;
    }
}
