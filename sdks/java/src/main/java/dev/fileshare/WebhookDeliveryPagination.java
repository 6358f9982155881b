package dev.fileshare;

/**
 * Where a page of an endpoint's deliveries stands.
 *
 * @param limit the page size used
 * @param nextBeforeId the {@code before_id} of the next (older) page when more deliveries follow, else
 *     null: pass it to {@link DeliveryListParams.Builder#beforeId(long)}
 */
public record WebhookDeliveryPagination(long limit, Long nextBeforeId) {}
