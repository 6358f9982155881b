<?php

declare(strict_types=1);

namespace Fileshare;

use Fileshare\Exception\ConfigurationException;
use Fileshare\Exception\FileshareException;
use Fileshare\Exception\IntegrityException;
use Fileshare\Internal\ArchiveDownloader;
use Fileshare\Internal\BodyStream;
use Fileshare\Internal\Http;
use Fileshare\Internal\Params;
use Fileshare\Internal\Tus;
use Fileshare\Model\ArchiveResult;
use Fileshare\Model\BulkDeleteResult;
use Fileshare\Model\FileList;
use Fileshare\Model\FileRecord;
use Psr\Http\Message\StreamInterface;

/** `$client->files`: upload, list, iterate, get, update, delete, deleteMany, downloadArchive. */
final class Files
{
    private const UPLOAD_OPTIONS = ['filename', 'content_type', 'on_progress', 'resumable', 'chunk_size', 'size', 'expires_in', 'idempotency_key',
        'on_upload_created', 'upload_url', 'keep_on_failure'];

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
     * `Fileshare-Expires-In`), `idempotency_key` (1..255 printable ASCII characters; default: a
     * new UUID per call), and the request options `timeout`, `max_retries`, `headers`,
     * `cancellation`.
     *
     * Resumable uploads: `on_upload_created` (callable(string $uploadUrl)) receives the upload's
     * URL as soon as it exists, before any byte is sent: keep it, and a later call (another
     * process, after a crash) continues the upload with `upload_url` (it asks where the upload
     * stands with HEAD and sends the rest; the same source must be given again). `keep_on_failure`
     * (true) keeps an upload that failed for good, or was cancelled, for that; false deletes it;
     * by default it is deleted unless the call had its own `idempotency_key` and failed on the
     * connection or the server.
     *
     * The idempotency key goes out as `Idempotency-Key` on every attempt of the upload (the
     * multipart POST, or the creation POST of a resumable upload), so a retry after a lost answer
     * never stores the file twice: the server answers with the file the key's first use stored.
     * Pass your own key to make a whole call safe to repeat (after a crash, say). The same key
     * for another upload is a BadRequestException `idempotency_key_reused` (409
     * `idempotency_in_progress` while its first use runs is waited for); when the other upload
     * has the same length, the server cannot tell, and the SHA-256 check throws IntegrityException.
     *
     * @param string|\SplFileInfo|resource|StreamInterface|UploadSource $source
     * @param array{filename?: string, content_type?: string, on_progress?: callable(int, ?int): void, resumable?: bool|null, chunk_size?: int,
     *     size?: int, expires_in?: int|null, idempotency_key?: string, on_upload_created?: callable(string): void, upload_url?: string,
     *     keep_on_failure?: bool, timeout?: float|int, max_retries?: int, headers?: array<string, string>, cancellation?: \Fileshare\Cancellation} $options
     */
    public function upload(mixed $source, array $options = []): FileRecord
    {
        $unknown = array_diff(array_keys($options), [...self::UPLOAD_OPTIONS, ...Http::REQUEST_OPTIONS]);
        if ($unknown !== []) {
            throw new ConfigurationException('unknown upload option(s): ' . implode(', ', $unknown));
        }
        $http = $this->http->with($options);
        $onCreated = $options['on_upload_created'] ?? null;
        if ($onCreated !== null && !\is_callable($onCreated)) {
            throw new ConfigurationException('on_upload_created must be callable');
        }
        $uploadUrl = $options['upload_url'] ?? null;
        if ($uploadUrl !== null) {
            if (!\is_string($uploadUrl)) {
                throw new ConfigurationException('upload_url must be a string');
            }
            $uploadUrl = Tus::checkUploadUrl($http, $uploadUrl);
        }
        $keepOnFailure = $options['keep_on_failure'] ?? null;
        if ($keepOnFailure !== null && !\is_bool($keepOnFailure)) {
            throw new ConfigurationException('keep_on_failure must be a boolean');
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
        $headers = [Http::IDEMPOTENCY_KEY => Params::idempotencyKey($options['idempotency_key'] ?? null)];
        if ($expiresIn !== null) {
            $headers['Fileshare-Expires-In'] = (string) $expiresIn;
        }
        $resumable = $options['resumable'] ?? null;
        if ($uploadUrl !== null && $resumable === false) {
            throw new ConfigurationException('upload_url continues a resumable upload: it cannot go with resumable false');
        }
        $useTus = $resumable === true || $uploadUrl !== null;
        if ($resumable === null && $prepared->size !== null && $prepared->size >= $this->resumableThreshold) {
            $useTus = (($this->tus)())['available'];
        }
        if ($useTus) {
            $capabilities = ($this->tus)();
            if (!$capabilities['available']) {
                throw new ConfigurationException('the server does not offer resumable uploads (OPTIONS /uploads)');
            }

            return Tus::upload($http, $prepared, $filename, $options['content_type'] ?? null, $chunkSize, $capabilities['checksum'], $onProgress, $headers,
                keepUnfinished: isset($options['idempotency_key']), keepOnFailure: $keepOnFailure, onCreated: $onCreated, uploadUrl: $uploadUrl);
        }

        return $this->uploadMultipart($http, $prepared, $filename, $options['content_type'] ?? null, $onProgress, $headers);
    }

    /**
     * Uploads bytes held in memory (a string in PHP is a path for upload(), so bytes have their
     * own call): the same as `upload(UploadSource::fromBytes($bytes), $options)`, with the same
     * options; `filename` defaults to "file".
     *
     * @param array<string, mixed> $options
     */
    public function uploadBytes(string $bytes, array $options = []): FileRecord
    {
        return $this->upload(UploadSource::fromBytes($bytes), $options);
    }

    /**
     * @param (callable(int, ?int): void)|null $onProgress
     * @param array<string, string>            $extraHeaders with the Idempotency-Key
     */
    private function uploadMultipart(Http $http, UploadSource $source, string $filename, ?string $contentType, ?callable $onProgress, array $extraHeaders): FileRecord
    {
        $boundary = '----fileshare-sdk-php-' . bin2hex(random_bytes(16));
        $safeName = str_replace(['"', "\r", "\n"], ['%22', '%0D', '%0A'], $filename);
        $partType = str_replace(["\r", "\n"], '', $contentType ?? 'application/octet-stream');
        $head = "--$boundary\r\nContent-Disposition: form-data; name=\"file\"; filename=\"$safeName\"\r\nContent-Type: $partType\r\n\r\n";
        $tail = "\r\n--$boundary--\r\n";
        $total = $source->size;
        $url = $http->url('/files/upload');

        try {
            [$file, $actual, $replayed] = $http->retry(function () use ($http, $source, $head, $tail, $total, $url, $boundary, $onProgress, $extraHeaders): array {
                $hash = hash_init('sha256');
                $sent = 0;
                $draining = false;
                $body = new BodyStream(
                    $source->open(),
                    $source->start(),
                    $total,
                    $head,
                    $tail,
                    onData: static function (string $data) use (&$hash, &$sent, &$draining, $total, $onProgress): void {
                        hash_update($hash, $data);
                        $sent += \strlen($data);
                        if ($onProgress !== null && !$draining) {
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
                [$response, $data] = $http->json($http->build('POST', $url, $headers, true, $body));
                $replayed = Http::isReplayed($response);
                if ($replayed) {
                    // The stored answer may come before the body is sent (`Expect: 100-continue`):
                    // the rest of the source is read here, for its SHA-256, not sent.
                    $draining = true;
                    $body->drain();
                }

                return [FileRecord::fromArray($data), hash_final($hash), $replayed];
            }, static fn (): bool => $source->replayable);
        } finally {
            $source->close();
        }
        IntegrityException::checkUpload($file, $actual, $replayed ? $extraHeaders[Http::IDEMPOTENCY_KEY] : null);
        if ($onProgress !== null) {
            $onProgress($file->size, $total ?? $file->size);
        }

        return $file;
    }

    /**
     * One page of the account's files (`limit` 1 to 100, server default 20), newest first unless
     * `sort`/`order` say otherwise, only those whose name contains `q` (any case), of a `type` and
     * in a `state` when given (several values of one: any of them; different filters: all): page
     * `page` (from 1), or the files after `beforeId` (a page's `pagination->next_before_id`), which
     * no upload or deletion meanwhile can shift. Not both; `beforeId` only in upload order (`sort`
     * `upload_date`, either `order`).
     *
     *     $client->files->list(limit: 50, q: 'invoice', sort: FileSort::Size, order: SortOrder::Asc);
     *     $client->files->list(type: ['image', 'application/pdf'], state: FileState::Expiring);
     *
     * @param ?string $q a case-insensitive substring of the filename
     * @param FileSort|'upload_date'|'filename'|'size'|'download_count'|null $sort default `upload_date`; ties by file_id
     * @param SortOrder|'asc'|'desc'|null $order default `desc`
     * @param string|list<string>|null $type a top-level media type (`image`: image/png, image/jpeg, ...) or an exact
     *     `type/subtype` (`application/pdf`), any case; a list (at most 20): any of them
     * @param FileState|'expiring'|'expired_links'|'from_upload_request'|list<FileState|string>|null $state a list (at most 20): any of them
     * @param array{timeout?: float|int, max_retries?: int, headers?: array<string, string>, cancellation?: \Fileshare\Cancellation} $requestOptions
     */
    public function list(?int $page = null, ?int $limit = null, ?int $beforeId = null, array $requestOptions = [],
        ?string $q = null, FileSort|string|null $sort = null, SortOrder|string|null $order = null,
        string|array|null $type = null, FileState|string|array|null $state = null): FileList
    {
        if ($page !== null && $beforeId !== null) {
            throw new ConfigurationException('list() takes page or beforeId, not both');
        }

        return $this->listPage(['page' => $page, 'limit' => $limit, 'before_id' => $beforeId] + self::fileQuery($q, $sort, $order, $type, $state),
            $requestOptions);
    }

    /**
     * Every file of the account (only those whose name contains `q`, of a `type` and in a `state`,
     * when given) in the order of `sort` and `order` (newest first by default), `limit` per request,
     * the same search, filters and order on every page. In upload order each page is asked by the `next_before_id` of the one before:
     * a file is never yielded twice, and deleting the files yielded (or uploading) while iterating
     * skips none. The other orders go by page number: no file twice, but one deleted or renamed
     * meanwhile can shift another out of view. The request options apply to each page's request.
     *
     *     foreach ($client->files->iterate(q: '.pdf', sort: FileSort::Filename, order: SortOrder::Asc) as $file) { ... }
     *
     * @param ?string $q a case-insensitive substring of the filename
     * @param FileSort|'upload_date'|'filename'|'size'|'download_count'|null $sort default `upload_date`
     * @param SortOrder|'asc'|'desc'|null $order default `desc`
     * @param string|list<string>|null $type a media type or type/subtype; a list: any of them
     * @param FileState|'expiring'|'expired_links'|'from_upload_request'|list<FileState|string>|null $state a list: any of them
     * @param array{timeout?: float|int, max_retries?: int, headers?: array<string, string>, cancellation?: \Fileshare\Cancellation} $requestOptions
     *
     * @return \Generator<int, FileRecord>
     */
    public function iterate(int $limit = 100, array $requestOptions = [],
        ?string $q = null, FileSort|string|null $sort = null, SortOrder|string|null $order = null,
        string|array|null $type = null, FileState|string|array|null $state = null): \Generator
    {
        Params::requestOptions($requestOptions, 'iterate');
        $query = ['limit' => $limit, 'before_id' => null] + self::fileQuery($q, $sort, $order, $type, $state);
        $list = $this->listPage($query, $requestOptions);
        if (($query['sort'] ?? FileSort::UploadDate->value) !== FileSort::UploadDate->value) {
            yield from $this->iterateByPage($list, $query, $requestOptions);

            return;
        }
        $ascending = ($query['order'] ?? null) === SortOrder::Asc->value;
        $beforeId = null;
        for (;;) {
            foreach ($list->files as $file) {
                yield $file;
            }
            $next = $list->pagination->next_before_id;
            if ($next === null) {
                return;
            }
            if ($beforeId !== null && ($ascending ? $next <= $beforeId : $next >= $beforeId)) {
                throw new FileshareException("the server's next_before_id ($next) does not move past $beforeId");
            }
            $beforeId = $query['before_id'] = $next;
            $list = $this->listPage($query, $requestOptions);
        }
    }

    /**
     * Page numbers, for the orders without `before_id`: a file is yielded once, but a deletion
     * meanwhile can shift another out of view.
     *
     * @param array{limit: int, before_id: null, q?: string, sort?: string, order?: string, type?: list<string>, state?: list<string>} $query
     * @param array{timeout?: float|int, max_retries?: int, headers?: array<string, string>, cancellation?: \Fileshare\Cancellation} $requestOptions
     *
     * @return \Generator<int, FileRecord>
     */
    private function iterateByPage(FileList $list, array $query, array $requestOptions): \Generator
    {
        $seen = [];
        for ($page = 1; ; ++$page) {
            foreach ($list->files as $file) {
                if (!isset($seen[$file->file_id])) {
                    $seen[$file->file_id] = true;
                    yield $file;
                }
            }
            if (\count($list->files) < $query['limit'] || $page >= $list->pagination->pages) {
                return;
            }
            $list = $this->listPage(['page' => $page + 1] + $query, $requestOptions);
        }
    }

    /**
     * `GET /files` with the parameters that are not null.
     *
     * @param array<string, int|string|list<string>|null> $query
     * @param array{timeout?: float|int, max_retries?: int, headers?: array<string, string>, cancellation?: \Fileshare\Cancellation} $requestOptions
     */
    private function listPage(array $query, array $requestOptions): FileList
    {
        $http = $this->http->with(Params::requestOptions($requestOptions, 'list'));
        [, $data] = $http->call('GET', $http->url('/files', $query));

        return FileList::fromArray($data);
    }

    /**
     * The search, filters and order of a file list as query parameters (those given: the server
     * has the defaults); `type` and `state` as lists, sent repeated. A string is sent as it is; the
     * server refuses one it does not know (400).
     *
     * @param string|list<string>|null $type
     * @param FileState|string|list<FileState|string>|null $state
     *
     * @return array{q?: string, sort?: string, order?: string, type?: list<string>, state?: list<string>}
     */
    private static function fileQuery(?string $q, FileSort|string|null $sort, SortOrder|string|null $order,
        string|array|null $type = null, FileState|string|array|null $state = null): array
    {
        $query = [];
        if ($q !== null) {
            $query['q'] = $q;
        }
        if ($sort !== null) {
            $query['sort'] = $sort instanceof FileSort ? $sort->value : $sort;
        }
        if ($order !== null) {
            $query['order'] = $order instanceof SortOrder ? $order->value : $order;
        }
        if ($type !== null) {
            $query['type'] = array_values((array) $type);
        }
        if ($state !== null) {
            $query['state'] = array_map(static fn (FileState|string $each): string => $each instanceof FileState ? $each->value : $each,
                \is_array($state) ? array_values($state) : [$state]);
        }

        return $query;
    }

    /**
     * One file's record.
     *
     * @param array{timeout?: float|int, max_retries?: int, headers?: array<string, string>, cancellation?: \Fileshare\Cancellation} $requestOptions
     */
    public function get(int|string $fileId, array $requestOptions = []): FileRecord
    {
        $http = $this->http->with(Params::requestOptions($requestOptions, 'get'));
        [, $data] = $http->call('GET', $http->url('/files/' . Params::id($fileId, 'file')));

        return FileRecord::fromArray(\is_array($data['file'] ?? null) ? $data['file'] : []);
    }

    /**
     * Changes a file: `expires_in` (seconds from now, 1..315360000) or `expires_at` (UTC
     * `YYYY-MM-DD HH:MM:SS` or a DateTimeInterface; null removes the expiry), `filename`. A key
     * left out is left as it is.
     *
     * @param array{expires_in?: int, expires_at?: string|\DateTimeInterface|null, filename?: string} $changes
     * @param array{timeout?: float|int, max_retries?: int, headers?: array<string, string>, cancellation?: \Fileshare\Cancellation} $requestOptions
     */
    public function update(int|string|FileRecord $fileId, array $changes, array $requestOptions = []): FileRecord
    {
        $id = $fileId instanceof FileRecord ? $fileId->file_id : $fileId;
        $body = Params::body($changes, ['expires_in', 'expires_at', 'filename'], 'file update', keepNull: true);
        $http = $this->http->with(Params::requestOptions($requestOptions, 'update'));
        [, $data] = $http->write('PATCH', $http->url('/files/' . Params::id($id, 'file')), $body);

        return FileRecord::fromArray(\is_array($data['file'] ?? null) ? $data['file'] : []);
    }

    /**
     * Deletes a file; its public link stops working at once.
     *
     * @param array{timeout?: float|int, max_retries?: int, headers?: array<string, string>, cancellation?: \Fileshare\Cancellation} $requestOptions
     */
    public function delete(int|string|FileRecord $fileId, array $requestOptions = []): void
    {
        $id = $fileId instanceof FileRecord ? $fileId->file_id : $fileId;
        $http = $this->http->with(Params::requestOptions($requestOptions, 'delete'));
        $http->call('DELETE', $http->url('/files/' . Params::id($id, 'file')));
    }

    /** The most files one deleteMany() takes (the server's limit). */
    public const MAX_BULK_DELETE = 100;

    /**
     * Deletes several files in one call (`POST /files/delete`, scope `files:delete`): 1 to 100
     * distinct ids (ints, numeric strings or FileRecords), each deleted as delete() deletes one
     * (wholly or not at all, with its audit row and webhook event). Answers which were deleted and
     * which name none of your files, each in the order given. Every attempt carries the call's
     * `Idempotency-Key` (`idempotency_key`, else a new UUID): a retry after a lost answer gets the
     * first answer back.
     *
     * @param list<int|string|FileRecord> $fileIds
     * @param array{idempotency_key?: string, timeout?: float|int, max_retries?: int, headers?: array<string, string>,
     *     cancellation?: \Fileshare\Cancellation} $options
     */
    public function deleteMany(array $fileIds, array $options = []): BulkDeleteResult
    {
        $options = Params::requestOptions($options, 'deleteMany', ['idempotency_key']);
        if ($fileIds === [] || \count($fileIds) > self::MAX_BULK_DELETE) {
            throw new ConfigurationException('deleteMany takes 1 to ' . self::MAX_BULK_DELETE . ' file ids');
        }
        $ids = array_map(static fn ($id) => (int) Params::id($id instanceof FileRecord ? $id->file_id : $id, 'file'), array_values($fileIds));
        $key = Params::idempotencyKey($options['idempotency_key'] ?? null);
        $http = $this->http->with($options);
        [, $data] = $http->write('POST', $http->url('/files/delete'), ['ids' => $ids], $key);
        if (!\is_array($data['deleted'] ?? null) || !\is_array($data['not_found'] ?? null)) {
            throw new FileshareException('the answer holds no deleted and not_found lists');
        }

        return new BulkDeleteResult(array_map('intval', array_values($data['deleted'])), array_map('intval', array_values($data['not_found'])));
    }

    /**
     * Downloads several files as one ZIP (`POST /files/archive`) to a path or a writable stream:
     * one entry per id, in the order given, stored uncompressed, names made safe and unique
     * (`a.txt`, `a (2).txt`). 1 to 1000 distinct ids (ints, numeric strings or FileRecords); one
     * that is not yours, or does not exist, throws NotFoundException before any byte. Nothing
     * counts as a download. A connection lost mid-archive starts it again from the first byte (a
     * path; at most `max_retries` times in all, since nothing resumes) or throws; a path that did
     * not get the whole archive is removed. The key needs both `files:read` and `links:write` (a
     * key that can list files and make public links can fetch their bytes anyway); one without
     * `links:write` gets InsufficientScopeException naming it.
     *
     * @param list<int|string|FileRecord>                  $fileIds
     * @param string|\SplFileInfo|resource|StreamInterface $destination
     * @param array{on_progress?: callable(int, ?int): void, timeout?: float|int, max_retries?: int, headers?: array<string, string>,
     *     cancellation?: \Fileshare\Cancellation} $options
     */
    public function downloadArchive(array $fileIds, mixed $destination, array $options = []): ArchiveResult
    {
        $unknown = array_diff(array_keys($options), ['on_progress', ...Http::REQUEST_OPTIONS]);
        if ($unknown !== []) {
            throw new ConfigurationException('unknown downloadArchive option(s): ' . implode(', ', $unknown));
        }
        $onProgress = $options['on_progress'] ?? null;
        if ($onProgress !== null && !\is_callable($onProgress)) {
            throw new ConfigurationException('on_progress must be callable');
        }
        $ids = array_map(static fn ($id) => $id instanceof FileRecord ? $id->file_id : $id, array_values($fileIds));

        return ArchiveDownloader::download($this->http->with($options), $ids, $destination, $onProgress);
    }
}
