<?php

declare(strict_types=1);

namespace Fileshare\Model;

use Fileshare\Exception\FileshareException;

/**
 * A link to a file (`/files/{id}/links`, `/links/{id}`): its own URL, policy (expiry, download
 * limit, password) and status. The file's default link is its `public_link`.
 *
 * Fields mirror the API's JSON; `created` and `expiry` are `created_at` and `expires_at` as
 * date-times in UTC, and `extra` keeps fields this SDK does not know yet. toArray() /
 * json_encode() give the API's object. The password itself is never returned by the API.
 */
final readonly class Link implements \JsonSerializable
{
    public const STATUS_ACTIVE = 'active';
    /** Past its `expires_at`, or its file expired. */
    public const STATUS_EXPIRED = 'expired';
    /** `download_count` reached `max_downloads`. */
    public const STATUS_EXHAUSTED = 'exhausted';
    /** Deleted by its owner (listed for 30 days). */
    public const STATUS_REVOKED = 'revoked';

    private const KNOWN = ['link_id', 'file_id', 'url', 'default', 'label', 'expires_at', 'max_downloads', 'download_count',
        'password_protected', 'status', 'created_at'];

    public \DateTimeImmutable $created;
    public ?\DateTimeImmutable $expiry;

    /** @param array<string, mixed> $extra */
    public function __construct(
        public int $link_id,
        public int $file_id,
        /** `<public base URL>/download/<token>`: give it out, or pass it to `$client->download()`. */
        public string $url,
        /** The file's default link (its `public_link`): it cannot be deleted. */
        public bool $default,
        public ?string $label,
        /** UTC, `YYYY-MM-DD HH:MM:SS`, or null: no expiry. */
        public ?string $expires_at,
        /** Null: no limit. */
        public ?int $max_downloads,
        public int $download_count,
        public bool $password_protected,
        /** `active`, `expired`, `exhausted` or `revoked` (the STATUS_* constants). */
        public string $status,
        /** UTC, `YYYY-MM-DD HH:MM:SS`. */
        public string $created_at,
        public array $extra = [],
    ) {
        $this->created = FileRecord::parseDate($created_at);
        $this->expiry = $expires_at === null ? null : FileRecord::parseDate($expires_at);
    }

    /** @param array<string, mixed> $data a link object, or an answer holding one in `link` */
    public static function fromArray(array $data): self
    {
        if (\is_array($data['link'] ?? null)) {
            $data = $data['link'];
        }
        if (!\is_int($data['link_id'] ?? null)) {
            throw new FileshareException('the answer holds no link object');
        }

        return new self(
            $data['link_id'],
            (int) ($data['file_id'] ?? 0),
            (string) ($data['url'] ?? ''),
            (bool) ($data['default'] ?? false),
            isset($data['label']) ? (string) $data['label'] : null,
            isset($data['expires_at']) ? (string) $data['expires_at'] : null,
            isset($data['max_downloads']) ? (int) $data['max_downloads'] : null,
            (int) ($data['download_count'] ?? 0),
            (bool) ($data['password_protected'] ?? false),
            (string) ($data['status'] ?? ''),
            (string) ($data['created_at'] ?? ''),
            array_diff_key($data, array_flip([...self::KNOWN, 'success'])),
        );
    }

    /**
     * The links of `GET /files/{id}/links`, default link first, then newest first.
     *
     * @param array<string, mixed> $data
     *
     * @return list<self>
     */
    public static function listFromArray(array $data): array
    {
        if (!\is_array($data['links'] ?? null)) {
            throw new FileshareException('the answer holds no link list');
        }

        return array_values(array_map(static fn (array $l): self => self::fromArray($l), $data['links']));
    }

    /** Whether the link still lets anyone download (status `active`). */
    public function isActive(): bool
    {
        return $this->status === self::STATUS_ACTIVE;
    }

    /** @return array<string, mixed> the API's object */
    public function toArray(): array
    {
        return [
            'link_id' => $this->link_id,
            'file_id' => $this->file_id,
            'url' => $this->url,
            'default' => $this->default,
            'label' => $this->label,
            'expires_at' => $this->expires_at,
            'max_downloads' => $this->max_downloads,
            'download_count' => $this->download_count,
            'password_protected' => $this->password_protected,
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
