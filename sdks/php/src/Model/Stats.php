<?php

declare(strict_types=1);

namespace Fileshare\Model;

/**
 * `stats` of `GET /stats`: `total_size` is the bytes stored, `storage_reserved` the bytes held for
 * uploads in progress; `extra` keeps fields this SDK does not know yet. The OpenAPI document's
 * `Stats` (until 0.2.0 this class was `AccountStats`, still an alias).
 */
final readonly class Stats implements \JsonSerializable
{
    private const KNOWN = ['total_files', 'total_size', 'total_downloads', 'uploads_today', 'storage_reserved'];

    /** @param array<string, mixed> $extra */
    public function __construct(
        public int $total_files,
        public int $total_size,
        public int $total_downloads,
        public int $uploads_today,
        public array $extra = [],
        /** Bytes reserved by uploads in progress (they count against `limits->max_storage` until they end). */
        public int $storage_reserved = 0,
    ) {
    }

    /** @param array<string, mixed> $data */
    public static function fromArray(array $data): self
    {
        return new self(
            (int) ($data['total_files'] ?? 0),
            (int) ($data['total_size'] ?? 0),
            (int) ($data['total_downloads'] ?? 0),
            (int) ($data['uploads_today'] ?? 0),
            array_diff_key($data, array_flip(self::KNOWN)),
            (int) ($data['storage_reserved'] ?? 0),
        );
    }

    /** @return array<string, mixed> */
    public function toArray(): array
    {
        return [
            'total_files' => $this->total_files,
            'total_size' => $this->total_size,
            'total_downloads' => $this->total_downloads,
            'uploads_today' => $this->uploads_today,
            'storage_reserved' => $this->storage_reserved,
        ] + $this->extra;
    }

    /** @return array<string, mixed> */
    public function jsonSerialize(): array
    {
        return $this->toArray();
    }
}
