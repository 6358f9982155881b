package dev.fileshare;

/**
 * Told how a transfer goes: {@code (bytesDone, totalBytes)}. Called on the thread doing the
 * transfer (or the HTTP client's), so keep it quick.
 */
@FunctionalInterface
public interface ProgressListener {
    /**
     * @param bytesDone bytes sent (uploads) or in the destination (downloads) so far
     * @param totalBytes the total, or -1 when unknown (a stream without a declared size)
     */
    void onProgress(long bytesDone, long totalBytes);
}
