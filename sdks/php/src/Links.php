<?php

declare(strict_types=1);

namespace Fileshare;

use Fileshare\Internal\Http;
use Fileshare\Internal\Params;
use Fileshare\Model\FileRecord;
use Fileshare\Model\Link;

/**
 * `$client->links`: a file's links, each with its own URL and policy (expiry, download limit,
 * password), revoked or rotated on its own. The default link is the file's `public_link`.
 */
final class Links
{
    /** The fields of create() and update(). */
    public const FIELDS = ['label', 'expires_in', 'expires_at', 'max_downloads', 'password'];

    /** @internal */
    public function __construct(private readonly Http $http)
    {
    }

    /**
     * A new link to a file. Options (all optional; none: a link with no policy): `label`
     * (0..100 characters, one line), `expires_in` (seconds, 1..315360000) or `expires_at`
     * (`YYYY-MM-DD HH:MM:SS` UTC, or a DateTimeInterface), `max_downloads` (1..1000000),
     * `password` (8..1024 characters). A rule broken is a BadRequestException
     * `invalid_parameter` naming the field; a 101st link on one file is LimitExceededException
     * `link_limit_exceeded`.
     *
     * `idempotency_key` (1..255 printable ASCII characters; default: a new UUID per call) is sent
     * as `Idempotency-Key` on every attempt, so a retry never makes a second link: the same key
     * again answers with the link its first use made.
     *
     * @param array{label?: ?string, expires_in?: ?int, expires_at?: string|\DateTimeInterface|null, max_downloads?: ?int, password?: ?string, idempotency_key?: string} $options
     * @param array{timeout?: float|int, max_retries?: int, headers?: array<string, string>, cancellation?: \Fileshare\Cancellation} $requestOptions
     */
    public function create(int|string|FileRecord $fileId, #[\SensitiveParameter] array $options = [], array $requestOptions = []): Link
    {
        $body = Params::body($options, [...self::FIELDS, 'idempotency_key'], 'link', keepNull: false);
        $requestOptions = Params::requestOptions($requestOptions, 'link', ['idempotency_key']);
        $key = Params::idempotencyKey($body['idempotency_key'] ?? $requestOptions['idempotency_key'] ?? null);
        unset($body['idempotency_key']);
        $http = $this->http->with($requestOptions);
        [, $data] = $http->write('POST', $http->url('/files/' . self::fileId($fileId) . '/links'), $body, $key);

        return Link::fromArray($data);
    }

    /**
     * A file's links: the default link first, then newest first; revoked links stay listed
     * (status `revoked`) for 30 days.
     *
     * @return list<Link>
     *
     * @param array{timeout?: float|int, max_retries?: int, headers?: array<string, string>, cancellation?: \Fileshare\Cancellation} $requestOptions
     */
    public function list(int|string|FileRecord $fileId, array $requestOptions = []): array
    {
        [, $data] = $this->http($requestOptions)->call('GET', $this->http->url('/files/' . self::fileId($fileId) . '/links'));

        return Link::listFromArray($data);
    }

    /**
     * One link.
     *
     * @param array{timeout?: float|int, max_retries?: int, headers?: array<string, string>, cancellation?: \Fileshare\Cancellation} $requestOptions
     */
    public function get(int|string|Link $linkId, array $requestOptions = []): Link
    {
        [, $data] = $this->http($requestOptions)->call('GET', $this->url($linkId));

        return Link::fromArray($data);
    }

    /**
     * Changes a link's policy. A key left out is left as it is; a key present with null clears
     * that field (`label`, `expires_at`, `max_downloads`, `password`): `['password' => null]`
     * removes the password. `max_downloads` cannot go below the link's `download_count`.
     *
     * @param array{label?: ?string, expires_in?: int, expires_at?: string|\DateTimeInterface|null, max_downloads?: ?int, password?: ?string} $changes
     * @param array{timeout?: float|int, max_retries?: int, headers?: array<string, string>, cancellation?: \Fileshare\Cancellation} $requestOptions
     */
    public function update(int|string|Link $linkId, #[\SensitiveParameter] array $changes, array $requestOptions = []): Link
    {
        $body = Params::body($changes, self::FIELDS, 'link', keepNull: true);
        [, $data] = $this->http($requestOptions)->write('PATCH', $this->url($linkId), $body);

        return Link::fromArray($data);
    }

    /**
     * Revokes a link: its URL answers 404 at once. The default link cannot be deleted
     * (BadRequestException 409 `default_link_required`): rotate it instead.
     *
     * @param array{timeout?: float|int, max_retries?: int, headers?: array<string, string>, cancellation?: \Fileshare\Cancellation} $requestOptions
     */
    public function delete(int|string|Link $linkId, array $requestOptions = []): void
    {
        $this->http($requestOptions)->call('DELETE', $this->url($linkId));
    }

    /**
     * Gives a link a new URL (the old one answers 404 at once); policy and counts are kept.
     * Rotating the default link changes the file's `public_link`.
     *
     * @param array{timeout?: float|int, max_retries?: int, headers?: array<string, string>, cancellation?: \Fileshare\Cancellation} $requestOptions
     */
    public function rotate(int|string|Link $linkId, array $requestOptions = []): Link
    {
        [, $data] = $this->http($requestOptions)->write('POST', $this->url($linkId) . '/rotate', null);

        return Link::fromArray($data);
    }

    /** @param array<string, mixed> $requestOptions */
    private function http(array $requestOptions): Http
    {
        return $this->http->with(Params::requestOptions($requestOptions, 'link'));
    }

    private function url(int|string|Link $linkId): string
    {
        return $this->http->url('/links/' . Params::id($linkId instanceof Link ? $linkId->link_id : $linkId, 'link'));
    }

    private static function fileId(int|string|FileRecord $fileId): string
    {
        return Params::id($fileId instanceof FileRecord ? $fileId->file_id : $fileId, 'file');
    }
}
