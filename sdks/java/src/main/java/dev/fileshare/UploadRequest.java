package dev.fileshare;

import java.net.URI;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.Map;

/**
 * An upload request ({@link FileshareClient#uploadRequests()}): a link that lets someone without an
 * account (a guest) send files into this account, within the request's limits and until it expires
 * or is closed. Send the guest its {@link #url()}.
 *
 * @param requestId unique across the service, never reused
 * @param url the guest's page, {@code <public URL>/r/<token>}: whoever has it can send files (see {@link #token()})
 * @param label what the request is for, shown to the guest (1 to 200 characters, one line)
 * @param message a note shown to the guest (plain text, at most 2,000 characters), or null
 * @param expiresAt UTC, {@code YYYY-MM-DD HH:MM:SS}, when guests can no longer send; see {@link #expiresAtTime()}
 * @param maxFiles how many files the request takes, or null: no limit of its own
 * @param maxFileSize the largest file in bytes, or null: the plan's
 * @param maxTotalSize the most bytes the request takes in all, or null: no limit of its own
 * @param fileExpiresIn seconds each received file lives from its upload, or null: the files do not
 *     expire; see {@link #fileExpiresInDuration()}
 * @param passwordProtected whether a guest must give a password first
 * @param filesReceived the files received so far
 * @param bytesReceived the bytes received so far
 * @param status {@link #STATUS_ACTIVE}, {@link #STATUS_FULL}, {@link #STATUS_EXPIRED} or {@link #STATUS_CLOSED}
 * @param createdAt UTC, {@code YYYY-MM-DD HH:MM:SS}; see {@link #createdAtTime()}
 * @param extra fields of the API's object this SDK does not know yet (never null)
 */
public record UploadRequest(
        long requestId,
        String url,
        String label,
        String message,
        String expiresAt,
        Long maxFiles,
        Long maxFileSize,
        Long maxTotalSize,
        Long fileExpiresIn,
        boolean passwordProtected,
        long filesReceived,
        long bytesReceived,
        String status,
        String createdAt,
        Map<String, Object> extra) {

    /** Guests can send files. */
    public static final String STATUS_ACTIVE = "active";
    /** {@code expires_at} has passed (extending it with an update opens the request again). */
    public static final String STATUS_EXPIRED = "expired";
    /** Closed by its holder ({@code close} or {@code delete}); for good. */
    public static final String STATUS_CLOSED = "closed";
    /** {@code max_files} files or {@code max_total_size} bytes were received (raising the limit opens it again). */
    public static final String STATUS_FULL = "full";

    /**
     * Keeps {@code extra} unmodifiable and never null.
     *
     * @param requestId unique across the service
     * @param url the guest's page, {@code <public URL>/r/<token>}
     * @param label what the request is for
     * @param message a note shown to the guest, or null
     * @param expiresAt UTC, {@code YYYY-MM-DD HH:MM:SS}
     * @param maxFiles how many files the request takes, or null
     * @param maxFileSize the largest file in bytes, or null
     * @param maxTotalSize the most bytes in all, or null
     * @param fileExpiresIn seconds each received file lives, or null
     * @param passwordProtected whether a guest must give a password
     * @param filesReceived the files received so far
     * @param bytesReceived the bytes received so far
     * @param status active, expired, closed or full
     * @param createdAt UTC, {@code YYYY-MM-DD HH:MM:SS}
     * @param extra fields this SDK does not know yet (never null)
     */
    public UploadRequest {
        extra = Json.copyExtra(extra);
    }

    /**
     * The request's token: the last path segment of {@link #url()}. Guests send it as
     * {@code Authorization: UploadRequest <token>}; it is as secret as the URL.
     *
     * @return the token, or null when the URL has none
     */
    public String token() {
        if (url == null) return null;
        String path;
        try {
            path = URI.create(url).getPath();
        } catch (IllegalArgumentException e) {
            path = url;
        }
        if (path == null) return null;
        int slash = path.lastIndexOf('/');
        String token = path.substring(slash + 1);
        return token.isEmpty() ? null : token;
    }

    /**
     * Whether guests can send files now (as of the answer that returned this record).
     *
     * @return whether {@link #status()} is {@link #STATUS_ACTIVE}
     */
    public boolean isActive() {
        return STATUS_ACTIVE.equals(status);
    }

    /**
     * {@link #expiresAt()} as a date-time in UTC.
     *
     * @return when guests can no longer send (offset {@code Z}), or null if the API's value cannot be read
     */
    public OffsetDateTime expiresAtTime() {
        return ApiTime.parse(expiresAt);
    }

    /**
     * {@link #createdAt()} as a date-time in UTC.
     *
     * @return when the request was made (offset {@code Z}), or null if the API's value cannot be read
     */
    public OffsetDateTime createdAtTime() {
        return ApiTime.parse(createdAt);
    }

    /**
     * {@link #fileExpiresIn()} as a duration.
     *
     * @return how long each received file lives from its upload, or null: the files do not expire
     */
    public Duration fileExpiresInDuration() {
        return fileExpiresIn == null ? null : Duration.ofSeconds(fileExpiresIn);
    }
}
