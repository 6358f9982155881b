<?php

declare(strict_types=1);

namespace Fileshare\Model;

use Fileshare\Exception\FileshareException;

/**
 * One event of the account's audit log (`GET /audit-events`): a change, who made it, from where,
 * to what.
 *
 * Fields mirror the API's JSON; `time` is `at` as a date-time in UTC, and `extra` keeps fields
 * this SDK does not know yet. toArray() / json_encode() give the API's object.
 */
final readonly class AuditEvent implements \JsonSerializable
{
    private const KNOWN = ['event_id', 'at', 'action', 'actor', 'ip', 'user_agent', 'target', 'details'];

    /** `at` as a date-time in UTC. */
    public \DateTimeImmutable $time;

    /**
     * @param array<string, mixed> $details
     * @param array<string, mixed> $extra
     */
    public function __construct(
        /** Increasing: a newer event has a higher id. */
        public int $event_id,
        /** UTC, `YYYY-MM-DD HH:MM:SS`. */
        public string $at,
        /** `file.uploaded`, `file.updated`, `file.deleted`, `link.created`, `key.revoked`, … */
        public string $action,
        public AuditActor $actor,
        /** The caller's address, cut to its network by default (IPv4 /24, IPv6 /48); null when the server keeps none. */
        public ?string $ip,
        /** The caller's `User-Agent` (at most 200 characters), or null. */
        public ?string $user_agent,
        /** What the event is about, or null. */
        public ?AuditTarget $target,
        /** A small object about the change (`filename`, `size`, …; never a secret); may be empty. */
        public array $details = [],
        public array $extra = [],
    ) {
        $this->time = FileRecord::parseDate($at);
    }

    /** @param array<string, mixed> $data */
    public static function fromArray(array $data): self
    {
        if (!\is_int($data['event_id'] ?? null)) {
            throw new FileshareException('the answer holds no audit event');
        }

        return new self(
            $data['event_id'],
            (string) ($data['at'] ?? ''),
            (string) ($data['action'] ?? ''),
            AuditActor::fromArray(\is_array($data['actor'] ?? null) ? $data['actor'] : []),
            isset($data['ip']) ? (string) $data['ip'] : null,
            isset($data['user_agent']) ? (string) $data['user_agent'] : null,
            \is_array($data['target'] ?? null) ? AuditTarget::fromArray($data['target']) : null,
            \is_array($data['details'] ?? null) ? $data['details'] : [],
            array_diff_key($data, array_flip(self::KNOWN)),
        );
    }

    /** @return array<string, mixed> the API's object */
    public function toArray(): array
    {
        return [
            'event_id' => $this->event_id,
            'at' => $this->at,
            'action' => $this->action,
            'actor' => $this->actor->toArray(),
            'ip' => $this->ip,
            'user_agent' => $this->user_agent,
            'target' => $this->target?->toArray(),
            'details' => $this->details,
        ] + $this->extra;
    }

    /** @return array<string, mixed> the API's object (`details` as a JSON object, `{}` when empty) */
    public function jsonSerialize(): array
    {
        return ['details' => (object) $this->details] + $this->toArray();
    }
}
