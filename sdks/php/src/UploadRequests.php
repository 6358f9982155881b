<?php

declare(strict_types=1);

namespace Fileshare;

use Fileshare\Exception\ConfigurationException;
use Fileshare\Exception\FileshareException;
use Fileshare\Internal\Http;
use Fileshare\Internal\Params;
use Fileshare\Model\FileRecord;
use Fileshare\Model\UploadRequest;
use Fileshare\Model\UploadRequestFileList;

/**
 * `$client->uploadRequests`: upload requests ("reverse shares"). Each is a page (`url`,
 * `<base>/r/<token>`) where someone without an account sends files into this account, until it
 * expires, is closed, or is full (`max_files`, `max_total_size`). The files received are the
 * account's files, with `source` `{type: upload_request, request_id}`.
 *
 * The key needs the scope `requests:manage` (else InsufficientScopeException): create, list, get,
 * update, delete, close, files, iterateFiles.
 */
final class UploadRequests
{
    /** The fields of create() and update(). */
    public const FIELDS = ['label', 'message', 'expires_in', 'expires_at', 'max_files', 'max_file_size', 'max_total_size', 'password',
        'file_expires_in'];

    /** @internal */
    public function __construct(private readonly Http $http)
    {
    }

    /**
     * A new upload request. Options: `label` (required: 1..200 characters, one line), exactly one
     * of `expires_in` (seconds, at most 90 days unless the operator allows more) or `expires_at`
     * (`YYYY-MM-DD HH:MM:SS` UTC, or a DateTimeInterface; in the future), and optionally `message`
     * (shown to the guest: plain text, at most 2,000 characters, newlines allowed), `max_files`
     * (1..10000), `max_file_size` (bytes, at most the plan's), `max_total_size` (bytes),
     * `password` (8..1024 characters) and `file_expires_in` (seconds each received file lives,
     * 1..315360000). A rule broken is a BadRequestException `invalid_parameter` naming the field.
     *
     * `idempotency_key` (1..255 printable ASCII characters; default: a new UUID per call) is sent
     * as `Idempotency-Key` on every attempt, so a retry never makes a second request: the same key
     * again answers with the request its first use made.
     *
     * @param array{label?: string, message?: ?string, expires_in?: ?int, expires_at?: string|\DateTimeInterface|null, max_files?: ?int,
     *     max_file_size?: ?int, max_total_size?: ?int, password?: ?string, file_expires_in?: ?int, idempotency_key?: string} $options
     * @param array{timeout?: float|int, max_retries?: int, headers?: array<string, string>, cancellation?: Cancellation, idempotency_key?: string} $requestOptions
     */
    public function create(#[\SensitiveParameter] array $options, array $requestOptions = []): UploadRequest
    {
        $body = Params::body($options, [...self::FIELDS, 'idempotency_key'], 'upload request', keepNull: false);
        $requestOptions = Params::requestOptions($requestOptions, 'upload request', ['idempotency_key']);
        $key = Params::idempotencyKey($body['idempotency_key'] ?? $requestOptions['idempotency_key'] ?? null);
        unset($body['idempotency_key']);
        $http = $this->http->with($requestOptions);
        [, $data] = $http->write('POST', $http->url('/upload-requests'), $body, $key);

        return UploadRequest::fromArray($data);
    }

    /**
     * The account's upload requests, newest first (all of them, whatever their status).
     *
     * @param array{timeout?: float|int, max_retries?: int, headers?: array<string, string>, cancellation?: Cancellation} $requestOptions
     *
     * @return list<UploadRequest>
     */
    public function list(array $requestOptions = []): array
    {
        [, $data] = $this->http($requestOptions)->call('GET', $this->http->url('/upload-requests'));

        return UploadRequest::listFromArray($data);
    }

    /**
     * One upload request (another account's is a NotFoundException, as an unknown one is).
     *
     * @param array{timeout?: float|int, max_retries?: int, headers?: array<string, string>, cancellation?: Cancellation} $requestOptions
     */
    public function get(int|string|UploadRequest $requestId, array $requestOptions = []): UploadRequest
    {
        [, $data] = $this->http($requestOptions)->call('GET', $this->url($requestId));

        return UploadRequest::fromArray($data);
    }

    /**
     * Changes an upload request. A key left out is left as it is; a key present with null removes
     * that field (`message`, `max_files`, `max_file_size`, `max_total_size`, `password`,
     * `file_expires_in`): `['password' => null]` removes the password. `label`, `expires_in` and
     * `expires_at` cannot be null. Extending the expiry re-opens an expired request; a closed one
     * stays closed. No change at all is a ConfigurationException.
     *
     * @param array{label?: string, message?: ?string, expires_in?: int, expires_at?: string|\DateTimeInterface, max_files?: ?int,
     *     max_file_size?: ?int, max_total_size?: ?int, password?: ?string, file_expires_in?: ?int} $changes
     * @param array{timeout?: float|int, max_retries?: int, headers?: array<string, string>, cancellation?: Cancellation} $requestOptions
     */
    public function update(int|string|UploadRequest $requestId, #[\SensitiveParameter] array $changes, array $requestOptions = []): UploadRequest
    {
        $body = Params::body($changes, self::FIELDS, 'upload request', keepNull: true);
        if ($body === []) {
            throw new ConfigurationException('update() needs at least one of ' . implode(', ', self::FIELDS));
        }
        [, $data] = $this->http($requestOptions)->write('PATCH', $this->url($requestId), $body);

        return UploadRequest::fromArray($data);
    }

    /**
     * Deletes an upload request: its page is dead at once. Files already received stay in the
     * account. Returns the request as it was, with status `closed`.
     *
     * @param array{timeout?: float|int, max_retries?: int, headers?: array<string, string>, cancellation?: Cancellation} $requestOptions
     */
    public function delete(int|string|UploadRequest $requestId, array $requestOptions = []): UploadRequest
    {
        [, $data] = $this->http($requestOptions)->call('DELETE', $this->url($requestId));

        return UploadRequest::fromArray($data);
    }

    /**
     * Closes an upload request (status `closed`: guests can send nothing more; it stays listed).
     * Closing a closed request changes nothing, so the call is retried as a GET is.
     *
     * @param array{timeout?: float|int, max_retries?: int, headers?: array<string, string>, cancellation?: Cancellation} $requestOptions
     */
    public function close(int|string|UploadRequest $requestId, array $requestOptions = []): UploadRequest
    {
        [, $data] = $this->http($requestOptions)->call('POST', $this->url($requestId) . '/close');

        return UploadRequest::fromArray($data);
    }

    /**
     * One page of the files a request received, newest first: `limit` 1 to 100 (server default
     * 20), `beforeId` (the files whose file_id is lower, as `pagination->next_before_id` names the
     * next page's start). Each is a FileRecord whose `source` names the request.
     *
     * @param array{timeout?: float|int, max_retries?: int, headers?: array<string, string>, cancellation?: Cancellation} $requestOptions
     */
    public function files(int|string|UploadRequest $requestId, ?int $limit = null, ?int $beforeId = null, array $requestOptions = []): UploadRequestFileList
    {
        [, $data] = $this->http($requestOptions)->call('GET', $this->http->url('/upload-requests/' . self::id($requestId) . '/files', [
            'limit' => $limit,
            'before_id' => $beforeId,
        ]));

        return UploadRequestFileList::fromArray($data);
    }

    /**
     * Every file a request received, newest first, `limit` per request: the first page, then
     * `before_id` = the page's `next_before_id` until there is none. A file is never yielded twice;
     * files received while iterating are newer, so they are not yielded. The request options apply
     * to each page's request.
     *
     * @param array{timeout?: float|int, max_retries?: int, headers?: array<string, string>, cancellation?: Cancellation} $requestOptions
     *
     * @return \Generator<int, FileRecord>
     */
    public function iterateFiles(int|string|UploadRequest $requestId, int $limit = 100, array $requestOptions = []): \Generator
    {
        Params::requestOptions($requestOptions, 'upload request');
        self::id($requestId);
        $beforeId = null;
        for (;;) {
            $page = $this->files($requestId, $limit, $beforeId, $requestOptions);
            foreach ($page->files as $file) {
                yield $file;
            }
            $next = $page->pagination->next_before_id;
            if ($next === null) {
                return;
            }
            if ($beforeId !== null && $next >= $beforeId) {
                throw new FileshareException("the server's next_before_id ($next) does not go down from $beforeId");
            }
            $beforeId = $next;
        }
    }

    /** @param array<string, mixed> $requestOptions */
    private function http(array $requestOptions): Http
    {
        return $this->http->with(Params::requestOptions($requestOptions, 'upload request'));
    }

    private function url(int|string|UploadRequest $requestId): string
    {
        return $this->http->url('/upload-requests/' . self::id($requestId));
    }

    private static function id(int|string|UploadRequest $requestId): string
    {
        return Params::id($requestId instanceof UploadRequest ? $requestId->request_id : $requestId, 'upload request');
    }
}
