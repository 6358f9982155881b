package dev.fileshare;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** The API's JSON to the SDK's records (every unknown field kept in {@code extra}). */
final class Json {
    static final ObjectMapper MAPPER = new ObjectMapper();

    private static final Set<String> FILE_FIELDS = Set.of(
            "file_id", "filename", "size", "upload_date", "download_count", "public_link", "content_type", "sha256", "expires_at", "source", "scan", "success");
    private static final Set<String> SOURCE_FIELDS = Set.of("type", "request_id");
    private static final Set<String> SCAN_FIELDS = Set.of("status", "signature", "scanned_at");
    private static final Set<String> UPLOAD_REQUEST_FIELDS = Set.of("request_id", "url", "label", "message", "expires_at",
            "max_files", "max_file_size", "max_total_size", "file_expires_in", "password_protected", "files_received",
            "bytes_received", "status", "created_at");
    private static final Set<String> LINK_FIELDS = Set.of("link_id", "file_id", "url", "default", "label", "expires_at",
            "max_downloads", "download_count", "password_protected", "status", "created_at");
    private static final Set<String> STATS_FIELDS = Set.of("total_files", "total_size", "total_downloads", "uploads_today", "storage_reserved");
    private static final Set<String> LIMITS_FIELDS = Set.of("max_file_size", "daily_uploads", "requests_per_minute", "requests_per_day",
            "max_storage");
    private static final Set<String> ACCOUNT_FIELDS = Set.of("stats", "limits", "plan", "success");
    private static final Set<String> KEY_FIELDS = Set.of("key_id", "name", "prefix", "scopes", "allowed_ips", "created_at",
            "expires_at", "last_used_at");
    private static final Set<String> KEY_ANSWER_FIELDS = Set.of("key", "plan", "success");
    private static final Set<String> AUDIT_EVENT_FIELDS = Set.of("event_id", "at", "action", "actor", "ip", "user_agent",
            "target", "details");

    private static final Set<String> WEBHOOK_FIELDS = Set.of("webhook_id", "url", "events", "description", "enabled",
            "disabled_reason", "created_at", "secret");
    private static final Set<String> DELIVERY_FIELDS = Set.of("delivery_id", "event_type", "message_id", "attempts", "last_status",
            "last_error", "next_attempt_at", "state", "created_at");
    private static final Set<String> WEBHOOK_EVENT_FIELDS = Set.of("type", "timestamp", "data");

    private Json() {}

    /** A request body as JSON text (null values as JSON nulls). */
    static String write(Object body) {
        try {
            return MAPPER.writeValueAsString(body);
        } catch (java.io.IOException e) {
            throw new FileshareException("cannot write the request body as JSON: " + e.getMessage(), e);
        }
    }

    /**
     * An unmodifiable copy of the unknown fields, in the API's order. Unlike {@code Map.copyOf} it
     * keeps null values: a field the API sent as null is kept, not dropped.
     */
    static Map<String, Object> copyExtra(Map<String, Object> extra) {
        if (extra == null || extra.isEmpty()) return Map.of();
        return Collections.unmodifiableMap(new LinkedHashMap<>(extra));
    }

    private static Map<String, Object> extra(JsonNode node, Set<String> known) {
        Map<String, Object> extra = new LinkedHashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> field = it.next();
            if (known.contains(field.getKey())) continue;
            // A null value is kept too (as null): unknown fields are never dropped.
            extra.put(field.getKey(), MAPPER.convertValue(field.getValue(), Object.class));
        }
        return extra;
    }

    private static String text(JsonNode node, String name) {
        JsonNode value = node.get(name);
        return value == null || value.isNull() ? null : value.asText();
    }

    /** A number that may be null (or absent). */
    private static Long number(JsonNode node, String name) {
        JsonNode value = node.get(name);
        return value == null || value.isNull() ? null : value.asLong();
    }

    static FileInfo fileInfo(JsonNode node) {
        if (node == null || !node.isObject() || !node.path("file_id").canConvertToLong()) {
            throw new FileshareException("the answer holds no file object");
        }
        return new FileInfo(
                node.get("file_id").asLong(),
                text(node, "filename"),
                node.path("size").asLong(),
                text(node, "upload_date"),
                node.path("download_count").asLong(),
                text(node, "public_link"),
                text(node, "content_type"),
                text(node, "sha256"),
                text(node, "expires_at"),
                fileSource(node.get("source")),
                fileScan(node.get("scan")),
                extra(node, FILE_FIELDS));
    }

    /** A file record's {@code scan}; null when null (the server does not scan), absent (an older server) or not an object. */
    static FileScan fileScan(JsonNode node) {
        if (node == null || !node.isObject()) return null;
        return new FileScan(text(node, "status"), text(node, "signature"), text(node, "scanned_at"), extra(node, SCAN_FIELDS));
    }

    /** A file record's {@code source}; null when absent (an older server) or not an object. */
    static FileSource fileSource(JsonNode node) {
        if (node == null || !node.isObject()) return null;
        return new FileSource(text(node, "type"), number(node, "request_id"), extra(node, SOURCE_FIELDS));
    }

    static UploadRequest uploadRequest(JsonNode node) {
        if (node == null || !node.isObject() || !node.path("request_id").canConvertToLong()) {
            throw new FileshareException("the answer holds no upload request object");
        }
        return new UploadRequest(
                node.get("request_id").asLong(),
                text(node, "url"),
                text(node, "label"),
                text(node, "message"),
                text(node, "expires_at"),
                number(node, "max_files"),
                number(node, "max_file_size"),
                number(node, "max_total_size"),
                number(node, "file_expires_in"),
                node.path("password_protected").asBoolean(),
                node.path("files_received").asLong(),
                node.path("bytes_received").asLong(),
                text(node, "status"),
                text(node, "created_at"),
                extra(node, UPLOAD_REQUEST_FIELDS));
    }

    static List<UploadRequest> uploadRequests(JsonNode node) {
        if (node == null || !node.path("upload_requests").isArray()) throw new FileshareException("the answer holds no upload request list");
        List<UploadRequest> requests = new ArrayList<>();
        for (JsonNode request : node.get("upload_requests")) requests.add(uploadRequest(request));
        return List.copyOf(requests);
    }

    static UploadRequestFileList uploadRequestFileList(JsonNode node) {
        if (node == null || !node.path("files").isArray() || !node.path("pagination").isObject()) {
            throw new FileshareException("the answer holds no file list");
        }
        List<FileInfo> files = new ArrayList<>();
        for (JsonNode file : node.get("files")) files.add(fileInfo(file));
        JsonNode p = node.get("pagination");
        return new UploadRequestFileList(files, new UploadRequestFilePagination(p.path("limit").asLong(), number(p, "next_before_id")));
    }

    static Link link(JsonNode node) {
        if (node == null || !node.isObject() || !node.path("link_id").canConvertToLong()) {
            throw new FileshareException("the answer holds no link object");
        }
        return new Link(
                node.get("link_id").asLong(),
                node.path("file_id").asLong(),
                text(node, "url"),
                node.path("default").asBoolean(),
                text(node, "label"),
                text(node, "expires_at"),
                number(node, "max_downloads"),
                node.path("download_count").asLong(),
                node.path("password_protected").asBoolean(),
                text(node, "status"),
                text(node, "created_at"),
                extra(node, LINK_FIELDS));
    }

    static List<Link> links(JsonNode node) {
        if (node == null || !node.path("links").isArray()) throw new FileshareException("the answer holds no link list");
        List<Link> links = new ArrayList<>();
        for (JsonNode link : node.get("links")) links.add(link(link));
        return List.copyOf(links);
    }

    static FileList fileList(JsonNode node) {
        if (node == null || !node.path("files").isArray() || !node.path("pagination").isObject()) {
            throw new FileshareException("the answer holds no file list");
        }
        List<FileInfo> files = new ArrayList<>();
        for (JsonNode file : node.get("files")) files.add(fileInfo(file));
        JsonNode p = node.get("pagination");
        return new FileList(files, new Pagination(number(p, "page"), p.path("limit").asLong(), p.path("total").asLong(),
                p.path("pages").asLong(), number(p, "next_before_id")));
    }

    private static List<String> strings(JsonNode node, String name) {
        JsonNode value = node.get(name);
        if (value == null || !value.isArray()) return List.of();
        List<String> out = new ArrayList<>();
        for (JsonNode item : value) if (!item.isNull()) out.add(item.asText());
        return out;
    }

    /** The answer of {@code GET /key}: its {@code key} object and the account's {@code plan}. */
    static CurrentKey currentKey(JsonNode node) {
        JsonNode key = node == null ? null : node.get("key");
        if (key == null || !key.isObject() || !key.path("key_id").canConvertToLong()) {
            throw new FileshareException("the answer holds no key object");
        }
        Map<String, Object> extra = extra(key, KEY_FIELDS);
        extra(node, KEY_ANSWER_FIELDS).forEach(extra::putIfAbsent);
        return new CurrentKey(
                key.get("key_id").asLong(),
                text(key, "name"),
                text(key, "prefix"),
                strings(key, "scopes"),
                strings(key, "allowed_ips"),
                text(key, "created_at"),
                text(key, "expires_at"),
                text(key, "last_used_at"),
                text(node, "plan"),
                extra);
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> object(JsonNode node) {
        if (node == null || !node.isObject()) return Map.of();
        return MAPPER.convertValue(node, LinkedHashMap.class);
    }

    static AuditEvent auditEvent(JsonNode node) {
        if (node == null || !node.isObject() || !node.path("event_id").canConvertToLong()) {
            throw new FileshareException("the answer holds no audit event");
        }
        JsonNode actor = node.path("actor");
        JsonNode target = node.get("target");
        return new AuditEvent(
                node.get("event_id").asLong(),
                text(node, "at"),
                text(node, "action"),
                new AuditEvent.Actor(text(actor, "type"), number(actor, "id"), text(actor, "name")),
                text(node, "ip"),
                text(node, "user_agent"),
                target == null || !target.isObject() ? null : new AuditEvent.Target(text(target, "type"), number(target, "id")),
                object(node.get("details")),
                extra(node, AUDIT_EVENT_FIELDS));
    }

    static AuditEventList auditEventList(JsonNode node) {
        if (node == null || !node.path("events").isArray() || !node.path("pagination").isObject()) {
            throw new FileshareException("the answer holds no audit event list");
        }
        List<AuditEvent> events = new ArrayList<>();
        for (JsonNode event : node.get("events")) events.add(auditEvent(event));
        JsonNode p = node.get("pagination");
        return new AuditEventList(events, new AuditEventPagination(p.path("limit").asLong(), number(p, "next_before_id")));
    }

    static Webhook webhook(JsonNode node) {
        if (node == null || !node.isObject() || !node.path("webhook_id").canConvertToLong()) {
            throw new FileshareException("the answer holds no webhook object");
        }
        return new Webhook(
                node.get("webhook_id").asLong(),
                text(node, "url"),
                strings(node, "events"),
                text(node, "description"),
                node.path("enabled").asBoolean(),
                text(node, "disabled_reason"),
                text(node, "created_at"),
                text(node, "secret"),
                extra(node, WEBHOOK_FIELDS));
    }

    static List<Webhook> webhooks(JsonNode node) {
        if (node == null || !node.path("webhooks").isArray()) throw new FileshareException("the answer holds no webhook list");
        List<Webhook> webhooks = new ArrayList<>();
        for (JsonNode webhook : node.get("webhooks")) webhooks.add(webhook(webhook));
        return List.copyOf(webhooks);
    }

    static WebhookDelivery webhookDelivery(JsonNode node) {
        if (node == null || !node.isObject() || !node.path("delivery_id").canConvertToLong()) {
            throw new FileshareException("the answer holds no webhook delivery");
        }
        JsonNode status = node.get("last_status");
        return new WebhookDelivery(
                node.get("delivery_id").asLong(),
                text(node, "event_type"),
                text(node, "message_id"),
                node.path("attempts").asInt(),
                status == null || status.isNull() ? null : status.asInt(),
                text(node, "last_error"),
                text(node, "next_attempt_at"),
                text(node, "state"),
                text(node, "created_at"),
                extra(node, DELIVERY_FIELDS));
    }

    static WebhookDeliveryList webhookDeliveryList(JsonNode node) {
        if (node == null || !node.path("deliveries").isArray() || !node.path("pagination").isObject()) {
            throw new FileshareException("the answer holds no delivery list");
        }
        List<WebhookDelivery> deliveries = new ArrayList<>();
        for (JsonNode delivery : node.get("deliveries")) deliveries.add(webhookDelivery(delivery));
        JsonNode p = node.get("pagination");
        return new WebhookDeliveryList(deliveries, new WebhookDeliveryPagination(p.path("limit").asLong(), number(p, "next_before_id")));
    }

    /** A webhook message's body (a JSON object) with its {@code webhook-id}. */
    static WebhookEvent webhookEvent(JsonNode body, String messageId) {
        JsonNode type = body.get("type");
        JsonNode timestamp = body.get("timestamp");
        return new WebhookEvent(
                type != null && type.isTextual() ? type.asText() : null,
                timestamp != null && timestamp.isTextual() ? timestamp.asText() : null,
                object(body.get("data")),
                messageId,
                extra(body, WEBHOOK_EVENT_FIELDS));
    }

    static StatsResult statsResult(JsonNode node) {
        if (node == null || !node.path("stats").isObject() || !node.path("limits").isObject()) {
            throw new FileshareException("the answer holds no statistics");
        }
        JsonNode s = node.get("stats");
        JsonNode l = node.get("limits");
        return new StatsResult(
                new Stats(s.path("total_files").asLong(), s.path("total_size").asLong(), s.path("total_downloads").asLong(),
                        s.path("uploads_today").asLong(), s.path("storage_reserved").asLong(), extra(s, STATS_FIELDS)),
                new Limits(l.path("max_file_size").asLong(), l.path("daily_uploads").asLong(),
                        l.path("requests_per_minute").asLong(), l.path("requests_per_day").asLong(), number(l, "max_storage"),
                        extra(l, LIMITS_FIELDS)),
                text(node, "plan"),
                extra(node, ACCOUNT_FIELDS));
    }
}
