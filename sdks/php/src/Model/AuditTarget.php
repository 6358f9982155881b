<?php

declare(strict_types=1);

namespace Fileshare\Model;

/** `target` of an AuditEvent: what it was done to (`file` 7, `link` 12, `key` 3, …). */
final readonly class AuditTarget implements \JsonSerializable
{
    /** @param array<string, mixed> $extra */
    public function __construct(
        public string $type,
        public ?int $id = null,
        public array $extra = [],
    ) {
    }

    /** @param array<string, mixed> $data */
    public static function fromArray(array $data): self
    {
        return new self(
            (string) ($data['type'] ?? ''),
            isset($data['id']) ? (int) $data['id'] : null,
            array_diff_key($data, array_flip(['type', 'id'])),
        );
    }

    /** @return array<string, mixed> the API's object */
    public function toArray(): array
    {
        return ['type' => $this->type, 'id' => $this->id] + $this->extra;
    }

    /** @return array<string, mixed> */
    public function jsonSerialize(): array
    {
        return $this->toArray();
    }
}
