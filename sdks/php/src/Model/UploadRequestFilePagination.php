<?php

declare(strict_types=1);

namespace Fileshare\Model;

/**
 * `pagination` of `GET /upload-requests/{id}/files`: the page's `limit`, and `next_before_id`:
 * the file_id to ask the next (older) page with (`beforeId`), or null on the last page.
 */
final readonly class UploadRequestFilePagination implements \JsonSerializable
{
    public function __construct(
        public int $limit,
        public ?int $next_before_id = null,
    ) {
    }

    /** @param array<string, mixed> $data */
    public static function fromArray(array $data): self
    {
        return new self((int) ($data['limit'] ?? 0), isset($data['next_before_id']) ? (int) $data['next_before_id'] : null);
    }

    /** @return array<string, ?int> */
    public function jsonSerialize(): array
    {
        return ['limit' => $this->limit, 'next_before_id' => $this->next_before_id];
    }
}
