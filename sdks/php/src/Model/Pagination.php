<?php

declare(strict_types=1);

namespace Fileshare\Model;

/** `pagination` of `GET /files`: `pages` is ceil(total / limit). */
final readonly class Pagination implements \JsonSerializable
{
    public function __construct(
        public int $page,
        public int $limit,
        public int $total,
        public int $pages,
    ) {
    }

    /** @param array<string, mixed> $data */
    public static function fromArray(array $data): self
    {
        return new self((int) ($data['page'] ?? 1), (int) ($data['limit'] ?? 0), (int) ($data['total'] ?? 0), (int) ($data['pages'] ?? 0));
    }

    /** @return array<string, int> */
    public function jsonSerialize(): array
    {
        return ['page' => $this->page, 'limit' => $this->limit, 'total' => $this->total, 'pages' => $this->pages];
    }
}
