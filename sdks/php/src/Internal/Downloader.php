<?php

declare(strict_types=1);

namespace Fileshare\Internal;

use Fileshare\Exception\APIConnectionException;
use Fileshare\Exception\ConfigurationException;
use Fileshare\Exception\FileshareException;
use Fileshare\Exception\IntegrityException;
use Fileshare\Model\DownloadResult;
use Fileshare\Model\FileRecord;
use Fileshare\Model\Link;
use Fileshare\UploadSource;
use Psr\Http\Message\ResponseInterface;
use Psr\Http\Message\StreamInterface;

/**
 * download(): asks the link for a grant (POST, which counts one download; see Grant), then
 * streams the grant URL to a path or a stream, resumes a partial file with Range + If-Range,
 * continues after a dropped connection through the same grant (which counts nothing more), and
 * checks the result against the ETag.
 *
 * @internal
 */
final class Downloader implements ResponseSink
{
    private ?string $path = null;
    /** @var resource|null */
    private $file = null;
    /** @var resource|StreamInterface|null */
    private $stream = null;
    private int $startAt = 0;
    private \HashContext $hash;
    private int $offset = 0;
    private int $resumedFrom = 0;
    private ?string $expected;
    private ?int $total;
    /** 'body', 'error', 'restart' (a 416 on a resume) */
    private string $mode = 'body';
    private string $errorBody = '';
    /** The grant URL, once the link gave one: every GET and HEAD goes there. */
    private ?string $grant = null;

    /** @param (callable(int, ?int): void)|null $onProgress */
    private function __construct(
        private readonly Http $http,
        private readonly string $link,
        #[\SensitiveParameter] private readonly ?string $password,
        ?string $expected,
        ?int $total,
        private readonly mixed $onProgress,
    ) {
        $this->expected = $expected;
        $this->total = $total;
        $this->hash = hash_init('sha256');
    }

    /**
     * @param FileRecord|Link|string                       $fileOrLink
     * @param string|\SplFileInfo|resource|StreamInterface $destination
     * @param (callable(int, ?int): void)|null             $onProgress
     */
    public static function download(
        Http $http,
        mixed $fileOrLink,
        mixed $destination,
        ?callable $onProgress,
        bool $resume,
        #[\SensitiveParameter] ?string $password = null,
    ): DownloadResult {
        $link = match (true) {
            $fileOrLink instanceof FileRecord => $fileOrLink->public_link,
            $fileOrLink instanceof Link => $fileOrLink->url,
            default => $fileOrLink,
        };
        if (!\is_string($link) || preg_match('#^https?://#i', $link) !== 1) {
            throw new ConfigurationException('download needs a FileRecord, a Link, or a link URL');
        }
        $self = new self(
            $http,
            $link,
            $password,
            $fileOrLink instanceof FileRecord && $fileOrLink->sha256 !== '' ? $fileOrLink->sha256 : null,
            $fileOrLink instanceof FileRecord ? $fileOrLink->size : null,
            $onProgress,
        );
        $existing = 0;
        if (\is_string($destination) || $destination instanceof \SplFileInfo) {
            $self->path = (string) $destination;
            if ($self->path === '' || is_dir($self->path)) {
                throw new ConfigurationException('download destination is a directory: ' . UploadSource::describe($self->path, false));
            }
            clearstatcache(true, $self->path);
            $existing = $resume && is_file($self->path) ? (int) filesize($self->path) : 0;
        } elseif ($destination instanceof StreamInterface || (\is_resource($destination) && get_resource_type($destination) === 'stream')) {
            $self->stream = $destination;
        } else {
            throw new ConfigurationException('unsupported download destination ' . get_debug_type($destination)
                . ': pass a path, a writable stream resource or a PSR-7 stream');
        }
        try {
            return $self->run($existing);
        } finally {
            $self->closeFile();
        }
    }

    private function progress(): void
    {
        if ($this->onProgress !== null) {
            ($this->onProgress)($this->offset, $this->total);
        }
    }

    private static function etag(string $value): ?string
    {
        return preg_match('/^(?:W\/)?"([0-9a-fA-F]{64})"$/', trim($value), $m) === 1 ? strtolower($m[1]) : null;
    }

    private function run(int $existing): DownloadResult
    {
        $http = $this->http;
        $known = $this->expected !== null && $this->total !== null;
        if ($existing > 0 && $known) {
            // A record tells the size and SHA-256: a complete file is checked before anything is counted.
            $done = $this->keepExisting($existing);
            if ($done !== null) {
                return $done;
            }
        }
        $this->grant = Grant::isGrantUrl($this->link) ? $this->link : Grant::obtain($http, $this->link, $this->password);
        if ($existing > 0 && !$known) {
            // A link alone: HEAD on the grant (counted already, nothing more) tells the ETag and the size.
            [$head] = $http->call('HEAD', $this->grant, ['Accept' => '*/*'], false);
            $this->expected = self::etag($head->getHeaderLine('ETag'));
            $length = $head->getHeaderLine('Content-Length');
            $this->total = ctype_digit($length) ? (int) $length : null;
            if ($this->expected !== null && $this->total !== null) {
                $done = $this->keepExisting($existing);
                if ($done !== null) {
                    return $done;
                }
            }
        }

        $this->startAt = $this->offset;
        $failures = 0;
        for (;;) {
            $headers = ['Accept' => '*/*'];
            if ($this->offset > 0) {
                $headers['Range'] = "bytes={$this->offset}-";
                if ($this->expected !== null) {
                    $headers['If-Range'] = "\"{$this->expected}\"";
                }
            }
            $before = $this->offset;
            $this->mode = 'body';
            $this->errorBody = '';
            try {
                $response = $http->send($http->build('GET', $this->grant, $headers, false), $this);
                if ($this->mode === 'restart') {
                    $this->restart();
                    continue;
                }
                if ($this->mode === 'error') {
                    throw ErrorFactory::fromResponse($response, $this->errorBody);
                }
                if ($this->total !== null && $this->offset < $this->total) {
                    throw new APIConnectionException("the connection ended after {$this->offset} of {$this->total} bytes");
                }
                break;
            } catch (FileshareException $error) {
                if ($this->offset > $before) {
                    $failures = 0; // progress was made: the budget starts again
                }
                $canResume = $this->offset === 0 || $this->path !== null || $this->expected !== null;
                if (!Http::isRetryable($error) || $failures >= $http->maxRetries || !$canResume) {
                    throw $error;
                }
                $http->pause($failures, $error);
                ++$failures;
            }
        }

        $actual = hash_final($this->hash);
        if ($this->expected !== null && $actual !== $this->expected) {
            throw new IntegrityException(
                "the downloaded bytes hash to $actual, not to the ETag's {$this->expected}"
                . ($this->resumedFrom > 0 ? " (the download continued a partial file of {$this->resumedFrom} bytes: download again with 'resume' => false)" : ''),
                $this->expected,
                $actual,
            );
        }
        if ($this->path !== null && $this->file === null) {
            $this->openFile(); // an empty file is still a file
        }

        return new DownloadResult($this->offset, $actual, $this->resumedFrom, $this->grant);
    }

    /**
     * Keeps the first $existing bytes of the destination when they can be this file's beginning
     * (hashed, so the whole is checked at the end). A complete file that matches is the result.
     */
    private function keepExisting(int $existing): ?DownloadResult
    {
        if ($existing > (int) $this->total) {
            return null;
        }
        $this->hashExisting($existing);
        $this->offset = $this->resumedFrom = $existing;
        if ($existing === $this->total) {
            $actual = hash_final(hash_copy($this->hash));
            if ($actual === $this->expected) {
                $this->progress();
                $this->startAt = $existing;

                return new DownloadResult($existing, $actual, $existing, $this->grant);
            }
            // Complete length but other bytes: start again.
            $this->offset = $this->resumedFrom = 0;
            $this->hash = hash_init('sha256');
        }

        return null;
    }

    public function begin(ResponseInterface $response): void
    {
        $status = $response->getStatusCode();
        if ($status === 416 && $this->offset > 0 && $this->path !== null) {
            $this->mode = 'restart';

            return;
        }
        if ($status !== 200 && $status !== 206) {
            $this->mode = 'error';

            return;
        }
        $this->mode = 'body';
        $etag = self::etag($response->getHeaderLine('ETag'));
        if ($etag !== null && $this->expected !== null && $etag !== $this->expected && $this->offset === 0) {
            $this->expected = $etag;
        }
        $this->expected ??= $etag;
        if ($status === 200) {
            $length = $response->getHeaderLine('Content-Length');
            if (ctype_digit($length)) {
                $this->total = (int) $length;
            }
            if ($this->offset > 0) {
                // The server sent the whole file (If-Range did not match): start over.
                if ($this->path === null) {
                    throw new FileshareException('the server restarted the download from byte 0, which a stream destination cannot take');
                }
                $this->restart();
            }
        } else {
            if (preg_match('/^bytes (\d+)-(\d+)\/(\d+)$/', $response->getHeaderLine('Content-Range'), $m) !== 1
                || (int) $m[1] !== $this->offset) {
                throw new FileshareException("unexpected Content-Range '{$response->getHeaderLine('Content-Range')}' for a download from byte {$this->offset}");
            }
            $this->total = (int) $m[3];
        }
        $this->progress();
    }

    public function write(string $data): void
    {
        if ($this->mode === 'error') {
            if (\strlen($this->errorBody) < 65536) {
                $this->errorBody .= $data;
            }

            return;
        }
        if ($this->mode !== 'body') {
            return;
        }
        hash_update($this->hash, $data);
        $this->put($data);
        $this->offset += \strlen($data);
        $this->progress();
    }

    private function put(string $data): void
    {
        if ($this->path !== null) {
            if ($this->file === null) {
                $this->openFile();
            }
            $target = $this->file;
        } else {
            $target = $this->stream;
        }
        if ($target instanceof StreamInterface) {
            $target->write($data);

            return;
        }
        $left = $data;
        while ($left !== '') {
            $written = @fwrite($target, $left);
            if ($written === false || $written === 0) {
                throw new FileshareException('could not write the download: ' . (error_get_last()['message'] ?? 'write error'));
            }
            $left = substr($left, $written);
        }
    }

    private function openFile(): void
    {
        $file = @fopen((string) $this->path, 'c+b');
        if ($file === false) {
            throw new ConfigurationException('cannot open the download destination: ' . UploadSource::describe($this->path, false));
        }
        ftruncate($file, $this->startAt);
        fseek($file, $this->startAt);
        $this->file = $file;
    }

    private function closeFile(): void
    {
        if ($this->file !== null) {
            fclose($this->file);
            $this->file = null;
        }
    }

    private function restart(): void
    {
        $this->startAt = 0;
        $this->offset = $this->resumedFrom = 0;
        $this->hash = hash_init('sha256');
        if ($this->file !== null) {
            ftruncate($this->file, 0);
            rewind($this->file);
        }
    }

    private function hashExisting(int $length): void
    {
        $file = @fopen((string) $this->path, 'rb');
        if ($file === false) {
            throw new ConfigurationException('cannot read the partial download: ' . UploadSource::describe($this->path, false));
        }
        try {
            $read = hash_update_stream($this->hash, $file, $length);
            if ($read !== $length) {
                throw new FileshareException('the partial download ' . UploadSource::describe($this->path, false) . ' changed while it was read');
            }
        } finally {
            fclose($file);
        }
    }
}
