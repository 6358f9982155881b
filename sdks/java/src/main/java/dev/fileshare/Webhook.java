package dev.fileshare;

import java.time.OffsetDateTime;
import java.util.List;
import java.util.Map;

/**
 * A webhook endpoint ({@link FileshareClient#webhooks()}): the URL the server sends signed events
 * to, which events, and whether it is enabled.
 *
 * <p>{@link #secret()} is there only in the answers of {@link WebhooksResource#create create} and
 * {@link WebhooksResource#rotateSecret rotateSecret} (null otherwise): store it then, the API never
 * shows it again. {@link #toString()} shows it redacted.
 *
 * @param webhookId the endpoint's id
 * @param url where the events go (https; http only where the operator allows it)
 * @param events the event types sent to it ({@link WebhookEvent#FILE_UPLOADED}, ...), or {@code ["*"]}:
 *     all, today's and later ones (unmodifiable)
 * @param description the owner's note, or null
 * @param enabled whether events are sent to it
 * @param disabledReason why it is disabled: null, {@link #DISABLED_GONE}, {@link #DISABLED_FAILING} or
 *     {@link #DISABLED_OWNER}
 * @param createdAt UTC, {@code YYYY-MM-DD HH:MM:SS}; see {@link #createdAtTime()}
 * @param secret {@code whsec_...}, what {@link Webhooks#verify(byte[], Map, String)} needs: only in the
 *     answers of create and rotateSecret, else null
 * @param extra fields of the API's object this SDK does not know yet (never null)
 */
public record Webhook(
        long webhookId,
        String url,
        List<String> events,
        String description,
        boolean enabled,
        String disabledReason,
        String createdAt,
        String secret,
        Map<String, Object> extra) {

    /** Disabled at once: the endpoint answered 410 Gone. */
    public static final String DISABLED_GONE = "gone";
    /** Disabled after 5 days of failed deliveries without a success. */
    public static final String DISABLED_FAILING = "failing";
    /** Disabled by its owner ({@code enabled(false)}). */
    public static final String DISABLED_OWNER = "owner";
    /** {@code events} that subscribes to every event type, today's and later ones. */
    public static final List<String> ALL_EVENTS = List.of("*");

    /**
     * Keeps {@code events} and {@code extra} unmodifiable and never null.
     *
     * @param webhookId the endpoint's id
     * @param url where the events go
     * @param events the event types sent to it, or {@code ["*"]}
     * @param description the owner's note, or null
     * @param enabled whether events are sent to it
     * @param disabledReason why it is disabled, or null
     * @param createdAt UTC, {@code YYYY-MM-DD HH:MM:SS}
     * @param secret {@code whsec_...}, or null
     * @param extra fields this SDK does not know yet (never null)
     */
    public Webhook {
        events = events == null ? List.of() : List.copyOf(events);
        extra = Json.copyExtra(extra);
    }

    /**
     * {@link #createdAt()} as a date-time in UTC.
     *
     * @return when the endpoint was made (offset {@code Z}), or null if the API's value cannot be read
     */
    public OffsetDateTime createdAtTime() {
        return ApiTime.parse(createdAt);
    }

    /**
     * Whether the endpoint receives the events of a type: listed, or subscribed to all with {@code *}.
     *
     * @param type an event type, e.g. {@link WebhookEvent#FILE_UPLOADED}
     * @return whether it is among {@link #events()}
     */
    public boolean receives(String type) {
        return events.contains("*") || (type != null && events.contains(type));
    }

    /** @return the fields, the secret redacted */
    @Override
    public String toString() {
        return "Webhook[webhookId=" + webhookId + ", url=" + url + ", events=" + events + ", description=" + description
                + ", enabled=" + enabled + ", disabledReason=" + disabledReason + ", createdAt=" + createdAt
                + ", secret=" + (secret == null ? null : "whsec_[redacted]") + ", extra=" + extra + "]";
    }
}
