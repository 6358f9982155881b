package dev.fileshare;

import java.time.OffsetDateTime;
import java.util.Map;

/**
 * A file, as the API returns it (the {@code File} schema of the OpenAPI document).
 *
 * @param fileId unique across the service, never reused
 * @param filename the cleaned-up name
 * @param size bytes
 * @param uploadDate UTC, {@code YYYY-MM-DD HH:MM:SS} as the API sends it; see {@link #uploadedAt()}
 * @param downloadCount downloads counted, over all the file's links
 * @param publicLink {@code <public URL>/download/<token>}; works without a key
 * @param contentType the media type, from the name's extension
 * @param sha256 lower-case hex SHA-256 of the content; also the download {@code ETag}
 * @param expiresAt UTC, {@code YYYY-MM-DD HH:MM:SS}, when the file goes away; null when it does not
 *     expire; see {@link #expiresAtTime()}
 * @param source where the file came from: the API, the dashboard or an upload request (a guest);
 *     null when the server sends none (a server from before upload requests)
 * @param scan the virus scan ({@code pending}, {@code clean}, {@code infected}, {@code error},
 *     {@code skipped}); null when the server does not scan, or did not when the file was stored
 * @param extra fields of the API's object this SDK does not know yet (never null)
 */
public record FileInfo(
        long fileId,
        String filename,
        long size,
        String uploadDate,
        long downloadCount,
        String publicLink,
        String contentType,
        String sha256,
        String expiresAt,
        FileSource source,
        FileScan scan,
        Map<String, Object> extra) {

    /**
     * Keeps {@code extra} unmodifiable and never null (its values may be null: a field the API sent as null).
     *
     * @param fileId unique across the service, never reused
     * @param filename the cleaned-up name
     * @param size bytes
     * @param uploadDate UTC, {@code YYYY-MM-DD HH:MM:SS} as the API sends it; see {@link #uploadedAt()}
     * @param downloadCount downloads counted, over all the file's links
     * @param publicLink {@code <public URL>/download/<token>}; works without a key
     * @param contentType the media type, from the name's extension
     * @param sha256 lower-case hex SHA-256 of the content; also the download {@code ETag}
     * @param expiresAt when the file goes away (UTC, {@code YYYY-MM-DD HH:MM:SS}), or null
     * @param source where the file came from, or null
     * @param scan the virus scan, or null
     * @param extra fields of the API's object this SDK does not know yet (never null)
     */
    public FileInfo {
        extra = Json.copyExtra(extra);
    }

    /**
     * The record without a scan: the canonical constructor from before {@code scan} was added, kept
     * so that code which builds a {@code FileInfo} itself (tests, fakes) still compiles.
     *
     * @param fileId unique across the service, never reused
     * @param filename the cleaned-up name
     * @param size bytes
     * @param uploadDate UTC, {@code YYYY-MM-DD HH:MM:SS} as the API sends it
     * @param downloadCount downloads counted, over all the file's links
     * @param publicLink {@code <public URL>/download/<token>}
     * @param contentType the media type
     * @param sha256 lower-case hex SHA-256 of the content
     * @param expiresAt when the file goes away (UTC, {@code YYYY-MM-DD HH:MM:SS}), or null
     * @param source where the file came from, or null
     * @param extra fields of the API's object this SDK does not know yet
     */
    public FileInfo(long fileId, String filename, long size, String uploadDate, long downloadCount, String publicLink,
                    String contentType, String sha256, String expiresAt, FileSource source, Map<String, Object> extra) {
        this(fileId, filename, size, uploadDate, downloadCount, publicLink, contentType, sha256, expiresAt, source, null, extra);
    }

    /**
     * The record without a source or a scan: the canonical constructor from before {@code source} was added,
     * kept so that code which builds a {@code FileInfo} itself (tests, fakes) still compiles.
     *
     * @param fileId unique across the service, never reused
     * @param filename the cleaned-up name
     * @param size bytes
     * @param uploadDate UTC, {@code YYYY-MM-DD HH:MM:SS} as the API sends it
     * @param downloadCount downloads counted, over all the file's links
     * @param publicLink {@code <public URL>/download/<token>}
     * @param contentType the media type
     * @param sha256 lower-case hex SHA-256 of the content
     * @param expiresAt when the file goes away (UTC, {@code YYYY-MM-DD HH:MM:SS}), or null
     * @param extra fields of the API's object this SDK does not know yet
     */
    public FileInfo(long fileId, String filename, long size, String uploadDate, long downloadCount, String publicLink,
                    String contentType, String sha256, String expiresAt, Map<String, Object> extra) {
        this(fileId, filename, size, uploadDate, downloadCount, publicLink, contentType, sha256, expiresAt, null, null, extra);
    }

    /**
     * The record without an expiry, a source or a scan: the canonical constructor from before
     * {@code expiresAt} was added, kept so that code which builds a {@code FileInfo} itself (tests, fakes) still compiles.
     *
     * @param fileId unique across the service, never reused
     * @param filename the cleaned-up name
     * @param size bytes
     * @param uploadDate UTC, {@code YYYY-MM-DD HH:MM:SS} as the API sends it
     * @param downloadCount downloads counted, over all the file's links
     * @param publicLink {@code <public URL>/download/<token>}
     * @param contentType the media type
     * @param sha256 lower-case hex SHA-256 of the content
     * @param extra fields of the API's object this SDK does not know yet
     */
    public FileInfo(long fileId, String filename, long size, String uploadDate, long downloadCount, String publicLink,
                    String contentType, String sha256, Map<String, Object> extra) {
        this(fileId, filename, size, uploadDate, downloadCount, publicLink, contentType, sha256, null, null, null, extra);
    }

    /**
     * {@link #uploadDate()} as a date-time in UTC.
     *
     * @return the upload time (offset {@code Z}), or null if the API's value cannot be read
     */
    public OffsetDateTime uploadedAt() {
        return ApiTime.parse(uploadDate);
    }

    /**
     * {@link #expiresAt()} as a date-time in UTC.
     *
     * @return when the file goes away (offset {@code Z}), or null when it does not expire (or the
     *     API's value cannot be read)
     */
    public OffsetDateTime expiresAtTime() {
        return ApiTime.parse(expiresAt);
    }
}
