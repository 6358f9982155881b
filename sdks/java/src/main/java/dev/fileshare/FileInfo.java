package dev.fileshare;

import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Map;

/**
 * A file, as the API returns it (the {@code File} schema of the OpenAPI document).
 *
 * @param fileId unique across the service, never reused
 * @param filename the cleaned-up name
 * @param size bytes
 * @param uploadDate UTC, {@code YYYY-MM-DD HH:MM:SS} as the API sends it; see {@link #uploadedAt()}
 * @param downloadCount downloads that started at the first byte
 * @param publicLink {@code <public URL>/download/<token>}; works without a key
 * @param contentType the media type, from the name's extension
 * @param sha256 lower-case hex SHA-256 of the content; also the download {@code ETag}
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
        Map<String, Object> extra) {

    private static final DateTimeFormatter API_DATE = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss");

    /**
     * Keeps {@code extra} unmodifiable and never null (its values may be null: a field the API sent as null).
     *
     * @param fileId unique across the service, never reused
     * @param filename the cleaned-up name
     * @param size bytes
     * @param uploadDate UTC, {@code YYYY-MM-DD HH:MM:SS} as the API sends it; see {@link #uploadedAt()}
     * @param downloadCount downloads that started at the first byte
     * @param publicLink {@code <public URL>/download/<token>}; works without a key
     * @param contentType the media type, from the name's extension
     * @param sha256 lower-case hex SHA-256 of the content; also the download {@code ETag}
     * @param extra fields of the API's object this SDK does not know yet (never null)
     */
    public FileInfo {
        extra = Json.copyExtra(extra);
    }

    /**
     * {@link #uploadDate()} as a date-time in UTC.
     *
     * @return the upload time (offset {@code Z}), or null if the API's value cannot be read
     */
    public OffsetDateTime uploadedAt() {
        if (uploadDate == null) return null;
        try {
            return LocalDateTime.parse(uploadDate, API_DATE).atOffset(ZoneOffset.UTC);
        } catch (DateTimeParseException e) {
            try {
                return OffsetDateTime.parse(uploadDate).withOffsetSameInstant(ZoneOffset.UTC);
            } catch (DateTimeParseException again) {
                return null;
            }
        }
    }
}
