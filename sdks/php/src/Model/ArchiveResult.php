<?php

declare(strict_types=1);

namespace Fileshare\Model;

/** What Files::downloadArchive() did: the bytes of the ZIP written, and the name the server suggests. */
final readonly class ArchiveResult
{
    public function __construct(
        public int $size,
        /** `files-YYYYMMDD-HHMMSS.zip` (UTC), from `Content-Disposition`; null when the server named none. */
        public ?string $filename = null,
    ) {
    }
}
