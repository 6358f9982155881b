package dev.fileshare;

import java.time.OffsetDateTime;
import java.util.Map;

/**
 * A link to a file, as the API returns it. Every file has a default link (its {@code publicLink});
 * it may have more, each with its own token and policy.
 *
 * @param linkId unique across the service
 * @param fileId the file it leads to
 * @param url {@code <public URL>/download/<token>}; works without a key
 * @param isDefault whether it is the file's default link (its {@code publicLink}), which cannot be deleted
 * @param label the owner's note, or null
 * @param expiresAt UTC, {@code YYYY-MM-DD HH:MM:SS}, when the link stops working, or null; see {@link #expiresAtTime()}
 * @param maxDownloads how many downloads it allows, or null for no limit
 * @param downloadCount downloads counted through this link
 * @param passwordProtected whether a download needs a password (the password itself is never returned)
 * @param status {@code active}, {@code expired}, {@code exhausted} or {@code revoked}
 * @param createdAt UTC, {@code YYYY-MM-DD HH:MM:SS}; see {@link #createdAtTime()}
 * @param extra fields of the API's object this SDK does not know yet (never null)
 */
public record Link(
        long linkId,
        long fileId,
        String url,
        boolean isDefault,
        String label,
        String expiresAt,
        Long maxDownloads,
        long downloadCount,
        boolean passwordProtected,
        String status,
        String createdAt,
        Map<String, Object> extra) {

    /**
     * Keeps {@code extra} unmodifiable and never null.
     *
     * @param linkId unique across the service
     * @param fileId the file it leads to
     * @param url {@code <public URL>/download/<token>}
     * @param isDefault whether it is the file's default link
     * @param label the owner's note, or null
     * @param expiresAt when the link stops working (UTC, {@code YYYY-MM-DD HH:MM:SS}), or null
     * @param maxDownloads how many downloads it allows, or null
     * @param downloadCount downloads counted through this link
     * @param passwordProtected whether a download needs a password
     * @param status {@code active}, {@code expired}, {@code exhausted} or {@code revoked}
     * @param createdAt UTC, {@code YYYY-MM-DD HH:MM:SS}
     * @param extra fields of the API's object this SDK does not know yet (never null)
     */
    public Link {
        extra = Json.copyExtra(extra);
    }

    /**
     * {@link #expiresAt()} as a date-time in UTC.
     *
     * @return when the link stops working (offset {@code Z}), or null
     */
    public OffsetDateTime expiresAtTime() {
        return ApiTime.parse(expiresAt);
    }

    /**
     * {@link #createdAt()} as a date-time in UTC.
     *
     * @return when the link was made (offset {@code Z}), or null if the API's value cannot be read
     */
    public OffsetDateTime createdAtTime() {
        return ApiTime.parse(createdAt);
    }
}
