package dev.fileshare;

import java.time.OffsetDateTime;
import java.util.Map;

/**
 * The virus scan of a file: {@link FileInfo#scan()}, the file record's {@code scan}. A server that
 * scans (ClamAV) sends it on every file record; a server that does not (or did not when the file was
 * stored) sends {@code null}, and {@link FileInfo#scan()} is null.
 *
 * <pre>{@code
 * FileInfo file = client.files().upload(path);
 * while (file.scan() != null && file.scan().isPending()) {
 *     Thread.sleep(1000);
 *     file = client.files().get(file.fileId());
 * }
 * if (file.scan() != null && file.scan().isInfected()) {
 *     log.warn("removed: " + file.scan().signature()); // its bytes and links are gone already
 * }
 * }</pre>
 *
 * @param status {@link #STATUS_PENDING}, {@link #STATUS_CLEAN}, {@link #STATUS_INFECTED},
 *     {@link #STATUS_ERROR} or {@link #STATUS_SKIPPED}; later versions of the server may add more
 * @param signature the name of what the scanner found (e.g. {@code Win.Test.EICAR_HDB-1}) when
 *     {@code status} is {@code infected}, else null
 * @param scannedAt UTC, {@code YYYY-MM-DD HH:MM:SS}, when the verdict came; null while pending; see
 *     {@link #scannedAtTime()}
 * @param extra fields of the API's object this SDK does not know yet (never null)
 */
public record FileScan(String status, String signature, String scannedAt, Map<String, Object> extra) {
    /**
     * Not scanned yet. On a server that serves only scanned files, the file's links answer 409
     * {@code scan_pending} ({@link ScanPendingException}) meanwhile.
     */
    public static final String STATUS_PENDING = "pending";
    /** Scanned, nothing found. */
    public static final String STATUS_CLEAN = "clean";
    /**
     * The scanner found malware ({@link #signature()}): the file's bytes and links are gone, it left
     * the lists, the quota and the statistics; only {@code files().get(id)} still answers, for its
     * owner, until {@code files().delete(id)}.
     */
    public static final String STATUS_INFECTED = "infected";
    /**
     * The scanner could not scan it (larger than its own limit); a server that serves only scanned
     * files never serves it (403 {@code file_not_scannable}, a {@link LimitExceededException}).
     */
    public static final String STATUS_ERROR = "error";
    /** Too large to scan, stored and served unscanned (a server in {@code async} mode). */
    public static final String STATUS_SKIPPED = "skipped";

    /**
     * Keeps {@code extra} unmodifiable and never null.
     *
     * @param status {@code pending}, {@code clean}, {@code infected}, {@code error} or {@code skipped}
     * @param signature what the scanner found, or null
     * @param scannedAt when the verdict came (UTC, {@code YYYY-MM-DD HH:MM:SS}), or null
     * @param extra fields this SDK does not know yet (never null)
     */
    public FileScan {
        extra = Json.copyExtra(extra);
    }

    /**
     * Whether the file waits for its scan.
     *
     * @return whether {@link #status()} is {@link #STATUS_PENDING}
     */
    public boolean isPending() {
        return STATUS_PENDING.equals(status);
    }

    /**
     * Whether the scan found nothing.
     *
     * @return whether {@link #status()} is {@link #STATUS_CLEAN}
     */
    public boolean isClean() {
        return STATUS_CLEAN.equals(status);
    }

    /**
     * Whether the scanner found malware (the file was removed).
     *
     * @return whether {@link #status()} is {@link #STATUS_INFECTED}
     */
    public boolean isInfected() {
        return STATUS_INFECTED.equals(status);
    }

    /**
     * {@link #scannedAt()} as a date-time in UTC.
     *
     * @return when the verdict came (offset {@code Z}), or null while pending (or if the API's value
     *     cannot be read)
     */
    public OffsetDateTime scannedAtTime() {
        return ApiTime.parse(scannedAt);
    }
}
