<?php

declare(strict_types=1);

namespace Fileshare\Model;

use Fileshare\Exception\FileshareException;

/** One page of `GET /files`: `files` (newest first) and `pagination`. */
final readonly class FileList implements \JsonSerializable
{
    /** @param list<FileRecord> $files */
    public function __construct(
        public array $files,
        public Pagination $pagination,
    ) {
    }

    /** @param array<string, mixed> $data */
    public static function fromArray(array $data): self
    {
        if (!\is_array($data['files'] ?? null) || !\is_array($data['pagination'] ?? null)) {
            throw new FileshareException('the answer holds no file list');
        }

        return new self(
            array_values(array_map(static fn (array $f): FileRecord => FileRecord::fromArray($f), $data['files'])),
            Pagination::fromArray($data['pagination']),
        );
    }

    /** @return array<string, mixed> */
    public function jsonSerialize(): array
    {
        return ['files' => $this->files, 'pagination' => $this->pagination];
    }
}
