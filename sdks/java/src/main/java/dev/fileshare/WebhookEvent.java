package dev.fileshare;

import java.time.OffsetDateTime;
import java.util.List;
import java.util.Map;

/**
 * A webhook message that {@link Webhooks#verify(byte[], Map, String) Webhooks.verify} accepted: the
 * body's {@code type}, {@code timestamp} and {@code data}, with the message's {@code webhook-id} as
 * {@link #messageId()} (the same on every retry of one message: deduplicate by it).
 *
 * <pre>{@code
 * WebhookEvent event = Webhooks.verify(body, headers, secret);
 * switch (event.type()) {
 *     case WebhookEvent.FILE_UPLOADED -> index(event.file());          // the file record
 *     case WebhookEvent.FILE_DELETED -> forget((Number) event.data().get("file_id"));
 *     default -> { }                                                     // types added later
 * }
 * }</pre>
 *
 * <p>A body from another Standard Webhooks sender without {@code type}, {@code timestamp} or
 * {@code data} gives null, null and an empty map for them, its fields in {@link #extra()}.
 *
 * @param type the event type: {@link #FILE_UPLOADED}, {@link #LINK_DOWNLOADED}, ... (later versions of
 *     the server add more: ignore the types you do not know)
 * @param timestamp when the event happened: ISO 8601 in UTC, {@code 2026-11-27T10:00:00.000Z}; see {@link #time()}
 * @param data the event's object: a file or link record ({@link #file()}, {@link #link()}), or the
 *     fields its type names; numbers are {@code Integer}, {@code Long} or {@code Double} as the JSON
 *     holds them (unmodifiable, never null)
 * @param messageId the {@code webhook-id} header ({@code msg_...}): one per message, the same on its retries
 * @param extra the body's other fields (never null)
 */
public record WebhookEvent(String type, String timestamp, Map<String, Object> data, String messageId, Map<String, Object> extra) {
    /** A file was stored (multipart, resumable, upload request). {@code data}: the file record ({@link #file()}). */
    public static final String FILE_UPLOADED = "file.uploaded";
    /**
     * A file was deleted by its owner, expired, was removed by an operator, or was found infected by
     * the virus scanner ({@link FileScan#STATUS_INFECTED}). {@code data}:
     * {@code file_id}, {@code filename}, {@code reason} ({@code owner}, {@code expired}, {@code operator}, {@code infected}).
     */
    public static final String FILE_DELETED = "file.deleted";
    /** A link was made. {@code data}: the link record ({@link #link()}). */
    public static final String LINK_CREATED = "link.created";
    /** A link was changed. {@code data}: the link record. */
    public static final String LINK_UPDATED = "link.updated";
    /** A link was revoked. {@code data}: the link record. */
    public static final String LINK_REVOKED = "link.revoked";
    /** A limited link gave its last download. {@code data}: the link record. */
    public static final String LINK_EXHAUSTED = "link.exhausted";
    /**
     * A link with a policy granted a download (never once per range). {@code data}: {@code link_id},
     * {@code file_id}, {@code downloads_left}.
     */
    public static final String LINK_DOWNLOADED = "link.downloaded";
    /** A resumable upload expired unfinished. {@code data}: {@code upload_id}, {@code filename}, {@code offset}, {@code length}. */
    public static final String UPLOAD_EXPIRED = "upload.expired";
    /** {@code client.webhooks().test(id)}. {@code data}: {@code webhook_id}. */
    public static final String WEBHOOK_TEST = "webhook.test";
    /**
     * An upload request received a file from a guest. {@code data}: {@code request_id}, {@code label},
     * {@code files_received}, {@code bytes_received} and {@code file}, the file record ({@link #file()}).
     */
    public static final String UPLOAD_REQUEST_FILE_RECEIVED = "upload_request.file_received";
    /**
     * An upload request became full ({@code max_files} files or {@code max_total_size} bytes
     * received). {@code data}: {@code request_id}, {@code label}, {@code files_received}, {@code bytes_received}.
     */
    public static final String UPLOAD_REQUEST_FULL = "upload_request.full";
    /** The event types the server sends today; {@code ["*"]} subscribes to them and to those added later. */
    public static final List<String> TYPES = List.of(FILE_UPLOADED, FILE_DELETED, LINK_CREATED, LINK_UPDATED, LINK_REVOKED,
            LINK_EXHAUSTED, LINK_DOWNLOADED, UPLOAD_EXPIRED, WEBHOOK_TEST, UPLOAD_REQUEST_FILE_RECEIVED, UPLOAD_REQUEST_FULL);

    /** Fields every file record has (and the {@code data} of {@code file.deleted} lacks). */
    private static final List<String> FILE_RECORD = List.of("file_id", "filename", "size", "upload_date", "sha256");
    /** Fields every link record has (and the {@code data} of {@code link.downloaded} lacks). */
    private static final List<String> LINK_RECORD = List.of("link_id", "file_id", "url", "status");

    /**
     * Keeps {@code data} and {@code extra} unmodifiable and never null.
     *
     * @param type the event type
     * @param timestamp when the event happened (ISO 8601, UTC)
     * @param data the event's object
     * @param messageId the {@code webhook-id} header
     * @param extra the body's other fields
     */
    public WebhookEvent {
        data = Json.copyExtra(data);
        extra = Json.copyExtra(extra);
    }

    /**
     * {@link #timestamp()} as a date-time in UTC.
     *
     * @return when the event happened (offset {@code Z}), or null if the body's value cannot be read
     */
    public OffsetDateTime time() {
        return ApiTime.parse(timestamp);
    }

    /**
     * The event's file record: {@link #data()} itself for {@link #FILE_UPLOADED}, its {@code file}
     * for {@link #UPLOAD_REQUEST_FILE_RECEIVED}.
     *
     * @return the file, as {@code files().get(..)} would return it
     * @throws FileshareException if the event holds no file record (another event type)
     */
    public FileInfo file() {
        Object record = data;
        if (!data.keySet().containsAll(FILE_RECORD) && data.get("file") instanceof Map<?, ?> nested) record = nested;
        if (!(record instanceof Map<?, ?> map) || !map.keySet().containsAll(FILE_RECORD)) {
            throw new FileshareException("the " + type + " event holds no file record");
        }
        try {
            return Json.fileInfo(Json.MAPPER.valueToTree(map));
        } catch (FileshareException e) {
            throw new FileshareException("the " + type + " event holds no file record");
        }
    }

    /**
     * {@link #data()} read as a link record: the {@code data} of {@link #LINK_CREATED},
     * {@link #LINK_UPDATED}, {@link #LINK_REVOKED} and {@link #LINK_EXHAUSTED}.
     *
     * @return the link, as {@code links().get(..)} would return it
     * @throws FileshareException if {@code data} is not a link record (another event type)
     */
    public Link link() {
        if (!data.keySet().containsAll(LINK_RECORD)) throw new FileshareException("the " + type + " event holds no link record");
        try {
            return Json.link(Json.MAPPER.valueToTree(data));
        } catch (FileshareException e) {
            throw new FileshareException("the " + type + " event holds no link record");
        }
    }
}
