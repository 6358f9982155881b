<?php

declare(strict_types=1);

namespace Fileshare\Model;

use Fileshare\Exception\FileshareException;

/** One page of `GET /webhooks/{id}/deliveries`: `deliveries` (newest first) and `pagination`. */
final readonly class WebhookDeliveryList implements \JsonSerializable
{
    /** @param list<WebhookDelivery> $deliveries */
    public function __construct(
        public array $deliveries,
        public WebhookDeliveryPagination $pagination,
    ) {
    }

    /** @param array<string, mixed> $data */
    public static function fromArray(array $data): self
    {
        if (!\is_array($data['deliveries'] ?? null)) {
            throw new FileshareException('the answer holds no webhook delivery list');
        }

        return new self(
            array_values(array_map(static fn (mixed $d): WebhookDelivery => WebhookDelivery::fromArray(\is_array($d) ? $d : []), $data['deliveries'])),
            WebhookDeliveryPagination::fromArray(\is_array($data['pagination'] ?? null) ? $data['pagination'] : []),
        );
    }

    /** @return array<string, mixed> */
    public function jsonSerialize(): array
    {
        return ['deliveries' => $this->deliveries, 'pagination' => $this->pagination];
    }
}
