<?php

declare(strict_types=1);

namespace Fileshare\Model;

/**
 * What download() did: the file's size and SHA-256, where a resumed download started, and the
 * grant URL it downloaded from.
 */
final readonly class DownloadResult
{
    public function __construct(
        public int $size,
        public string $sha256,
        /** Bytes of a partial destination file that were kept (0: downloaded from the start). */
        public int $resumed_from,
        /**
         * The grant URL (`…/download/<token>/<grant>`) the link gave for this download: valid for an
         * hour, it counts no more downloads. Pass it to download() to resume for free. Null when
         * a complete destination file was checked without asking the link.
         */
        public ?string $grant_url = null,
    ) {
    }
}
