<?php

declare(strict_types=1);

namespace Fileshare\Internal;

use Fileshare\Exception\BadRequestException;
use Fileshare\Exception\ConfigurationException;
use Fileshare\Exception\FileshareException;
use Fileshare\Exception\IntegrityException;
use Fileshare\Exception\ServerException;
use Fileshare\Model\FileRecord;
use Fileshare\UploadSource;

/**
 * Resumable uploads through /uploads (tus 1.0.0 with the checksum extension): create, then PATCH
 * chunk after chunk with `Upload-Checksum: sha256 …`. A chunk that fails with a retryable error,
 * 409, 423 or 460 is resumed where the server stands (HEAD), up to maxRetries times in a row;
 * each chunk that gets through resets the count. An upload that fails for good is deleted, unless
 * the idempotency key is the caller's and the failure was the connection's or the server's (a
 * retryable error): then a later call with the key continues it.
 *
 * The creation POST carries the call's `Idempotency-Key`: when its answer is the one stored for
 * the key's first use (`Idempotent-Replayed: true`), the upload it names may have moved on, so
 * the SDK asks where it stands (HEAD) and carries on from there (or only checks the SHA-256 of an
 * upload that is complete).
 *
 * Memory stays flat: a seekable source of known size is sent region by region straight from its
 * handle; any other source is buffered one chunk at a time in php://temp (which spills to disk).
 *
 * @internal
 */
final class Tus
{
    private const TUS = ['Tus-Resumable' => '1.0.0'];
    private const PIECE = 1 << 20;

    /**
     * What OPTIONS /uploads says; null when it got no answer (ask again next time).
     *
     * @return array{available: bool, checksum: bool, max_size: ?int}|null
     */
    public static function detect(Http $http): ?array
    {
        try {
            $response = $http->send($http->build('OPTIONS', $http->url('/uploads'), [], false));
        } catch (FileshareException) {
            return null;
        }
        $list = static fn (string $name): array => array_map('trim', explode(',', $response->getHeaderLine($name)));
        $maxSize = $response->getHeaderLine('Tus-Max-Size');

        return [
            'available' => $response->getStatusCode() < 300 && \in_array('1.0.0', $list('Tus-Version'), true)
                && \in_array('creation', $list('Tus-Extension'), true),
            'checksum' => \in_array('checksum', $list('Tus-Extension'), true) && \in_array('sha256', $list('Tus-Checksum-Algorithm'), true),
            'max_size' => ctype_digit($maxSize) ? (int) $maxSize : null,
        ];
    }

    /** @var resource|null php://temp holding bytes from $offset on (sources read once) */
    private $buffer = null;
    private int $buffered = 0;
    private string $pending = '';
    private bool $sourceEnded = false;

    /** @param (callable(int, ?int): void)|null $onProgress */
    private function __construct(
        private readonly Http $http,
        private readonly UploadSource $source,
        private readonly int $chunkSize,
        private readonly bool $checksum,
        private readonly mixed $onProgress,
    ) {
    }

    /**
     * @param (callable(int, ?int): void)|null $onProgress
     * @param array<string, string>            $createHeaders  sent on the creation POST (Idempotency-Key, Fileshare-Expires-In)
     * @param bool                              $keepUnfinished the key is the caller's: an upload that fails on the
     *                                                          connection or the server is kept (not deleted), for a
     *                                                          later call with the key to continue
     * @param bool|null                         $keepOnFailure  true: never delete an upload that failed; false: always;
     *                                                          null: as $keepUnfinished says
     * @param (callable(string): void)|null     $onCreated      receives the upload's URL once it exists (before any byte)
     * @param string|null                       $uploadUrl      continue this upload (HEAD, then from its offset) instead of creating one
     */
    public static function upload(
        Http $http,
        UploadSource $source,
        string $filename,
        ?string $contentType,
        int $chunkSize,
        bool $checksum,
        ?callable $onProgress,
        array $createHeaders = [],
        bool $keepUnfinished = false,
        ?bool $keepOnFailure = null,
        ?callable $onCreated = null,
        ?string $uploadUrl = null,
    ): FileRecord {
        return (new self($http, $source, $chunkSize, $checksum, $onProgress))
            ->run($filename, $contentType, $createHeaders, $keepUnfinished, $keepOnFailure, $onCreated, $uploadUrl);
    }

    /**
     * An `upload_url` the caller gave, checked: an upload of this client's server (the API key is
     * sent to it), `{base_url}/uploads/<id>`.
     */
    public static function checkUploadUrl(Http $http, string $url): string
    {
        $prefix = $http->url('/uploads/');
        if (!str_starts_with($url, $prefix) || preg_match('#^[A-Za-z0-9._~-]+$#', substr($url, \strlen($prefix))) !== 1) {
            throw new ConfigurationException("upload_url must be an upload of this client's server, {$prefix}<id> (as on_upload_created gave it)");
        }

        return $url;
    }

    private function progress(int $sent, ?int $total): void
    {
        if ($this->onProgress !== null) {
            ($this->onProgress)($sent, $total);
        }
    }

    /**
     * @param array<string, string>         $createHeaders
     * @param (callable(string): void)|null $onCreated
     */
    private function run(string $filename, ?string $contentType, array $createHeaders, bool $keepUnfinished, ?bool $keepOnFailure,
        ?callable $onCreated, ?string $uploadUrl): FileRecord
    {
        $http = $this->http;
        $size = $this->source->size;
        $replayed = false;
        if ($uploadUrl !== null) {
            // Continue an upload made earlier (maybe by another process): where does it stand?
            [$head] = $http->call('HEAD', $uploadUrl, self::TUS);
            $length = $head->getHeaderLine('Upload-Length');
            if ($size !== null && ctype_digit($length) && (int) $length !== $size) {
                throw new ConfigurationException("the upload at upload_url is $length bytes long, but the source has $size");
            }
            $from = self::offset($head->getHeaderLine('Upload-Offset'), $size);
            $fileId = $head->getHeaderLine('Fileshare-File-Id');
            $http->log->log('info', "continuing the upload $uploadUrl from byte $from");
        } else {
            $metadata = 'filename ' . base64_encode($filename);
            if ($contentType !== null && $contentType !== '') {
                $metadata .= ',filetype ' . base64_encode($contentType);
            }
            $createUrl = $http->url('/uploads');
            $headers = self::TUS + ['Upload-Metadata' => $metadata] + $createHeaders
                + ($size === null ? ['Upload-Defer-Length' => '1'] : ['Upload-Length' => (string) $size]);
            [$created] = $http->call('POST', $createUrl, $headers);
            $location = $created->getHeaderLine('Location');
            if ($location === '') {
                throw ErrorFactory::unexpected($created, 'the server created an upload without a Location', ServerException::class);
            }
            $uploadUrl = Http::resolve($createUrl, $location);
            $fileId = $created->getHeaderLine('Fileshare-File-Id');
            $from = 0;
            $replayed = Http::isReplayed($created);
            if ($replayed && $fileId === '') {
                // Made by an earlier request with this key (this call's, whose answer was lost, or the
                // caller's): continue where the upload stands.
                [$head] = $http->call('HEAD', $uploadUrl, self::TUS);
                $from = self::offset($head->getHeaderLine('Upload-Offset'), $size);
                $fileId = $head->getHeaderLine('Fileshare-File-Id');
            }
            $http->log->log('info', "resumable upload $uploadUrl " . ($replayed ? "(replayed, from byte $from)" : 'created'));
        }
        if ($onCreated !== null) {
            $onCreated($uploadUrl);
        }

        try {
            $fileHash = $this->sendChunks($uploadUrl, $from, $fileId !== '');
        } catch (\Throwable $error) {
            $keep = $keepOnFailure ?? ($keepUnfinished && !($error instanceof FileshareException && !Http::isRetryable($error)));
            if (!$keep) {
                // Give the daily upload slot and the reserved storage back; best effort (the server
                // also expires it).
                try {
                    $http->send($http->build('DELETE', $uploadUrl, self::TUS));
                } catch (\Throwable) {
                }
            }
            throw $error;
        } finally {
            if (\is_resource($this->buffer)) {
                fclose($this->buffer);
            }
            $this->source->close();
        }

        [$status, $data] = $http->call('GET', $uploadUrl);
        $raw = $data['upload']['file'] ?? null;
        if (!\is_array($raw)) {
            throw ErrorFactory::unexpected($status, 'the upload completed but the server names no file', ServerException::class);
        }
        $file = FileRecord::fromArray($raw);
        IntegrityException::checkUpload($file, hash_final($fileHash), $replayed ? ($createHeaders[Http::IDEMPOTENCY_KEY] ?? null) : null);

        return $file;
    }

    /** An `Upload-Offset` the server gave, checked against the source's size. */
    private static function offset(string $value, ?int $size): int
    {
        if (!ctype_digit($value) || ($size !== null && (int) $value > $size)) {
            throw new FileshareException(sprintf('the upload stands at offset %s, beyond the %s bytes of the source', $value === '' ? '?' : $value, $size ?? '?'));
        }

        return (int) $value;
    }

    /**
     * Sends the source from byte $from on (the bytes before it are only hashed: the server has
     * them); with $complete only hashes what the server has, and checks that the source holds
     * nothing more.
     *
     * @return \HashContext the SHA-256 of every byte the server confirmed
     */
    private function sendChunks(string $uploadUrl, int $from, bool $complete): \HashContext
    {
        $http = $this->http;
        $size = $this->source->size;
        $handle = $this->source->open();
        $regions = $size !== null && $this->source->replayable;
        $base = $this->source->start();
        $fileHash = hash_init('sha256');
        $hashInto = static function (string $data) use (&$fileHash): void {
            hash_update($fileHash, $data);
        };
        $this->readRegion($handle, $regions ? $base : null, $from, $hashInto);
        if ($complete) {
            $more = $regions ? $from < $size : !\in_array(@fread($handle, 1), ['', false], true);
            if ($more) {
                throw new FileshareException("the upload is complete at $from bytes, but the source holds more");
            }

            return $fileHash;
        }
        $offset = $from;
        if ($from > 0) {
            $this->progress($from, $size);
        }
        $failures = 0;

        for (;;) {
            // The chunk: a region of the source itself, or the buffer.
            if ($regions) {
                $resource = $handle;
                $start = $base + $offset;
                $length = min($this->chunkSize, $size - $offset);
                $last = $offset + $length >= $size;
            } else {
                $this->fill($handle);
                $resource = $this->buffer;
                $start = 0;
                $length = $this->buffered;
                $last = $this->sourceEnded && $this->pending === '';
            }
            $chunkStart = $offset;

            // One pass before sending: the chunk's checksum, and the file's SHA-256 as it would be
            // once the chunk is in.
            $withChunk = hash_copy($fileHash);
            $chunkHash = hash_init('sha256');
            $this->readRegion($resource, $start, $length, static function (string $data) use ($withChunk, $chunkHash): void {
                hash_update($withChunk, $data);
                hash_update($chunkHash, $data);
            });
            $headers = self::TUS + [
                'Upload-Offset' => (string) $offset,
                'Content-Type' => 'application/offset+octet-stream',
                'Content-Length' => (string) $length,
            ];
            if ($this->checksum) {
                $headers['Upload-Checksum'] = 'sha256 ' . base64_encode(hash_final($chunkHash, true));
            }
            if ($size === null && $last) {
                $headers['Upload-Length'] = (string) ($offset + $length);
            }
            $sent = 0;
            $body = new BodyStream(
                $resource,
                $start,
                $length,
                onData: function (string $data) use (&$sent, $chunkStart, $size): void {
                    $sent += \strlen($data);
                    $this->progress($chunkStart + $sent, $size);
                },
                onRewind: static function () use (&$sent): void {
                    $sent = 0;
                },
            );
            try {
                [$answer] = $http->json($http->build('PATCH', $uploadUrl, $headers, true, $body));
                $failures = 0;
            } catch (FileshareException $error) {
                $resumable = Http::isRetryable($error)
                    || ($error instanceof BadRequestException && \in_array($error->getStatus(), [409, 423, 460], true));
                if (!$resumable || $failures >= $http->maxRetries) {
                    throw $error;
                }
                ++$failures;
                if ($error->getStatus() !== 409) {
                    $http->pause($failures - 1, $error);
                }
                // Where does the upload stand? (HEAD is retried on its own.)
                [$answer] = $http->call('HEAD', $uploadUrl, self::TUS);
            }
            $newOffset = $answer->getHeaderLine('Upload-Offset');
            $fileId = $answer->getHeaderLine('Fileshare-File-Id');
            if (!ctype_digit($newOffset) || (int) $newOffset < $chunkStart || (int) $newOffset > $chunkStart + $length) {
                throw new FileshareException(sprintf(
                    'the upload stands at offset %s, outside the chunk sent (%d-%d); start a new upload',
                    $newOffset === '' ? '?' : $newOffset,
                    $chunkStart,
                    $chunkStart + $length,
                ));
            }
            $kept = (int) $newOffset - $chunkStart;
            if ($kept === $length) {
                $fileHash = $withChunk;
            } elseif ($kept > 0) {
                // Part of the chunk was kept (a cut chunk without a checksum): hash that part.
                $this->readRegion($resource, $start, $kept, $hashInto);
            }
            if (!$regions) {
                $this->shift($kept);
            }
            $offset = (int) $newOffset;
            $this->progress($offset, $size);
            if ($fileId !== '') {
                return $fileHash;
            }
            $left = $regions ? $size - $offset : $this->buffered;
            if ($left === 0 && $last) {
                if ($size !== null && $offset === $size) {
                    return $fileHash; // complete, though the answer named no file: GET tells
                }
                throw new FileshareException("the source ended at $offset bytes, short of its declared " . ($size ?? '?') . ' bytes');
            }
        }
    }

    /**
     * Reads $length bytes from byte $start of $resource (null: from where it stands) into $each.
     *
     * @param resource               $resource
     * @param \Closure(string): void $each
     */
    private function readRegion($resource, ?int $start, int $length, \Closure $each): void
    {
        if ($start !== null && @fseek($resource, $start) !== 0) {
            throw new FileshareException("could not seek the upload source to byte $start");
        }
        $left = $length;
        while ($left > 0) {
            $data = @fread($resource, min(self::PIECE, $left));
            if ($data === false || $data === '') {
                throw new FileshareException("the upload source ended or failed at byte " . (($start ?? 0) + $length - $left));
            }
            $each($data);
            $left -= \strlen($data);
        }
    }

    /** Tops the buffer up to one chunk from the source (sources that are read once). @param resource $handle */
    private function fill($handle): void
    {
        if ($this->buffer === null) {
            $buffer = fopen('php://temp/maxmemory:' . (2 << 20), 'w+b');
            if ($buffer === false) {
                throw new ConfigurationException('cannot open php://temp to buffer a chunk');
            }
            $this->buffer = $buffer;
        }
        fseek($this->buffer, $this->buffered);
        while ($this->buffered < $this->chunkSize) {
            if ($this->pending === '') {
                if ($this->sourceEnded) {
                    break;
                }
                $data = @fread($handle, min(self::PIECE, $this->chunkSize - $this->buffered));
                if ($data === false) {
                    throw new FileshareException('could not read the upload source: ' . (error_get_last()['message'] ?? 'read error'));
                }
                if ($data === '') {
                    if (feof($handle)) {
                        $this->sourceEnded = true;
                    }
                    continue;
                }
                $this->pending = $data;
            }
            $take = min(\strlen($this->pending), $this->chunkSize - $this->buffered);
            fwrite($this->buffer, substr($this->pending, 0, $take));
            $this->pending = (string) substr($this->pending, $take);
            $this->buffered += $take;
        }
        // Peek, so that the last full chunk knows it is the last (a deferred length is declared on it).
        while ($this->buffered === $this->chunkSize && $this->pending === '' && !$this->sourceEnded) {
            $data = @fread($handle, 8192);
            if ($data === false || ($data === '' && feof($handle))) {
                $this->sourceEnded = true;
            } elseif ($data !== '') {
                $this->pending = $data;
            }
        }
    }

    /** Drops the first $kept bytes of the buffer (the server has them). */
    private function shift(int $kept): void
    {
        if ($kept === 0) {
            return;
        }
        $rest = $this->buffered - $kept;
        $next = fopen('php://temp/maxmemory:' . (2 << 20), 'w+b');
        if ($next === false) {
            throw new ConfigurationException('cannot open php://temp to buffer a chunk');
        }
        if ($rest > 0) {
            fseek($this->buffer, $kept);
            stream_copy_to_stream($this->buffer, $next, $rest);
        }
        fclose($this->buffer);
        $this->buffer = $next;
        $this->buffered = $rest;
    }
}
