package dev.fileshare;

import java.util.Map;

/**
 * The account's effective limits ({@code limits} of {@code GET /stats}).
 *
 * @param maxFileSize largest file allowed, in bytes
 * @param dailyUploads uploads allowed per UTC day
 * @param requestsPerMinute request rate limit, rolling 60 seconds
 * @param requestsPerDay request rate limit, per UTC day
 * @param extra fields this SDK does not know yet (never null)
 */
public record Limits(long maxFileSize, long dailyUploads, long requestsPerMinute, long requestsPerDay, Map<String, Object> extra) {
    /**
     * Keeps {@code extra} unmodifiable and never null (its values may be null: a field the API sent as null).
     *
     * @param maxFileSize largest file allowed, in bytes
     * @param dailyUploads uploads allowed per UTC day
     * @param requestsPerMinute request rate limit, rolling 60 seconds
     * @param requestsPerDay request rate limit, per UTC day
     * @param extra fields this SDK does not know yet (never null)
     */
    public Limits {
        extra = Json.copyExtra(extra);
    }
}
