package dev.fileshare;

import java.util.List;

/**
 * One page of an endpoint's deliveries, newest first: {@link WebhooksResource#deliveries(long, DeliveryListParams)}.
 *
 * @param deliveries the deliveries of this page (unmodifiable)
 * @param pagination where this page stands
 */
public record WebhookDeliveryList(List<WebhookDelivery> deliveries, WebhookDeliveryPagination pagination) {
    /**
     * Keeps {@code deliveries} unmodifiable.
     *
     * @param deliveries the deliveries of this page
     * @param pagination where this page stands
     */
    public WebhookDeliveryList {
        deliveries = List.copyOf(deliveries);
    }
}
