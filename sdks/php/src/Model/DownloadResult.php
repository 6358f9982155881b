<?php

declare(strict_types=1);

namespace Fileshare\Model;

/** What download() did: the file's size and SHA-256, and where a resumed download started. */
final readonly class DownloadResult
{
    public function __construct(
        public int $size,
        public string $sha256,
        /** Bytes of a partial destination file that were kept (0: downloaded from the start). */
        public int $resumed_from,
    ) {
    }
}
