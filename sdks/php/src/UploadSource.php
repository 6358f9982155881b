<?php

declare(strict_types=1);

namespace Fileshare;

use Fileshare\Exception\ConfigurationException;
use GuzzleHttp\Psr7\StreamWrapper;
use Psr\Http\Message\StreamInterface;

/**
 * What an upload reads: a path, bytes, or a stream. `$client->files->upload()` takes a path
 * (string or SplFileInfo), a PHP stream resource, a PSR-7 StreamInterface, or one of these;
 * bytes need UploadSource::fromBytes() (a plain string is a path).
 */
final class UploadSource
{
    /** @var resource|null */
    private $resource = null;
    private bool $used = false;

    /**
     * @param (\Closure(): resource)|null $opener opens a fresh handle (paths)
     * @param resource|null               $resource
     */
    private function __construct(
        /** Bytes to send, when known (a stream of unknown length: null). */
        public readonly ?int $size,
        /** The file name the source suggests (a path's base name), if any. */
        public readonly ?string $name,
        /** Can be read again from the start (a path, bytes, a seekable stream). */
        public readonly bool $replayable,
        private readonly ?\Closure $opener,
        $resource,
        private readonly int $start,
        private readonly bool $ownsResource,
    ) {
        $this->resource = $resource;
    }

    public function __destruct()
    {
        $this->close();
    }

    public static function fromPath(string|\SplFileInfo $path): self
    {
        $path = $path instanceof \SplFileInfo ? $path->getPathname() : $path;
        if ($path === '' || str_contains($path, "\0") || \strlen($path) > \PHP_MAXPATHLEN || !is_file($path)) {
            throw new ConfigurationException('no such file: ' . self::describe($path));
        }
        if (!is_readable($path)) {
            throw new ConfigurationException('cannot read the file: ' . self::describe($path));
        }
        clearstatcache(true, $path);
        $size = filesize($path);
        $opener = static function () use ($path) {
            $handle = @fopen($path, 'rb');
            if ($handle === false) {
                throw new ConfigurationException('cannot open the file: ' . self::describe($path));
            }

            return $handle;
        };

        return new self($size === false ? null : $size, basename($path), true, $opener, null, 0, true);
    }

    /**
     * A string given as a path, as an exception message may show it: a path-like string in
     * quotes (at most 200 characters), anything else (bytes, a body, a secret) only by its length,
     * never whole.
     */
    public static function describe(string $path, bool $upload = true): string
    {
        if ($path === '') {
            return 'an empty string';
        }
        if (\strlen($path) > 200 || preg_match('/[\x00-\x1F\x7F]/', $path) === 1 || preg_match('//u', $path) !== 1) {
            return sprintf('a %d-byte string that is not a path', \strlen($path))
                . ($upload ? ' (to upload bytes, use $client->files->uploadBytes() or UploadSource::fromBytes())' : '');
        }

        return json_encode($path, \JSON_UNESCAPED_SLASHES | \JSON_UNESCAPED_UNICODE) ?: '?';
    }

    public static function fromBytes(string $bytes, ?string $name = null): self
    {
        $handle = fopen('php://temp', 'w+b');
        if ($handle === false) {
            throw new ConfigurationException('cannot buffer the bytes (php://temp)');
        }
        fwrite($handle, $bytes);
        rewind($handle);

        return new self(\strlen($bytes), $name, true, null, $handle, 0, true);
    }

    /**
     * A PHP stream resource (read from its current position) or a PSR-7 stream. A seekable
     * stream can be sent again (retries, resumable uploads without buffering); a one-shot stream
     * (a pipe, a socket, php://stdin) cannot. $size: the bytes it will give, if it cannot tell.
     *
     * @param resource|StreamInterface $stream
     */
    public static function fromStream($stream, ?int $size = null, ?string $name = null): self
    {
        if ($stream instanceof StreamInterface) {
            if ($size === null && $stream->getSize() !== null) {
                $size = max(0, $stream->getSize() - ($stream->isSeekable() ? $stream->tell() : 0));
            }
            $stream = StreamWrapper::getResource($stream);
        }
        if (!\is_resource($stream) || get_resource_type($stream) !== 'stream') {
            throw new ConfigurationException('unsupported upload source: pass a path, UploadSource::fromBytes(), a stream resource or a PSR-7 stream');
        }
        $meta = stream_get_meta_data($stream);
        $seekable = (bool) ($meta['seekable'] ?? false);
        $start = 0;
        if ($seekable) {
            $position = ftell($stream);
            $start = $position === false ? 0 : $position;
            $seekable = $position !== false;
        }
        if ($size === null) {
            $stat = @fstat($stream);
            // A regular file knows its size.
            if ($seekable && \is_array($stat) && ($stat['mode'] & 0170000) === 0100000) {
                $size = max(0, $stat['size'] - $start);
            }
        }
        if ($name === null && isset($meta['uri']) && \is_string($meta['uri']) && is_file($meta['uri'])) {
            $name = basename($meta['uri']);
        }

        return new self($size, $name, $seekable, null, $stream, $start, false);
    }

    /** A path (string or SplFileInfo), a stream resource, a PSR-7 stream, or an UploadSource. */
    public static function from(mixed $source): self
    {
        return match (true) {
            $source instanceof self => $source,
            \is_string($source), $source instanceof \SplFileInfo => self::fromPath($source),
            $source instanceof StreamInterface, \is_resource($source) => self::fromStream($source),
            default => throw new ConfigurationException('unsupported upload source ' . get_debug_type($source)
                . ': pass a path, UploadSource::fromBytes(), a stream resource or a PSR-7 stream'),
        };
    }

    /**
     * A handle positioned at the start of the source's bytes.
     *
     * @internal
     *
     * @return resource
     */
    public function open()
    {
        if ($this->opener !== null) {
            $this->close();
            $this->resource = ($this->opener)();
        } elseif ($this->used) {
            if (!$this->replayable || @fseek($this->resource, $this->start) !== 0) {
                throw new ConfigurationException('this upload source is a one-shot stream that was already read');
            }
        }
        $this->used = true;

        return $this->resource;
    }

    /** @internal the byte of the handle where the source starts (seekable streams) */
    public function start(): int
    {
        return $this->opener !== null ? 0 : $this->start;
    }

    /** @internal */
    public function close(): void
    {
        if ($this->ownsResource && $this->opener !== null && \is_resource($this->resource)) {
            fclose($this->resource);
            $this->resource = null;
        }
    }
}
