<?php

declare(strict_types=1);

namespace Fileshare\Model;

use Fileshare\Exception\FileshareException;

/**
 * A file, as the API describes it (`GET /files`, `GET /files/{id}`, an upload's answer).
 * Fields mirror the API's JSON; `uploaded_at` is `upload_date` and `expiry` is `expires_at` as
 * date-times in UTC, `source` says how it came in (the API, the dashboard, or an upload
 * request), `scan` is its virus scan (null when the server does not scan), and `extra` keeps
 * fields this SDK does not know yet. toArray() / json_encode() give
 * the API's object.
 */
final readonly class FileRecord implements \JsonSerializable
{
    private const KNOWN = ['file_id', 'filename', 'size', 'upload_date', 'download_count', 'public_link', 'content_type', 'sha256', 'expires_at', 'source', 'scan'];

    public \DateTimeImmutable $uploaded_at;
    /** `expires_at` as a date-time in UTC; null: the file does not expire. */
    public ?\DateTimeImmutable $expiry;

    /** @param array<string, mixed> $extra */
    public function __construct(
        public int $file_id,
        public string $filename,
        public int $size,
        /** UTC, `YYYY-MM-DD HH:MM:SS`. */
        public string $upload_date,
        public int $download_count,
        public string $public_link,
        public string $content_type,
        /** Lower-case hex SHA-256 of the content; the download `ETag` is this value in quotes. */
        public string $sha256,
        public array $extra = [],
        /** UTC, `YYYY-MM-DD HH:MM:SS`: from then on the file and its links are gone. Null: no expiry. */
        public ?string $expires_at = null,
        /** How the file came in: `api`, `dashboard`, or `upload_request` with its `request_id`; null from a server that does not say. */
        public ?FileSource $source = null,
        /** The virus scan (`status` pending, clean, infected, error or skipped); null when the server does not scan, or did not when the file was stored. */
        public ?FileScan $scan = null,
    ) {
        $this->uploaded_at = self::parseDate($upload_date);
        $this->expiry = $expires_at === null ? null : self::parseDate($expires_at);
    }

    /** @param array<string, mixed> $data */
    public static function fromArray(array $data): self
    {
        if (!\is_int($data['file_id'] ?? null)) {
            throw new FileshareException('the answer holds no file object');
        }
        unset($data['success']);
        $extra = array_diff_key($data, array_flip(self::KNOWN));

        return new self(
            $data['file_id'],
            (string) ($data['filename'] ?? ''),
            (int) ($data['size'] ?? 0),
            (string) ($data['upload_date'] ?? ''),
            (int) ($data['download_count'] ?? 0),
            (string) ($data['public_link'] ?? ''),
            (string) ($data['content_type'] ?? 'application/octet-stream'),
            strtolower((string) ($data['sha256'] ?? '')),
            $extra,
            isset($data['expires_at']) ? (string) $data['expires_at'] : null,
            \is_array($data['source'] ?? null) ? FileSource::fromArray($data['source']) : null,
            \is_array($data['scan'] ?? null) ? FileScan::fromArray($data['scan']) : null,
        );
    }

    /** @return array<string, mixed> the API's object */
    public function toArray(): array
    {
        return [
            'file_id' => $this->file_id,
            'filename' => $this->filename,
            'size' => $this->size,
            'upload_date' => $this->upload_date,
            'download_count' => $this->download_count,
            'public_link' => $this->public_link,
            'content_type' => $this->content_type,
            'sha256' => $this->sha256,
            'expires_at' => $this->expires_at,
            'scan' => $this->scan?->toArray(),
        ] + ($this->source === null ? [] : ['source' => $this->source->toArray()]) + $this->extra;
    }

    /** @return array<string, mixed> */
    public function jsonSerialize(): array
    {
        return $this->toArray();
    }

    /** `YYYY-MM-DD HH:MM:SS` (UTC) or ISO 8601, as a DateTimeImmutable in UTC. */
    public static function parseDate(string $value): \DateTimeImmutable
    {
        $utc = new \DateTimeZone('UTC');
        $date = \DateTimeImmutable::createFromFormat('!Y-m-d H:i:s', $value, $utc);
        if ($date === false) {
            try {
                $date = new \DateTimeImmutable($value, $utc);
            } catch (\Exception) {
                return new \DateTimeImmutable('@0');
            }
        }

        return $date->setTimezone($utc);
    }
}
