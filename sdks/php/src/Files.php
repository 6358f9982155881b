<?php

declare(strict_types=1);

namespace Fileshare;

use Fileshare\Exception\ConfigurationException;
use Fileshare\Exception\IntegrityException;
use Fileshare\Internal\BodyStream;
use Fileshare\Internal\Http;
use Fileshare\Internal\Params;
use Fileshare\Internal\Tus;
use Fileshare\Model\FileList;
use Fileshare\Model\FileRecord;
use Psr\Http\Message\StreamInterface;

/** `$client->files`: upload, list, iterate, get, update, delete. */
final class Files
{
    /**
     * @internal
     *
     * @param \Closure(): array{available: bool, checksum: bool, max_size: ?int} $tus
     */
    public function __construct(
        private readonly Http $http,
        private readonly int $resumableThreshold,
        private readonly int $chunkSize,
        private readonly \Closure $tus,
    ) {
    }

    /**
     * Uploads a file and returns its record.
     *
     * $source: a path (string or SplFileInfo), a stream resource, a PSR-7 stream, or an
     * UploadSource (UploadSource::fromBytes($bytes) for bytes in memory). Read as it is sent, in
     * constant memory. The SHA-256 of the bytes sent is compared with the server's `sha256`: a
     * mismatch throws IntegrityException.
     *
     * Options: `filename` (default: the path's base name, else "file"), `content_type`,
     * `on_progress` (callable(int $bytesSent, ?int $totalBytes)), `resumable` (true: always
     * through resumable uploads, false: never, default: from `resumable_threshold` on when the
     * server offers them), `chunk_size` (resumable uploads), `size` (of a stream that cannot tell),
     * `expires_in` (seconds, 1..315360000: the file and its links are gone after that; sent as
     * `Fileshare-Expires-In`).
     *
     * @param string|\SplFileInfo|resource|StreamInterface|UploadSource $source
     * @param array{filename?: string, content_type?: string, on_progress?: callable(int, ?int): void, resumable?: bool|null, chunk_size?: int, size?: int, expires_in?: int|null} $options
     */
    public function upload(mixed $source, array $options = []): FileRecord
    {
        $unknown = array_diff(array_keys($options), ['filename', 'content_type', 'on_progress', 'resumable', 'chunk_size', 'size', 'expires_in']);
        if ($unknown !== []) {
            throw new ConfigurationException('unknown upload option(s): ' . implode(', ', $unknown));
        }
        if (isset($options['size']) && \is_resource($source)) {
            $prepared = UploadSource::fromStream($source, (int) $options['size']);
        } elseif (isset($options['size']) && $source instanceof StreamInterface) {
            $prepared = UploadSource::fromStream($source, (int) $options['size']);
        } else {
            $prepared = UploadSource::from($source);
        }
        $filename = (string) ($options['filename'] ?? $prepared->name ?? 'file');
        if ($filename === '') {
            $filename = 'file';
        }
        $chunkSize = $options['chunk_size'] ?? $this->chunkSize;
        if (!\is_int($chunkSize) || $chunkSize < 1) {
            throw new ConfigurationException('chunk_size must be a positive integer');
        }
        $onProgress = $options['on_progress'] ?? null;
        if ($onProgress !== null && !\is_callable($onProgress)) {
            throw new ConfigurationException('on_progress must be callable');
        }
        $expiresIn = $options['expires_in'] ?? null;
        if ($expiresIn !== null && !\is_int($expiresIn)) {
            throw new ConfigurationException('expires_in is a number of seconds (an integer)');
        }
        $headers = $expiresIn === null ? [] : ['Fileshare-Expires-In' => (string) $expiresIn];
        $resumable = $options['resumable'] ?? null;
        $useTus = $resumable === true;
        if ($resumable === null && $prepared->size !== null && $prepared->size >= $this->resumableThreshold) {
            $useTus = (($this->tus)())['available'];
        }
        if ($useTus) {
            $capabilities = ($this->tus)();
            if (!$capabilities['available']) {
                throw new ConfigurationException('the server does not offer resumable uploads (OPTIONS /uploads)');
            }

            return Tus::upload($this->http, $prepared, $filename, $options['content_type'] ?? null, $chunkSize, $capabilities['checksum'], $onProgress, $headers);
        }

        return $this->uploadMultipart($prepared, $filename, $options['content_type'] ?? null, $onProgress, $headers);
    }

    /**
     * @param (callable(int, ?int): void)|null $onProgress
     * @param array<string, string>            $extraHeaders
     */
    private function uploadMultipart(UploadSource $source, string $filename, ?string $contentType, ?callable $onProgress, array $extraHeaders): FileRecord
    {
        $http = $this->http;
        $boundary = '----fileshare-sdk-php-' . bin2hex(random_bytes(16));
        $safeName = str_replace(['"', "\r", "\n"], ['%22', '%0D', '%0A'], $filename);
        $partType = str_replace(["\r", "\n"], '', $contentType ?? 'application/octet-stream');
        $head = "--$boundary\r\nContent-Disposition: form-data; name=\"file\"; filename=\"$safeName\"\r\nContent-Type: $partType\r\n\r\n";
        $tail = "\r\n--$boundary--\r\n";
        $total = $source->size;
        $url = $http->url('/files/upload');

        try {
            [$file, $actual] = $http->retry(function () use ($http, $source, $head, $tail, $total, $url, $boundary, $onProgress, $extraHeaders): array {
                $hash = hash_init('sha256');
                $sent = 0;
                $body = new BodyStream(
                    $source->open(),
                    $source->start(),
                    $total,
                    $head,
                    $tail,
                    onData: static function (string $data) use (&$hash, &$sent, $total, $onProgress): void {
                        hash_update($hash, $data);
                        $sent += \strlen($data);
                        if ($onProgress !== null) {
                            $onProgress($sent, $total);
                        }
                    },
                    onRewind: static function () use (&$hash, &$sent): void {
                        $hash = hash_init('sha256');
                        $sent = 0;
                    },
                    seekable: $source->replayable,
                );
                if ($onProgress !== null) {
                    $onProgress(0, $total);
                }
                $headers = ['Content-Type' => "multipart/form-data; boundary=$boundary"] + $extraHeaders;
                if ($body->getSize() !== null) {
                    // A declared length lets the server refuse a file that is too large before it is sent.
                    $headers['Content-Length'] = (string) $body->getSize();
                }
                [, $data] = $http->json($http->build('POST', $url, $headers, true, $body));

                return [FileRecord::fromArray($data), hash_final($hash)];
            }, static fn (): bool => $source->replayable);
        } finally {
            $source->close();
        }
        if ($file->sha256 !== $actual) {
            throw new IntegrityException(
                "the server stored file {$file->file_id} with SHA-256 {$file->sha256}, but the bytes sent hash to $actual",
                $file->sha256,
                $actual,
            );
        }
        if ($onProgress !== null) {
            $onProgress($file->size, $total ?? $file->size);
        }

        return $file;
    }

    /** One page of the account's files, newest first (`page` from 1, `limit` 1 to 100, server default 20). */
    public function list(?int $page = null, ?int $limit = null): FileList
    {
        [, $data] = $this->http->call('GET', $this->http->url('/files', ['page' => $page, 'limit' => $limit]));

        return FileList::fromArray($data);
    }

    /**
     * Every file of the account, page after page (`limit` per request). A file is never yielded
     * twice, even when uploads during the iteration shift the pages.
     *
     * @return \Generator<int, FileRecord>
     */
    public function iterate(int $limit = 100): \Generator
    {
        $seen = [];
        for ($page = 1; ; ++$page) {
            $list = $this->list($page, $limit);
            foreach ($list->files as $file) {
                if (isset($seen[$file->file_id])) {
                    continue;
                }
                $seen[$file->file_id] = true;
                yield $file;
            }
            if (\count($list->files) < $limit || $page >= $list->pagination->pages) {
                return;
            }
        }
    }

    /** One file's record. */
    public function get(int|string $fileId): FileRecord
    {
        [, $data] = $this->http->call('GET', $this->http->url('/files/' . Params::id($fileId, 'file')));

        return FileRecord::fromArray(\is_array($data['file'] ?? null) ? $data['file'] : []);
    }

    /**
     * Changes a file: `expires_in` (seconds from now, 1..315360000) or `expires_at` (UTC
     * `YYYY-MM-DD HH:MM:SS` or a DateTimeInterface; null removes the expiry), `filename`. A key
     * left out is left as it is.
     *
     * @param array{expires_in?: int, expires_at?: string|\DateTimeInterface|null, filename?: string} $changes
     */
    public function update(int|string|FileRecord $fileId, array $changes): FileRecord
    {
        $id = $fileId instanceof FileRecord ? $fileId->file_id : $fileId;
        $body = Params::body($changes, ['expires_in', 'expires_at', 'filename'], 'file update', keepNull: true);
        [, $data] = $this->http->write('PATCH', $this->http->url('/files/' . Params::id($id, 'file')), $body);

        return FileRecord::fromArray(\is_array($data['file'] ?? null) ? $data['file'] : []);
    }

    /** Deletes a file; its public link stops working at once. */
    public function delete(int|string|FileRecord $fileId): void
    {
        $id = $fileId instanceof FileRecord ? $fileId->file_id : $fileId;
        $this->http->call('DELETE', $this->http->url('/files/' . Params::id($id, 'file')));
    }
}
