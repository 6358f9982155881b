<?php

declare(strict_types=1);

namespace Fileshare\Model;

use Fileshare\Exception\FileshareException;

/**
 * The answer of `GET /stats` (`$client->stats()`): `stats` (Stats), `limits` (Limits), `plan`; `extra` keeps top-level fields this SDK does not know yet.
 * Named as in the JavaScript and Python SDKs (until 0.2.0 this class was `Stats`).
 */
final readonly class StatsResult implements \JsonSerializable
{
    private const KNOWN = ['stats', 'limits', 'plan', 'success'];

    /** @param array<string, mixed> $extra */
    public function __construct(
        public Stats $stats,
        public Limits $limits,
        public string $plan,
        public array $extra = [],
    ) {
    }

    /** @param array<string, mixed> $data */
    public static function fromArray(array $data): self
    {
        if (!\is_array($data['stats'] ?? null) || !\is_array($data['limits'] ?? null)) {
            throw new FileshareException('the answer holds no statistics');
        }

        return new self(
            Stats::fromArray($data['stats']),
            Limits::fromArray($data['limits']),
            (string) ($data['plan'] ?? ''),
            array_diff_key($data, array_flip(self::KNOWN)),
        );
    }

    /** @return array<string, mixed> the API's object (without `success`) */
    public function toArray(): array
    {
        return ['stats' => $this->stats->toArray(), 'limits' => $this->limits->toArray(), 'plan' => $this->plan] + $this->extra;
    }

    /** @return array<string, mixed> */
    public function jsonSerialize(): array
    {
        return $this->toArray();
    }
}
