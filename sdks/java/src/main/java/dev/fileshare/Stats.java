package dev.fileshare;

import java.util.Map;

/**
 * The account's figures ({@code stats} of {@code GET /stats}).
 *
 * @param totalFiles files the account has now
 * @param totalSize sum of their sizes, in bytes
 * @param totalDownloads sum of their download counts
 * @param uploadsToday daily upload slots used since 00:00 UTC
 * @param extra fields this SDK does not know yet (never null)
 */
public record Stats(long totalFiles, long totalSize, long totalDownloads, long uploadsToday, Map<String, Object> extra) {
    /**
     * Keeps {@code extra} unmodifiable and never null (its values may be null: a field the API sent as null).
     *
     * @param totalFiles files the account has now
     * @param totalSize sum of their sizes, in bytes
     * @param totalDownloads sum of their download counts
     * @param uploadsToday daily upload slots used since 00:00 UTC
     * @param extra fields this SDK does not know yet (never null)
     */
    public Stats {
        extra = Json.copyExtra(extra);
    }
}
