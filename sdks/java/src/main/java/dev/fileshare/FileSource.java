package dev.fileshare;

import java.util.Map;

/**
 * Where a file came from: {@link FileInfo#source()}, the file record's {@code source}.
 *
 * <pre>{@code
 * if (file.source() != null && file.source().isUploadRequest()) {
 *     UploadRequest from = client.uploadRequests().get(file.source().requestId());
 * }
 * }</pre>
 *
 * @param type {@link #TYPE_API} (uploaded with an API key), {@link #TYPE_DASHBOARD} (from the
 *     dashboard) or {@link #TYPE_UPLOAD_REQUEST} (sent by a guest through an upload request); later
 *     versions of the server may add more
 * @param requestId the upload request's id when {@code type} is {@code upload_request}, else null
 * @param extra fields of the API's object this SDK does not know yet (never null)
 */
public record FileSource(String type, Long requestId, Map<String, Object> extra) {
    /** Uploaded through the API, with a key. */
    public static final String TYPE_API = "api";
    /** Uploaded from the dashboard. */
    public static final String TYPE_DASHBOARD = "dashboard";
    /** Sent by a guest through an upload request ({@link #requestId()} names it). */
    public static final String TYPE_UPLOAD_REQUEST = "upload_request";

    /**
     * Keeps {@code extra} unmodifiable and never null.
     *
     * @param type {@code api}, {@code dashboard} or {@code upload_request}
     * @param requestId the upload request's id, or null
     * @param extra fields this SDK does not know yet (never null)
     */
    public FileSource {
        extra = Json.copyExtra(extra);
    }

    /**
     * Whether a guest sent the file through an upload request.
     *
     * @return whether {@link #type()} is {@link #TYPE_UPLOAD_REQUEST}
     */
    public boolean isUploadRequest() {
        return TYPE_UPLOAD_REQUEST.equals(type);
    }
}
