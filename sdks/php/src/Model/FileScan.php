<?php

declare(strict_types=1);

namespace Fileshare\Model;

/**
 * `scan` of a FileRecord: the virus scan (ClamAV) of a server that scans its files. A FileRecord's
 * `scan` is null when the server does not scan, or did not when the file was stored.
 *
 * - `pending`: not scanned yet. A server in `required` mode answers its links 409 `scan_pending`
 *   (ScanPendingException, with getRetryAfter()) until the verdict.
 * - `clean`.
 * - `infected`: `signature` names what the scanner found; the file's bytes and links are gone and
 *   it left the list, only its owner still reads the record (files->get()) until deleting it.
 * - `error`: the scanner could not scan it (larger than its own limit); a `required` server never
 *   serves it (403 `file_not_scannable`, a LimitExceededException).
 * - `skipped`: too large to scan, served unscanned (`async` mode only).
 */
final readonly class FileScan implements \JsonSerializable
{
    public const STATUS_PENDING = 'pending';
    public const STATUS_CLEAN = 'clean';
    public const STATUS_INFECTED = 'infected';
    public const STATUS_ERROR = 'error';
    public const STATUS_SKIPPED = 'skipped';
    /** Every status this SDK knows; later servers may add more. */
    public const STATUSES = [self::STATUS_PENDING, self::STATUS_CLEAN, self::STATUS_INFECTED, self::STATUS_ERROR, self::STATUS_SKIPPED];

    /** `scanned_at` as a date-time in UTC; null while pending. */
    public ?\DateTimeImmutable $scanned;

    /** @param array<string, mixed> $extra */
    public function __construct(
        /** `pending`, `clean`, `infected`, `error` or `skipped` (the STATUS_* constants). */
        public string $status,
        /** The scanner's name for what it found (`Win.Test.EICAR_HDB-1`) when `infected`; null otherwise. */
        public ?string $signature = null,
        /** UTC, `YYYY-MM-DD HH:MM:SS`: when the verdict came; null while pending. */
        public ?string $scanned_at = null,
        public array $extra = [],
    ) {
        $this->scanned = $scanned_at === null ? null : FileRecord::parseDate($scanned_at);
    }

    /** @param array<string, mixed> $data */
    public static function fromArray(array $data): self
    {
        return new self(
            (string) ($data['status'] ?? ''),
            isset($data['signature']) ? (string) $data['signature'] : null,
            isset($data['scanned_at']) ? (string) $data['scanned_at'] : null,
            array_diff_key($data, array_flip(['status', 'signature', 'scanned_at'])),
        );
    }

    /** Not scanned yet. */
    public function isPending(): bool
    {
        return $this->status === self::STATUS_PENDING;
    }

    /** Scanned, nothing found. */
    public function isClean(): bool
    {
        return $this->status === self::STATUS_CLEAN;
    }

    /** Found infected: its bytes and links are gone. */
    public function isInfected(): bool
    {
        return $this->status === self::STATUS_INFECTED;
    }

    /** @return array<string, mixed> the API's object */
    public function toArray(): array
    {
        return ['status' => $this->status, 'signature' => $this->signature, 'scanned_at' => $this->scanned_at] + $this->extra;
    }

    /** @return array<string, mixed> */
    public function jsonSerialize(): array
    {
        return $this->toArray();
    }
}
