<?php

declare(strict_types=1);

namespace Fileshare\Model;

use Fileshare\Exception\FileshareException;

/**
 * One message to one webhook endpoint and its attempts (`GET /webhooks/{id}/deliveries`).
 * Deliveries are kept 30 days.
 *
 * Fields mirror the API's JSON; `created` and `next_attempt` are `created_at` and
 * `next_attempt_at` as date-times in UTC, and `extra` keeps fields this SDK does not know yet.
 * toArray() / json_encode() give the API's object.
 */
final readonly class WebhookDelivery implements \JsonSerializable
{
    /** Not delivered yet: the next attempt is at `next_attempt_at`. */
    public const STATE_PENDING = 'pending';
    /** An attempt got a 2xx answer. */
    public const STATE_SUCCEEDED = 'succeeded';
    /** Every attempt failed (the last after about 32 hours), or the endpoint answered 410. */
    public const STATE_FAILED = 'failed';

    private const KNOWN = ['delivery_id', 'event_type', 'message_id', 'attempts', 'last_status', 'last_error', 'next_attempt_at', 'state',
        'created_at'];

    public \DateTimeImmutable $created;
    /** `next_attempt_at` as a date-time in UTC, or null: no attempt is planned. */
    public ?\DateTimeImmutable $next_attempt;

    /** @param array<string, mixed> $extra */
    public function __construct(
        public int $delivery_id,
        /** `file.uploaded`, `webhook.test`, … */
        public string $event_type,
        /** `msg_…`: the message's `webhook-id` header, the same on each attempt. */
        public string $message_id,
        /** Attempts made so far. */
        public int $attempts,
        /** The HTTP status of the last attempt, or null (none yet, or no answer). */
        public ?int $last_status,
        /** A short error of the last attempt (`timeout`, `redirect`, …), or null. */
        public ?string $last_error,
        /** UTC, `YYYY-MM-DD HH:MM:SS`, or null. */
        public ?string $next_attempt_at,
        /** `pending`, `succeeded` or `failed` (the STATE_* constants). */
        public string $state,
        /** UTC, `YYYY-MM-DD HH:MM:SS`. */
        public string $created_at,
        public array $extra = [],
    ) {
        $this->created = FileRecord::parseDate($created_at);
        $this->next_attempt = $next_attempt_at === null ? null : FileRecord::parseDate($next_attempt_at);
    }

    /** @param array<string, mixed> $data */
    public static function fromArray(array $data): self
    {
        if (!\is_int($data['delivery_id'] ?? null)) {
            throw new FileshareException('the answer holds no webhook delivery');
        }

        return new self(
            $data['delivery_id'],
            (string) ($data['event_type'] ?? ''),
            (string) ($data['message_id'] ?? ''),
            (int) ($data['attempts'] ?? 0),
            isset($data['last_status']) ? (int) $data['last_status'] : null,
            isset($data['last_error']) ? (string) $data['last_error'] : null,
            isset($data['next_attempt_at']) ? (string) $data['next_attempt_at'] : null,
            (string) ($data['state'] ?? ''),
            (string) ($data['created_at'] ?? ''),
            array_diff_key($data, array_flip(self::KNOWN)),
        );
    }

    /** @return array<string, mixed> the API's object */
    public function toArray(): array
    {
        return [
            'delivery_id' => $this->delivery_id,
            'event_type' => $this->event_type,
            'message_id' => $this->message_id,
            'attempts' => $this->attempts,
            'last_status' => $this->last_status,
            'last_error' => $this->last_error,
            'next_attempt_at' => $this->next_attempt_at,
            'state' => $this->state,
            'created_at' => $this->created_at,
        ] + $this->extra;
    }

    /** @return array<string, mixed> */
    public function jsonSerialize(): array
    {
        return $this->toArray();
    }
}
