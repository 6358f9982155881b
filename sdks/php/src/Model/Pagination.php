<?php

declare(strict_types=1);

namespace Fileshare\Model;

/**
 * `pagination` of `GET /files`: `pages` is ceil(total / limit). `page` is null for a page asked
 * by `before_id`; `next_before_id` is the file_id to ask the next page with (`before_id`), or
 * null when no more files follow.
 */
final readonly class Pagination implements \JsonSerializable
{
    public function __construct(
        public ?int $page,
        public int $limit,
        public int $total,
        public int $pages,
        public ?int $next_before_id = null,
    ) {
    }

    /** @param array<string, mixed> $data */
    public static function fromArray(array $data): self
    {
        return new self(
            isset($data['page']) ? (int) $data['page'] : null,
            (int) ($data['limit'] ?? 0),
            (int) ($data['total'] ?? 0),
            (int) ($data['pages'] ?? 0),
            isset($data['next_before_id']) ? (int) $data['next_before_id'] : null,
        );
    }

    /** @return array<string, ?int> */
    public function jsonSerialize(): array
    {
        return ['page' => $this->page, 'limit' => $this->limit, 'total' => $this->total, 'pages' => $this->pages,
            'next_before_id' => $this->next_before_id];
    }
}
