<?php

declare(strict_types=1);

namespace Fileshare\Model;

use Fileshare\Exception\FileshareException;

/**
 * The API key the client calls with, and its account's plan (`GET /key`, `$client->key()`).
 *
 * Fields mirror the API's `key` object, with the answer's `plan` beside them; `created`,
 * `expiry` and `last_used` are `created_at`, `expires_at` and `last_used_at` as date-times in
 * UTC, and `extra` keeps fields this SDK does not know yet (in `key` or beside it). toArray() /
 * json_encode() give the API's `key` object with `plan`. The key itself is never in it: `prefix`
 * is its first characters, as the dashboard shows them.
 */
final readonly class CurrentKey implements \JsonSerializable
{
    /** The nine scopes, in the API's order; a full key holds them all. */
    public const SCOPES = ['files:read', 'files:write', 'files:delete', 'links:read', 'links:write', 'stats:read', 'webhooks:manage',
        'requests:manage', 'audit:read'];

    private const KNOWN = ['key_id', 'name', 'prefix', 'scopes', 'allowed_ips', 'created_at', 'expires_at', 'last_used_at', 'plan'];

    public \DateTimeImmutable $created;
    /** `expires_at` as a date-time in UTC; null: the key does not expire. */
    public ?\DateTimeImmutable $expiry;
    /** `last_used_at` as a date-time in UTC; null: never used before. */
    public ?\DateTimeImmutable $last_used;

    /**
     * @param list<string>         $scopes
     * @param list<string>         $allowed_ips
     * @param array<string, mixed> $extra
     */
    public function __construct(
        public int $key_id,
        /** The name given to the key when it was made (dashboard or CLI), or null. */
        public ?string $name,
        /** The key's first characters (`fsk_Ab12Cd`), to tell keys apart; never the key. */
        public string $prefix,
        /** The scope names the key holds (all nine, in the API's order, for a full key). */
        public array $scopes,
        /** The addresses and CIDR ranges the key may be used from; empty: anywhere. */
        public array $allowed_ips,
        /** UTC, `YYYY-MM-DD HH:MM:SS`. */
        public string $created_at,
        /** UTC, `YYYY-MM-DD HH:MM:SS`, or null: no expiry. */
        public ?string $expires_at,
        /** UTC, `YYYY-MM-DD HH:MM:SS`, or null. */
        public ?string $last_used_at,
        /** The account's plan (`pro`, `business`, …). */
        public string $plan,
        public array $extra = [],
    ) {
        $this->created = FileRecord::parseDate($created_at);
        $this->expiry = $expires_at === null ? null : FileRecord::parseDate($expires_at);
        $this->last_used = $last_used_at === null ? null : FileRecord::parseDate($last_used_at);
    }

    /** @param array<string, mixed> $data the answer of `GET /key` (`key` and `plan`) */
    public static function fromArray(array $data): self
    {
        $key = $data['key'] ?? null;
        if (!\is_array($key) || !\is_int($key['key_id'] ?? null)) {
            throw new FileshareException('the answer holds no key object');
        }
        $strings = static fn (mixed $list): array => \is_array($list) ? array_values(array_map('strval', $list)) : [];

        return new self(
            $key['key_id'],
            isset($key['name']) ? (string) $key['name'] : null,
            (string) ($key['prefix'] ?? ''),
            $strings($key['scopes'] ?? []),
            $strings($key['allowed_ips'] ?? []),
            (string) ($key['created_at'] ?? ''),
            isset($key['expires_at']) ? (string) $key['expires_at'] : null,
            isset($key['last_used_at']) ? (string) $key['last_used_at'] : null,
            (string) ($data['plan'] ?? ''),
            array_diff_key($key, array_flip(self::KNOWN)) + array_diff_key($data, array_flip([...self::KNOWN, 'key', 'plan', 'success'])),
        );
    }

    /** Whether the key holds $scope (e.g. `files:delete`). */
    public function hasScope(string $scope): bool
    {
        return \in_array($scope, $this->scopes, true);
    }

    /** @return array<string, mixed> the API's `key` object with `plan` */
    public function toArray(): array
    {
        return [
            'key_id' => $this->key_id,
            'name' => $this->name,
            'prefix' => $this->prefix,
            'scopes' => $this->scopes,
            'allowed_ips' => $this->allowed_ips,
            'created_at' => $this->created_at,
            'expires_at' => $this->expires_at,
            'last_used_at' => $this->last_used_at,
            'plan' => $this->plan,
        ] + $this->extra;
    }

    /** @return array<string, mixed> */
    public function jsonSerialize(): array
    {
        return $this->toArray();
    }
}
