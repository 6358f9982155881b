<?php

declare(strict_types=1);

namespace Fileshare\Internal;

use Psr\Http\Message\StreamInterface;

/**
 * A request body read straight from a PHP stream, in constant memory: an optional head, the bytes
 * of the source (from `start`, `length` of them or up to its end), an optional tail. Each source
 * byte goes through `onData` as the HTTP client reads it (SHA-256 and progress while sending).
 *
 * Seekable (back to 0 only, which calls `onRewind`) when the source is. A source that fails or
 * ends short of `length` ends the body early and records why in failure(): the HTTP client then
 * fails the request, and the SDK reports the source's problem instead of a network error.
 *
 * @internal
 */
final class BodyStream implements StreamInterface
{
    private const PIECE = 1 << 20;

    private int $pos = 0;
    private int $sourceRead = 0;
    private bool $sourceDone = false;
    private bool $positioned = false;
    private ?string $failure = null;
    /** @var (\Closure(): bool)|null */
    private ?\Closure $stop = null;

    /**
     * @param resource                $resource
     * @param (\Closure(string): void)|null $onData
     * @param (\Closure(): void)|null $onRewind
     */
    public function __construct(
        private $resource,
        private readonly int $start = 0,
        private readonly ?int $length = null,
        private readonly string $head = '',
        private readonly string $tail = '',
        private readonly ?\Closure $onData = null,
        private readonly ?\Closure $onRewind = null,
        private readonly bool $seekable = true,
    ) {
    }

    /** Ends the body early (failure() 'cancelled') once $stop answers true. @param \Closure(): bool $stop */
    public function stopWhen(\Closure $stop): void
    {
        $this->stop = $stop;
    }

    /** Why the body ended early (a source that failed or ended short), or null. */
    public function failure(): ?string
    {
        return $this->failure;
    }

    public function getSize(): ?int
    {
        return $this->length === null ? null : \strlen($this->head) + $this->length + \strlen($this->tail);
    }

    public function read($length): string
    {
        $length = max(1, (int) $length);
        $headLength = \strlen($this->head);
        if ($this->pos < $headLength) {
            $piece = substr($this->head, $this->pos, $length);
            $this->pos += \strlen($piece);

            return $piece;
        }
        if (!$this->sourceDone) {
            $piece = $this->readSource($length);
            if ($piece !== '') {
                $this->pos += \strlen($piece);

                return $piece;
            }
            if ($this->failure !== null) {
                return '';
            }
        }
        $tailAt = $this->pos - $headLength - $this->sourceRead;
        $piece = substr($this->tail, $tailAt, $length);
        $this->pos += \strlen($piece);

        return $piece;
    }

    private function readSource(int $length): string
    {
        if ($this->stop !== null && ($this->stop)()) {
            $this->failure = 'cancelled';
            $this->sourceDone = true;

            return '';
        }
        if (!$this->positioned) {
            $this->positioned = true;
            if ($this->seekable && @fseek($this->resource, $this->start) !== 0) {
                $this->failure = 'could not seek the upload source to byte ' . $this->start;
                $this->sourceDone = true;

                return '';
            }
        }
        $want = $this->length === null ? $length : min($length, $this->length - $this->sourceRead);
        if ($want <= 0) {
            $this->sourceDone = true;

            return '';
        }
        $data = @fread($this->resource, min($want, self::PIECE));
        if ($data === false) {
            $this->failure = 'could not read the upload source: ' . (error_get_last()['message'] ?? 'read error');
            $this->sourceDone = true;

            return '';
        }
        if ($data === '') {
            if (feof($this->resource)) {
                $this->sourceDone = true;
                if ($this->length !== null && $this->sourceRead < $this->length) {
                    $this->failure = "the upload source ended after {$this->sourceRead} of its {$this->length} bytes";
                }
            }

            return '';
        }
        $this->sourceRead += \strlen($data);
        if ($this->onData !== null) {
            ($this->onData)($data);
        }

        return $data;
    }

    public function eof(): bool
    {
        return $this->sourceDone && $this->pos >= \strlen($this->head) + $this->sourceRead + \strlen($this->tail);
    }

    public function tell(): int
    {
        return $this->pos;
    }

    public function isSeekable(): bool
    {
        return $this->seekable;
    }

    public function seek($offset, $whence = \SEEK_SET): void
    {
        if (!$this->seekable || (int) $offset !== 0 || $whence !== \SEEK_SET) {
            throw new \RuntimeException('this upload body can only be rewound to its start');
        }
        $this->pos = 0;
        $this->sourceRead = 0;
        $this->sourceDone = false;
        $this->positioned = false;
        $this->failure = null;
        if ($this->onRewind !== null) {
            ($this->onRewind)();
        }
    }

    public function rewind(): void
    {
        $this->seek(0);
    }

    public function getContents(): string
    {
        $out = '';
        while (!$this->eof()) {
            $piece = $this->read(self::PIECE);
            if ($piece === '' && $this->failure !== null) {
                break;
            }
            $out .= $piece;
        }

        return $out;
    }

    /**
     * Reads the rest of the body and drops it: the source's bytes still go through `onData`. For
     * an answer that came before the body was sent whole (an idempotent replay): the SHA-256 of the
     * whole source is still needed.
     */
    public function drain(): void
    {
        while (!$this->eof()) {
            if ($this->read(self::PIECE) === '' && $this->failure !== null) {
                return;
            }
        }
    }

    public function __toString(): string
    {
        try {
            if ($this->seekable && $this->pos !== 0) {
                $this->rewind();
            }

            return $this->getContents();
        } catch (\Throwable) {
            return '';
        }
    }

    public function close(): void
    {
    }

    public function detach()
    {
        return null;
    }

    public function isWritable(): bool
    {
        return false;
    }

    public function write($string): int
    {
        throw new \RuntimeException('an upload body is not writable');
    }

    public function isReadable(): bool
    {
        return true;
    }

    public function getMetadata($key = null)
    {
        return $key === null ? [] : null;
    }
}
