<?php

declare(strict_types=1);

namespace Fileshare\Model;

/**
 * `limits` of `GET /stats`: the account's effective figures; `max_storage` is the bytes the account
 * may keep (null: unlimited). `extra` keeps unknown fields. The OpenAPI document's `Limits`
 * (until 0.2.0 this class was `AccountLimits`, still an alias).
 */
final readonly class Limits implements \JsonSerializable
{
    private const KNOWN = ['max_file_size', 'daily_uploads', 'requests_per_minute', 'requests_per_day', 'max_storage'];

    /** @param array<string, mixed> $extra */
    public function __construct(
        public int $max_file_size,
        public int $daily_uploads,
        public int $requests_per_minute,
        public int $requests_per_day,
        public array $extra = [],
        /** Bytes of storage the account may use (`stats->total_size` + `stats->storage_reserved`); null: unlimited. */
        public ?int $max_storage = null,
    ) {
    }

    /** @param array<string, mixed> $data */
    public static function fromArray(array $data): self
    {
        return new self(
            (int) ($data['max_file_size'] ?? 0),
            (int) ($data['daily_uploads'] ?? 0),
            (int) ($data['requests_per_minute'] ?? 0),
            (int) ($data['requests_per_day'] ?? 0),
            array_diff_key($data, array_flip(self::KNOWN)),
            isset($data['max_storage']) ? (int) $data['max_storage'] : null,
        );
    }

    /** @return array<string, mixed> */
    public function toArray(): array
    {
        return [
            'max_file_size' => $this->max_file_size,
            'daily_uploads' => $this->daily_uploads,
            'requests_per_minute' => $this->requests_per_minute,
            'requests_per_day' => $this->requests_per_day,
            'max_storage' => $this->max_storage,
        ] + $this->extra;
    }

    /** @return array<string, mixed> */
    public function jsonSerialize(): array
    {
        return $this->toArray();
    }
}
