package dev.fileshare;

import java.time.OffsetDateTime;
import java.util.Map;

/**
 * One message to one webhook endpoint and its attempts: {@link WebhooksResource#deliveries}.
 * Deliveries are kept 30 days.
 *
 * @param deliveryId the delivery's id (a later delivery has a larger id)
 * @param eventType the event type, e.g. {@link WebhookEvent#FILE_UPLOADED}
 * @param messageId {@code msg_...}: the message's {@code webhook-id} header, the same on each attempt
 *     (and {@link WebhookEvent#messageId()} of the receiver's event)
 * @param attempts attempts made so far
 * @param lastStatus the HTTP status of the last attempt, or null (none yet, or no answer)
 * @param lastError a short error of the last attempt (a timeout, a redirect, ...), or null
 * @param nextAttemptAt UTC, {@code YYYY-MM-DD HH:MM:SS}, of the next attempt while it is pending, else
 *     null; see {@link #nextAttemptAtTime()}
 * @param state {@link #STATE_PENDING}, {@link #STATE_SUCCEEDED} or {@link #STATE_FAILED}
 * @param createdAt UTC, {@code YYYY-MM-DD HH:MM:SS}; see {@link #createdAtTime()}
 * @param extra fields of the API's object this SDK does not know yet (never null)
 */
public record WebhookDelivery(
        long deliveryId,
        String eventType,
        String messageId,
        int attempts,
        Integer lastStatus,
        String lastError,
        String nextAttemptAt,
        String state,
        String createdAt,
        Map<String, Object> extra) {

    /** Not delivered yet: the next attempt is at {@code nextAttemptAt}. */
    public static final String STATE_PENDING = "pending";
    /** An attempt got a 2xx answer. */
    public static final String STATE_SUCCEEDED = "succeeded";
    /** Every attempt failed (the last about 32 hours after the first), or the endpoint answered 410. */
    public static final String STATE_FAILED = "failed";

    /**
     * Keeps {@code extra} unmodifiable and never null.
     *
     * @param deliveryId the delivery's id
     * @param eventType the event type
     * @param messageId the message's {@code webhook-id}
     * @param attempts attempts made so far
     * @param lastStatus the HTTP status of the last attempt, or null
     * @param lastError a short error of the last attempt, or null
     * @param nextAttemptAt the next attempt (UTC, {@code YYYY-MM-DD HH:MM:SS}), or null
     * @param state pending, succeeded or failed
     * @param createdAt UTC, {@code YYYY-MM-DD HH:MM:SS}
     * @param extra fields this SDK does not know yet (never null)
     */
    public WebhookDelivery {
        extra = Json.copyExtra(extra);
    }

    /**
     * {@link #createdAt()} as a date-time in UTC.
     *
     * @return when the message was queued for this endpoint (offset {@code Z}), or null if the API's value cannot be read
     */
    public OffsetDateTime createdAtTime() {
        return ApiTime.parse(createdAt);
    }

    /**
     * {@link #nextAttemptAt()} as a date-time in UTC.
     *
     * @return when the next attempt is due (offset {@code Z}), or null: none is planned
     */
    public OffsetDateTime nextAttemptAtTime() {
        return ApiTime.parse(nextAttemptAt);
    }
}
