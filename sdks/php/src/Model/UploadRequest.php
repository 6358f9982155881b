<?php

declare(strict_types=1);

namespace Fileshare\Model;

use Fileshare\Exception\FileshareException;

/**
 * An upload request (`/upload-requests`, `$client->uploadRequests`): a link (`url`) that lets
 * someone without an account send files into this account, with its own expiry and limits.
 *
 * Fields mirror the API's JSON; `created` and `expiry` are `created_at` and `expires_at` as
 * date-times in UTC, and `extra` keeps fields this SDK does not know yet. toArray() /
 * json_encode() give the API's object. The password itself is never returned by the API.
 */
final readonly class UploadRequest implements \JsonSerializable
{
    /** Guests can send files. */
    public const STATUS_ACTIVE = 'active';
    /** Past its `expires_at` (extending `expires_at` re-opens it). */
    public const STATUS_EXPIRED = 'expired';
    /** Closed (or deleted) by its holder; it stays closed. */
    public const STATUS_CLOSED = 'closed';
    /** `files_received` reached `max_files`, or `bytes_received` reached `max_total_size`. */
    public const STATUS_FULL = 'full';

    private const KNOWN = ['request_id', 'url', 'label', 'message', 'expires_at', 'max_files', 'max_file_size', 'max_total_size',
        'file_expires_in', 'password_protected', 'files_received', 'bytes_received', 'status', 'created_at'];

    public \DateTimeImmutable $created;
    public \DateTimeImmutable $expiry;

    /** @param array<string, mixed> $extra */
    public function __construct(
        /** Unique, never reused. */
        public int $request_id,
        /** `<public base URL>/r/<token>`: the page to give the guest (the token is its last path segment). */
        public string $url,
        /** 1 to 200 characters, one line: shown to the guest. */
        public string $label,
        /** Plain text shown to the guest (up to 2,000 characters, newlines allowed), or null. */
        public ?string $message,
        /** UTC, `YYYY-MM-DD HH:MM:SS`: from then on guests can no longer send files. */
        public string $expires_at,
        /** At most this many files; null: no limit of its own. */
        public ?int $max_files,
        /** Bytes per file; null: the holder plan's maximum. */
        public ?int $max_file_size,
        /** Bytes in all; null: no limit of its own. */
        public ?int $max_total_size,
        /** Seconds each received file lives from its upload; null: received files do not expire. */
        public ?int $file_expires_in,
        /** Guests must give a password first. */
        public bool $password_protected,
        public int $files_received,
        public int $bytes_received,
        /** `active`, `expired`, `closed` or `full` (the STATUS_* constants). */
        public string $status,
        /** UTC, `YYYY-MM-DD HH:MM:SS`. */
        public string $created_at,
        public array $extra = [],
    ) {
        $this->created = FileRecord::parseDate($created_at);
        $this->expiry = FileRecord::parseDate($expires_at);
    }

    /** @param array<string, mixed> $data an upload request object, or an answer holding one in `upload_request` */
    public static function fromArray(array $data): self
    {
        if (\is_array($data['upload_request'] ?? null)) {
            $data = $data['upload_request'];
        }
        if (!\is_int($data['request_id'] ?? null)) {
            throw new FileshareException('the answer holds no upload request object');
        }

        return new self(
            $data['request_id'],
            (string) ($data['url'] ?? ''),
            (string) ($data['label'] ?? ''),
            isset($data['message']) ? (string) $data['message'] : null,
            (string) ($data['expires_at'] ?? ''),
            isset($data['max_files']) ? (int) $data['max_files'] : null,
            isset($data['max_file_size']) ? (int) $data['max_file_size'] : null,
            isset($data['max_total_size']) ? (int) $data['max_total_size'] : null,
            isset($data['file_expires_in']) ? (int) $data['file_expires_in'] : null,
            (bool) ($data['password_protected'] ?? false),
            (int) ($data['files_received'] ?? 0),
            (int) ($data['bytes_received'] ?? 0),
            (string) ($data['status'] ?? ''),
            (string) ($data['created_at'] ?? ''),
            array_diff_key($data, array_flip([...self::KNOWN, 'success'])),
        );
    }

    /**
     * The requests of `GET /upload-requests`, newest first.
     *
     * @param array<string, mixed> $data
     *
     * @return list<self>
     */
    public static function listFromArray(array $data): array
    {
        if (!\is_array($data['upload_requests'] ?? null)) {
            throw new FileshareException('the answer holds no upload request list');
        }

        return array_values(array_map(static fn (mixed $r): self => self::fromArray(\is_array($r) ? $r : []), $data['upload_requests']));
    }

    /** Whether guests can still send files (status `active`). */
    public function isActive(): bool
    {
        return $this->status === self::STATUS_ACTIVE;
    }

    /** @return array<string, mixed> the API's object */
    public function toArray(): array
    {
        return [
            'request_id' => $this->request_id,
            'url' => $this->url,
            'label' => $this->label,
            'message' => $this->message,
            'expires_at' => $this->expires_at,
            'max_files' => $this->max_files,
            'max_file_size' => $this->max_file_size,
            'max_total_size' => $this->max_total_size,
            'file_expires_in' => $this->file_expires_in,
            'password_protected' => $this->password_protected,
            'files_received' => $this->files_received,
            'bytes_received' => $this->bytes_received,
            'status' => $this->status,
            'created_at' => $this->created_at,
        ] + $this->extra;
    }

    /** @return array<string, mixed> */
    public function jsonSerialize(): array
    {
        return $this->toArray();
    }
}
