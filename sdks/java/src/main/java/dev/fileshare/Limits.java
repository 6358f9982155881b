package dev.fileshare;

import java.util.Map;

/**
 * The account's effective limits ({@code limits} of {@code GET /stats}).
 *
 * @param maxFileSize largest file allowed, in bytes
 * @param dailyUploads uploads allowed per UTC day
 * @param requestsPerMinute request rate limit, rolling 60 seconds
 * @param requestsPerDay request rate limit, per UTC day
 * @param maxStorage the storage quota: the bytes the account may keep (its files plus the uploads
 *     in progress), or null: unlimited
 * @param extra fields this SDK does not know yet (never null)
 */
public record Limits(long maxFileSize, long dailyUploads, long requestsPerMinute, long requestsPerDay, Long maxStorage,
                     Map<String, Object> extra) {
    /**
     * Keeps {@code extra} unmodifiable and never null (its values may be null: a field the API sent as null).
     *
     * @param maxFileSize largest file allowed, in bytes
     * @param dailyUploads uploads allowed per UTC day
     * @param requestsPerMinute request rate limit, rolling 60 seconds
     * @param requestsPerDay request rate limit, per UTC day
     * @param maxStorage the storage quota in bytes, or null: unlimited
     * @param extra fields this SDK does not know yet (never null)
     */
    public Limits {
        extra = Json.copyExtra(extra);
    }

    /**
     * The limits without {@code maxStorage} (null: unlimited): the constructor of SDK versions before
     * storage quotas, kept so that code that builds a {@code Limits} still compiles.
     *
     * @param maxFileSize largest file allowed, in bytes
     * @param dailyUploads uploads allowed per UTC day
     * @param requestsPerMinute request rate limit, rolling 60 seconds
     * @param requestsPerDay request rate limit, per UTC day
     * @param extra fields this SDK does not know yet
     */
    public Limits(long maxFileSize, long dailyUploads, long requestsPerMinute, long requestsPerDay, Map<String, Object> extra) {
        this(maxFileSize, dailyUploads, requestsPerMinute, requestsPerDay, null, extra);
    }
}
