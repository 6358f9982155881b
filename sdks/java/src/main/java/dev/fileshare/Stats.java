package dev.fileshare;

import java.util.Map;

/**
 * The account's figures ({@code stats} of {@code GET /stats}).
 *
 * @param totalFiles files the account has now
 * @param totalSize sum of their sizes, in bytes: the storage used
 * @param totalDownloads sum of their download counts
 * @param uploadsToday daily upload slots used since 00:00 UTC
 * @param storageReserved bytes held by uploads in progress (reserved against the storage quota
 *     when each started); {@code totalSize + storageReserved} never passes {@link Limits#maxStorage()}
 * @param extra fields this SDK does not know yet (never null)
 */
public record Stats(long totalFiles, long totalSize, long totalDownloads, long uploadsToday, long storageReserved,
                    Map<String, Object> extra) {
    /**
     * Keeps {@code extra} unmodifiable and never null (its values may be null: a field the API sent as null).
     *
     * @param totalFiles files the account has now
     * @param totalSize sum of their sizes, in bytes
     * @param totalDownloads sum of their download counts
     * @param uploadsToday daily upload slots used since 00:00 UTC
     * @param storageReserved bytes held by uploads in progress
     * @param extra fields this SDK does not know yet (never null)
     */
    public Stats {
        extra = Json.copyExtra(extra);
    }

    /**
     * The figures without {@code storageReserved} (0): the constructor of SDK versions before
     * storage quotas, kept so that code that builds a {@code Stats} still compiles.
     *
     * @param totalFiles files the account has now
     * @param totalSize sum of their sizes, in bytes
     * @param totalDownloads sum of their download counts
     * @param uploadsToday daily upload slots used since 00:00 UTC
     * @param extra fields this SDK does not know yet
     */
    public Stats(long totalFiles, long totalSize, long totalDownloads, long uploadsToday, Map<String, Object> extra) {
        this(totalFiles, totalSize, totalDownloads, uploadsToday, 0, extra);
    }
}
