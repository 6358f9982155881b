<?php

declare(strict_types=1);

namespace Fileshare\Model;

use Fileshare\Exception\FileshareException;

/** One page of `GET /audit-events`: `events` (newest first) and `pagination`. */
final readonly class AuditEventList implements \JsonSerializable
{
    /** @param list<AuditEvent> $events */
    public function __construct(
        public array $events,
        public AuditPagination $pagination,
    ) {
    }

    /** @param array<string, mixed> $data */
    public static function fromArray(array $data): self
    {
        if (!\is_array($data['events'] ?? null) || !\is_array($data['pagination'] ?? null)) {
            throw new FileshareException('the answer holds no audit event list');
        }

        return new self(
            array_values(array_map(static fn (array $e): AuditEvent => AuditEvent::fromArray($e), $data['events'])),
            AuditPagination::fromArray($data['pagination']),
        );
    }

    /** @return array<string, mixed> */
    public function jsonSerialize(): array
    {
        return ['events' => $this->events, 'pagination' => $this->pagination];
    }
}
