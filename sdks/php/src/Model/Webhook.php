<?php

declare(strict_types=1);

namespace Fileshare\Model;

use Fileshare\Exception\FileshareException;

/**
 * A webhook endpoint (`/webhooks`, `$client->webhooks`): the URL the server sends signed events
 * to, which events, and whether it is enabled.
 *
 * Fields mirror the API's JSON; `created` is `created_at` as a date-time in UTC, and `extra` keeps
 * fields this SDK does not know yet. toArray() / json_encode() give the API's object. `secret` is
 * there only in the answers of create() and rotateSecret() (null otherwise): store it then, the
 * API never shows it again. var_dump() and print_r() show it redacted.
 */
final readonly class Webhook implements \JsonSerializable
{
    /** Disabled at once: the endpoint answered 410 Gone. */
    public const DISABLED_GONE = 'gone';
    /** Disabled after 5 days of failed deliveries with no success. */
    public const DISABLED_FAILING = 'failing';
    /** Disabled by its owner (update(enabled: false)). */
    public const DISABLED_OWNER = 'owner';
    /** `events` that subscribes to every event type, today's and later ones. */
    public const ALL_EVENTS = ['*'];

    private const KNOWN = ['webhook_id', 'url', 'events', 'description', 'enabled', 'disabled_reason', 'created_at', 'secret'];

    public \DateTimeImmutable $created;

    /**
     * @param list<string>         $events
     * @param array<string, mixed> $extra
     */
    public function __construct(
        public int $webhook_id,
        /** Where the events go (https; http only where the operator allows it). */
        public string $url,
        /** The event types sent to it (`file.uploaded`, …), or `["*"]`: all. */
        public array $events,
        public ?string $description,
        public bool $enabled,
        /** Why it is disabled: null, `gone`, `failing` or `owner` (the DISABLED_* constants). */
        public ?string $disabled_reason,
        /** UTC, `YYYY-MM-DD HH:MM:SS`. */
        public string $created_at,
        /** `whsec_…`: only in the answers of create() and rotateSecret(); null otherwise. */
        #[\SensitiveParameter] public ?string $secret = null,
        public array $extra = [],
    ) {
        $this->created = FileRecord::parseDate($created_at);
    }

    /** @param array<string, mixed> $data a webhook object, or an answer holding one in `webhook` */
    public static function fromArray(array $data): self
    {
        if (\is_array($data['webhook'] ?? null)) {
            $data = $data['webhook'];
        }
        if (!\is_int($data['webhook_id'] ?? null)) {
            throw new FileshareException('the answer holds no webhook object');
        }

        return new self(
            $data['webhook_id'],
            (string) ($data['url'] ?? ''),
            \is_array($data['events'] ?? null) ? array_values(array_map('strval', $data['events'])) : [],
            isset($data['description']) ? (string) $data['description'] : null,
            (bool) ($data['enabled'] ?? false),
            isset($data['disabled_reason']) ? (string) $data['disabled_reason'] : null,
            (string) ($data['created_at'] ?? ''),
            isset($data['secret']) ? (string) $data['secret'] : null,
            array_diff_key($data, array_flip([...self::KNOWN, 'success'])),
        );
    }

    /**
     * @param array<string, mixed> $data the answer of `GET /webhooks`
     *
     * @return list<self>
     */
    public static function listFromArray(array $data): array
    {
        if (!\is_array($data['webhooks'] ?? null)) {
            throw new FileshareException('the answer holds no webhook list');
        }

        return array_values(array_map(static fn (mixed $w): self => self::fromArray(\is_array($w) ? $w : []), $data['webhooks']));
    }

    /** Whether it receives the events of $type (listed, or subscribed to all with `*`). */
    public function receives(string $type): bool
    {
        return \in_array('*', $this->events, true) || \in_array($type, $this->events, true);
    }

    /** @return array<string, mixed> the API's object (with `secret` when there is one) */
    public function toArray(): array
    {
        $data = [
            'webhook_id' => $this->webhook_id,
            'url' => $this->url,
            'events' => $this->events,
            'description' => $this->description,
            'enabled' => $this->enabled,
            'disabled_reason' => $this->disabled_reason,
            'created_at' => $this->created_at,
        ];
        if ($this->secret !== null) {
            $data['secret'] = $this->secret;
        }

        return $data + $this->extra;
    }

    /** @return array<string, mixed> */
    public function jsonSerialize(): array
    {
        return $this->toArray();
    }

    /** @return array<string, mixed> the fields, the secret redacted */
    public function __debugInfo(): array
    {
        $fields = get_object_vars($this);
        if ($this->secret !== null) {
            $fields['secret'] = 'whsec_[redacted]';
        }

        return $fields;
    }
}
