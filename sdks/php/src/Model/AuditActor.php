<?php

declare(strict_types=1);

namespace Fileshare\Model;

/** `actor` of an AuditEvent: who did it. */
final readonly class AuditActor implements \JsonSerializable
{
    public const TYPE_KEY = 'key';
    public const TYPE_SESSION = 'session';
    public const TYPE_OPERATOR = 'operator';
    public const TYPE_PUBLIC = 'public';
    public const TYPE_SYSTEM = 'system';
    /** A guest of an upload request (`id`: the request_id), for the files it sent (`file.uploaded`). */
    public const TYPE_GUEST = 'guest';

    /** @param array<string, mixed> $extra */
    public function __construct(
        /**
         * `key` (an API key), `session` (the dashboard), `operator` (the CLI), `public` (a link's visitor), `guest` (an upload
         * request's guest) or `system`.
         */
        public string $type,
        /** The key's or session's id, the upload request's id for a guest, or null. */
        public ?int $id = null,
        /** The key's name, when it has one. */
        public ?string $name = null,
        public array $extra = [],
    ) {
    }

    /** @param array<string, mixed> $data */
    public static function fromArray(array $data): self
    {
        return new self(
            (string) ($data['type'] ?? ''),
            isset($data['id']) ? (int) $data['id'] : null,
            isset($data['name']) ? (string) $data['name'] : null,
            array_diff_key($data, array_flip(['type', 'id', 'name'])),
        );
    }

    /** @return array<string, mixed> the API's object (`name` only when there is one) */
    public function toArray(): array
    {
        return ['type' => $this->type, 'id' => $this->id] + ($this->name === null ? [] : ['name' => $this->name]) + $this->extra;
    }

    /** @return array<string, mixed> */
    public function jsonSerialize(): array
    {
        return $this->toArray();
    }
}
