<?php

declare(strict_types=1);

namespace Fileshare\Model;

/**
 * `source` of a FileRecord: how the file came in. `type` is `api` (uploaded with an API key),
 * `dashboard` (uploaded from the dashboard) or `upload_request` (sent by a guest through an upload
 * request, whose id is `request_id`).
 */
final readonly class FileSource implements \JsonSerializable
{
    public const TYPE_API = 'api';
    public const TYPE_DASHBOARD = 'dashboard';
    public const TYPE_UPLOAD_REQUEST = 'upload_request';

    /** @param array<string, mixed> $extra */
    public function __construct(
        /** `api`, `dashboard` or `upload_request` (the TYPE_* constants; later versions may add more). */
        public string $type,
        /** The upload request's id when `type` is `upload_request`; null otherwise. */
        public ?int $request_id = null,
        public array $extra = [],
    ) {
    }

    /** @param array<string, mixed> $data */
    public static function fromArray(array $data): self
    {
        return new self(
            (string) ($data['type'] ?? ''),
            isset($data['request_id']) ? (int) $data['request_id'] : null,
            array_diff_key($data, array_flip(['type', 'request_id'])),
        );
    }

    /** Whether a guest sent the file through an upload request. */
    public function isUploadRequest(): bool
    {
        return $this->type === self::TYPE_UPLOAD_REQUEST;
    }

    /** @return array<string, mixed> the API's object (`request_id` only when there is one) */
    public function toArray(): array
    {
        return ['type' => $this->type] + ($this->request_id === null ? [] : ['request_id' => $this->request_id]) + $this->extra;
    }

    /** @return array<string, mixed> */
    public function jsonSerialize(): array
    {
        return $this->toArray();
    }
}
