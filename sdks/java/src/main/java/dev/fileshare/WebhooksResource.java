package dev.fileshare;

import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.function.Predicate;

/**
 * The account's webhook endpoints: {@link #create create}, {@link #list list}, {@link #get get},
 * {@link #update update}, {@link #delete delete}, {@link #rotateSecret rotateSecret}, {@link #test test},
 * {@link #deliveries deliveries}, {@link #iterateDeliveries iterateDeliveries},
 * {@link #retryDelivery retryDelivery}. Obtain it with {@link FileshareClient#webhooks()}. Needs a key
 * with the scope {@code webhooks:manage} (else {@link InsufficientScopeException}). Thread-safe.
 *
 * <p>The messages themselves are checked by your receiver with {@link Webhooks#verify(byte[],
 * java.util.Map, String) Webhooks.verify}, with the secret {@link #create create} returns.
 *
 * <pre>{@code
 * Webhook hook = client.webhooks().create(WebhookCreateParams.builder()
 *         .url("https://example.com/hooks/fileshare").events(WebhookEvent.FILE_UPLOADED).build());
 * store(hook.secret());                      // shown this once
 * String messageId = client.webhooks().test(hook.webhookId());
 * }</pre>
 */
public final class WebhooksResource {
    /** Deliveries per request of {@link #iterateDeliveries(long)} and of an iteration without a limit. */
    static final int ITERATE_LIMIT = 100;
    private static final Predicate<FileshareException> ALWAYS = e -> true;

    private final Transport transport;

    WebhooksResource(Transport transport) {
        this.transport = transport;
    }

    private static String path(long webhookId) {
        return "/webhooks/" + webhookId;
    }

    private Transport.Result call(String method, String path, Object body, Predicate<FileshareException> canRetry) {
        return transport.callJson(method, transport.url(path), body, canRetry);
    }

    private static Webhook webhook(Transport.Result result) {
        return Json.webhook(result.body() == null ? null : result.body().get("webhook"));
    }

    /**
     * A new endpoint. The answer holds its {@link Webhook#secret() secret} ({@code whsec_...}), which no
     * other call shows again: store it for {@link Webhooks#verify(byte[], java.util.Map, String)}. The
     * call carries an {@code Idempotency-Key} (generated, or the params' own), the same on every
     * attempt, so it is retried as every other call (a lost connection too): a creation that reached
     * the server is answered with the same endpoint, never a second one.
     *
     * @param params url, events, description, idempotency key
     * @return the new endpoint, with its secret
     * @throws BadRequestException 400 {@code webhook_url_not_allowed} for a URL the server refuses (not
     *     https, credentials in it, a private or loopback address); 400 {@code invalid_parameter} for
     *     another bad field (the message names it); 422 {@code idempotency_key_reused}
     * @throws LimitExceededException 403 {@code webhook_limit_exceeded}: the account has 20 endpoints
     */
    public Webhook create(WebhookCreateParams params) {
        if (params == null) throw new ConfigurationException("create needs WebhookCreateParams (url and events)");
        String key = transport.idempotencyKeyFor(params.idempotencyKey());
        return webhook(transport.callJson("POST", transport.url("/webhooks"), params.body(), key, ALWAYS));
    }

    /**
     * The account's endpoints (at most 20), without their secrets.
     *
     * @return the endpoints (unmodifiable)
     */
    public List<Webhook> list() {
        return Json.webhooks(call("GET", "/webhooks", null, ALWAYS).body());
    }

    /**
     * One endpoint, without its secret.
     *
     * @param webhookId the endpoint's id
     * @return the endpoint
     * @throws NotFoundException if the account has no such endpoint
     */
    public Webhook get(long webhookId) {
        return webhook(call("GET", path(webhookId), null, ALWAYS));
    }

    /**
     * Changes an endpoint: what the update sets is changed, what it clears is removed, the rest is
     * kept. {@code enabled(true)} enables it again, whatever disabled it.
     *
     * <pre>{@code client.webhooks().update(id, WebhookUpdateParams.builder().allEvents().clearDescription().build());}</pre>
     *
     * @param webhookId the endpoint's id
     * @param update the change
     * @return the endpoint as it is now (without its secret)
     * @throws BadRequestException 400 {@code invalid_parameter} or {@code webhook_url_not_allowed}
     * @throws NotFoundException if the account has no such endpoint
     */
    public Webhook update(long webhookId, WebhookUpdateParams update) {
        if (update == null) throw new ConfigurationException("update needs a WebhookUpdateParams");
        return webhook(call("PATCH", path(webhookId), update.body(), ALWAYS));
    }

    /**
     * Deletes an endpoint; its pending deliveries are dropped.
     *
     * @param webhookId the endpoint's id
     * @throws NotFoundException if the account has no such endpoint
     */
    public void delete(long webhookId) {
        call("DELETE", path(webhookId), null, ALWAYS);
    }

    /**
     * A new secret for an endpoint, in the answer only (store it now). For 24 hours the previous
     * secret signs too: each message carries both signatures meanwhile, so a receiver still on the
     * old secret keeps verifying while you deploy the new one. Sent again only when the server
     * answered 429 or 503.
     *
     * @param webhookId the endpoint's id
     * @return the endpoint with its new {@link Webhook#secret() secret}
     * @throws NotFoundException if the account has no such endpoint
     */
    public Webhook rotateSecret(long webhookId) {
        return webhook(call("POST", path(webhookId) + "/rotate-secret", null, Retry::nothingWasDone));
    }

    /**
     * Sends a {@link WebhookEvent#WEBHOOK_TEST webhook.test} event ({@code data}: {@code webhook_id})
     * to this endpoint only, through the delivery queue (the server answers 202 at once). Sent again
     * only when the server answered 429 or 503.
     *
     * @param webhookId the endpoint's id
     * @return the message's id ({@code msg_...}): its {@code webhook-id} header and the
     *     {@link WebhookDelivery#messageId() messageId} of its delivery
     * @throws NotFoundException if the account has no such endpoint
     */
    public String test(long webhookId) {
        Transport.Result result = call("POST", path(webhookId) + "/test", null, Retry::nothingWasDone);
        if (result.body() == null || !result.body().path("message_id").isTextual()) {
            throw new FileshareException("the answer holds no message_id");
        }
        return result.body().get("message_id").asText();
    }

    /**
     * One page of an endpoint's deliveries, newest first. Deliveries are kept 30 days.
     *
     * <pre>{@code
     * WebhookDeliveryList page = client.webhooks().deliveries(id, DeliveryListParams.builder().limit(50).build());
     * }</pre>
     *
     * @param webhookId the endpoint's id
     * @param params limit, beforeId (null: none)
     * @return the deliveries and the pagination
     * @throws NotFoundException if the account has no such endpoint
     * @throws BadRequestException 400 {@code invalid_parameter} for a value out of range
     */
    public WebhookDeliveryList deliveries(long webhookId, DeliveryListParams params) {
        DeliveryListParams p = params == null ? DeliveryListParams.none() : params;
        return page(webhookId, p, null, null);
    }

    /**
     * The newest page of an endpoint's deliveries, of the server's default size (20).
     *
     * @param webhookId the endpoint's id
     * @return the deliveries and the pagination
     */
    public WebhookDeliveryList deliveries(long webhookId) {
        return deliveries(webhookId, DeliveryListParams.none());
    }

    private WebhookDeliveryList page(long webhookId, DeliveryListParams params, Long beforeId, Integer limit) {
        var query = params.query(beforeId, limit);
        return Json.webhookDeliveryList(transport.requestJson(
                () -> transport.request(transport.url(path(webhookId) + "/deliveries", query), true).GET().build()).body());
    }

    /**
     * Every delivery of an endpoint, newest first, fetched lazily a page at a time: the first page,
     * then each next one by {@code before_id} (the server's {@code next_before_id}) until it is null.
     * No delivery is yielded twice; deliveries made during the iteration are newer than where it
     * stands and are not yielded. Each call of {@link Iterable#iterator()} starts again.
     *
     * @param webhookId the endpoint's id
     * @param params the page size (default 100 here); a {@code beforeId} starts below that id (null: every delivery)
     * @return the deliveries, newest first
     */
    public AutoPagingIterable<WebhookDelivery> iterateDeliveries(long webhookId, DeliveryListParams params) {
        DeliveryListParams p = params == null ? DeliveryListParams.none() : params;
        Integer limit = p.limit() != null ? p.limit() : ITERATE_LIMIT;
        return () -> new Iterator<>() {
            private List<WebhookDelivery> current = List.of();
            private int index;
            private boolean more = true;
            /** The next request's {@code before_id} (null: the params' own, for the first page). */
            private Long beforeId;

            @Override
            public boolean hasNext() {
                while (index >= current.size()) {
                    if (!more) return false;
                    fetch();
                }
                return true;
            }

            private void fetch() {
                WebhookDeliveryList page = page(webhookId, p, beforeId, limit);
                Long after = page.pagination().nextBeforeId();
                Long asked = beforeId != null ? beforeId : p.beforeId();
                if (after != null && asked != null && after >= asked) {
                    throw new FileshareException("the server's next_before_id " + after + " does not go below " + asked);
                }
                beforeId = after;
                more = after != null;
                current = page.deliveries();
                index = 0;
            }

            @Override
            public WebhookDelivery next() {
                if (!hasNext()) throw new NoSuchElementException();
                return current.get(index++);
            }
        };
    }

    /**
     * {@link #iterateDeliveries(long, DeliveryListParams)} of every delivery, 100 a request.
     *
     * @param webhookId the endpoint's id
     * @return the deliveries, newest first
     */
    public AutoPagingIterable<WebhookDelivery> iterateDeliveries(long webhookId) {
        return iterateDeliveries(webhookId, DeliveryListParams.none());
    }

    /**
     * Has the server attempt a delivery again now (a failed one, or a pending one without waiting for
     * its next attempt): the server answers 202 and the attempt goes through the delivery queue, as
     * the same message (the same {@code webhook-id}, which receivers deduplicate by). Sent again only
     * when the server answered 429 or 503.
     *
     * @param webhookId the endpoint's id
     * @param deliveryId the delivery's id
     * @throws NotFoundException if the account has no such endpoint or delivery
     */
    public void retryDelivery(long webhookId, long deliveryId) {
        call("POST", path(webhookId) + "/deliveries/" + deliveryId + "/retry", null, Retry::nothingWasDone);
    }
}
