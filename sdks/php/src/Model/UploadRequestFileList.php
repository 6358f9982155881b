<?php

declare(strict_types=1);

namespace Fileshare\Model;

use Fileshare\Exception\FileshareException;

/** One page of `GET /upload-requests/{id}/files`: `files` (file records, newest first) and `pagination`. */
final readonly class UploadRequestFileList implements \JsonSerializable
{
    /** @param list<FileRecord> $files */
    public function __construct(
        public array $files,
        public UploadRequestFilePagination $pagination,
    ) {
    }

    /** @param array<string, mixed> $data */
    public static function fromArray(array $data): self
    {
        if (!\is_array($data['files'] ?? null)) {
            throw new FileshareException('the answer holds no file list');
        }

        return new self(
            array_values(array_map(static fn (mixed $f): FileRecord => FileRecord::fromArray(\is_array($f) ? $f : []), $data['files'])),
            UploadRequestFilePagination::fromArray(\is_array($data['pagination'] ?? null) ? $data['pagination'] : []),
        );
    }

    /** @return array<string, mixed> */
    public function jsonSerialize(): array
    {
        return ['files' => $this->files, 'pagination' => $this->pagination];
    }
}
