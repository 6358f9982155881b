package dev.fileshare;

import static org.junit.jupiter.api.Assertions.*;

import com.fasterxml.jackson.databind.JsonNode;
import java.lang.reflect.RecordComponent;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/**
 * Issue 30 against the real server: raw answers, error headers, and the records against the OpenAPI
 * document (the drift test; issue 32 added CurrentKey, AuditEvent and the scope and address codes; issue 33
 * the webhook calls, Webhook, WebhookDelivery and their codes, checked when the document has /webhooks;
 * issue 35 the file record's scan (FileScan) and scan_pending, checked when the File schema has scan).
 */
class RoundTwoIT {
    @Test
    void rateLimitRemainingOfASuccessfulCallIsReadable() {
        TestServer server = TestServer.get();
        try (FileshareClient client = server.client("pro").build()) {
            FileInfo file = client.files().upload("raw".getBytes(java.nio.charset.StandardCharsets.UTF_8),
                    UploadOptions.builder().filename("raw.txt").build());
            try {
                RawResponse<FileInfo> raw = client.files().withRawResponse().get(file.fileId());
                assertEquals(200, raw.statusCode());
                assertTrue(raw.rateLimitRemaining().isPresent(), "RateLimit-Remaining: " + raw.headers().map());
                assertTrue(raw.requestId().isPresent());
                assertEquals(file.fileId(), raw.data().fileId());
                RawResponse<StatsResult> stats = client.withRawResponse(FileshareClient::stats);
                assertTrue(stats.rateLimitRemaining().isPresent());

                NotFoundException missing = assertThrows(NotFoundException.class, () -> client.files().get(Long.MAX_VALUE >> 11));
                assertEquals(404, missing.status().orElseThrow());
                assertEquals("not_found", missing.body().orElseThrow().path("error").path("code").asText());
                assertEquals(missing.requestId(), missing.headers().firstValue("x-request-id").orElseThrow());
                assertTrue(missing.getMessage().endsWith("(request id " + missing.requestId() + ")"), missing.getMessage());
            } finally {
                client.files().delete(file.fileId());
            }
        }
    }

    private static JsonNode openapi() throws Exception {
        HttpResponse<String> response = HttpClient.newHttpClient().send(
                HttpRequest.newBuilder(URI.create(TestServer.get().baseUrl + "/openapi.json")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, response.statusCode());
        return Json.MAPPER.readTree(response.body());
    }

    private static String snake(String camel) {
        return camel.replaceAll("([a-z0-9])([A-Z])", "$1_$2").toLowerCase(java.util.Locale.ROOT);
    }

    /** The OpenAPI schemas and the records that mirror them: every field the document has, the record has, and back. */
    @ParameterizedTest
    @ValueSource(strings = {"File", "Pagination", "Stats", "Limits", "Link"})
    void theRecordsHaveTheFieldsOfTheOpenApiDocument(String schema) throws Exception {
        Class<?> record = switch (schema) {
            case "File" -> FileInfo.class;
            case "Pagination" -> Pagination.class;
            case "Stats" -> Stats.class;
            case "Limits" -> Limits.class;
            default -> Link.class;
        };
        JsonNode node = openapi().path("components").path("schemas").path(schema);
        Set<String> documented = new TreeSet<>();
        node.path("properties").fieldNames().forEachRemaining(documented::add);
        Set<String> known = Arrays.stream(record.getRecordComponents()).map(RecordComponent::getName)
                .filter(n -> !n.equals("extra")).map(n -> n.equals("isDefault") ? "default" : snake(n)).collect(Collectors.toCollection(TreeSet::new));
        assertEquals(documented, known, schema + " vs " + record.getSimpleName());
    }

    /** The properties of an inline schema. */
    private static Set<String> properties(JsonNode schema) {
        Set<String> names = new TreeSet<>();
        schema.path("properties").fieldNames().forEachRemaining(names::add);
        return names;
    }

    /** A record's components as the API's snake_case names, without {@code extra}. */
    private static Set<String> components(Class<?> record) {
        return Arrays.stream(record.getRecordComponents()).map(RecordComponent::getName)
                .filter(n -> !n.equals("extra")).map(RoundTwoIT::snake).collect(Collectors.toCollection(TreeSet::new));
    }

    private static JsonNode answer(JsonNode document, String path) {
        JsonNode schema = document.path("paths").path(path).path("get").path("responses").path("200").path("content")
                .path("application/json").path("schema");
        assertFalse(schema.isMissingNode(), "the document has GET " + path);
        return schema;
    }

    /** A schema itself, or the named schema a {@code $ref} leads to (the document names some in components.schemas). */
    private static JsonNode resolve(JsonNode document, JsonNode schema) {
        for (int hops = 0; schema.has("$ref") && hops < 10; hops++) {
            String ref = schema.get("$ref").asText();
            assertTrue(ref.startsWith("#/components/schemas/"), "a local schema: " + ref);
            schema = document.path("components").path("schemas").path(ref.substring("#/components/schemas/".length()));
            assertFalse(schema.isMissingNode(), "the document has " + ref);
        }
        return schema;
    }

    /** Issue 32: {@code GET /key} and {@code GET /audit-events} against CurrentKey and AuditEvent (inline or named schemas). */
    @Test
    void theKeyAndAuditRecordsHaveTheFieldsOfTheOpenApiDocument() throws Exception {
        JsonNode document = openapi();
        JsonNode key = answer(document, "/api/v1/key");
        assertEquals(Set.of("success", "key", "plan"), properties(key));
        Set<String> keyFields = properties(resolve(document, key.path("properties").path("key")));
        keyFields.add("plan"); // CurrentKey carries the answer's plan beside the key's fields
        assertEquals(keyFields, components(CurrentKey.class));

        JsonNode events = answer(document, "/api/v1/audit-events");
        assertEquals(Set.of("success", "events", "pagination"), properties(events));
        JsonNode event = resolve(document, events.path("properties").path("events").path("items"));
        assertEquals(properties(event), components(AuditEvent.class));
        assertEquals(properties(resolve(document, event.path("properties").path("actor"))), components(AuditEvent.Actor.class));
        JsonNode target = resolve(document, event.path("properties").path("target"));
        for (JsonNode option : target.path("anyOf")) {
            JsonNode resolved = resolve(document, option);
            if (resolved.path("type").asText().equals("object")) target = resolved;
        }
        assertEquals(properties(target), components(AuditEvent.Target.class));
        assertEquals(properties(resolve(document, events.path("properties").path("pagination"))), components(AuditEventPagination.class));
    }

    /** The document's key for an API path ({@code /webhooks/{webhook_id}}), with or without the {@code /api/v1} prefix; null when absent. */
    private static String pathKey(JsonNode document, String path) {
        for (String candidate : List.of("/api/v1" + path, path)) if (document.path("paths").has(candidate)) return candidate;
        return null;
    }

    /** Issue 37: {@code GET /files} takes the parameters {@link FileListParams} sends, sort, order and state with the enums' values. */
    @Test
    void listFilesTakesTheSortsOrdersAndStatesOfTheEnums() throws Exception {
        JsonNode document = openapi();
        Set<String> names = new TreeSet<>();
        JsonNode sort = null;
        JsonNode order = null;
        JsonNode state = null;
        for (JsonNode parameter : document.path("paths").path(pathKey(document, "/files")).path("get").path("parameters")) {
            if (!parameter.path("in").asText().equals("query")) continue;
            String name = parameter.path("name").asText();
            names.add(name);
            if (name.equals("sort")) sort = parameter.path("schema");
            if (name.equals("order")) order = parameter.path("schema");
            if (name.equals("state")) state = parameter.path("schema").path("items");
            if (name.equals("type") || name.equals("state")) {
                // Lists, sent as the parameter repeated (OpenAPI's default for a query array: form, exploded).
                assertEquals(List.of("array", "form", true),
                        List.of(parameter.path("schema").path("type").asText(), parameter.path("style").asText("form"), parameter.path("explode").asBoolean(true)), name);
            }
        }
        // Every parameter FileListParams sends is there (the server may take more: the SDK does not send those).
        assertTrue(names.containsAll(Set.of("before_id", "limit", "order", "page", "q", "sort", "state", "type")), names.toString());
        assertEquals(Arrays.stream(FileSort.values()).map(FileSort::value).toList(), values(sort));
        assertEquals(Arrays.stream(SortOrder.values()).map(SortOrder::value).toList(), values(order));
        assertEquals(Arrays.stream(FileState.values()).map(FileState::value).toList(), values(state));
    }

    /** The values of a parameter's schema: its enum, or the constants of its union. */
    private static List<String> values(JsonNode schema) {
        List<String> values = new java.util.ArrayList<>();
        if (schema.has("enum")) {
            schema.path("enum").forEach(v -> values.add(v.asText()));
        } else {
            for (JsonNode option : schema.has("anyOf") ? schema.path("anyOf") : schema.path("oneOf")) {
                values.add(option.has("const") ? option.path("const").asText() : option.path("enum").path(0).asText());
            }
        }
        return values;
    }

    private static boolean hasWebhooks(JsonNode document) {
        return pathKey(document, "/webhooks") != null;
    }

    /** The JSON schema of an answer: {@code method path -> status}. */
    private static JsonNode answer(JsonNode document, String method, String path, String status) {
        String key = pathKey(document, path);
        assertNotNull(key, "the document has " + path);
        JsonNode schema = document.path("paths").path(key).path(method).path("responses").path(status).path("content")
                .path("application/json").path("schema");
        assertFalse(schema.isMissingNode(), "the document has " + method.toUpperCase(java.util.Locale.ROOT) + " " + path + " -> " + status);
        return resolve(document, schema);
    }

    private static Set<String> required(JsonNode schema) {
        Set<String> names = new TreeSet<>();
        schema.path("required").forEach(name -> names.add(name.asText()));
        return names;
    }

    /**
     * Issue 33: the webhook calls the SDK makes are in the document, and Webhook, WebhookDelivery and
     * the deliveries' pagination have the records' fields. Skipped while the server has no /webhooks.
     */
    @Test
    void theWebhookRecordsAndCallsAreTheDocuments() throws Exception {
        JsonNode document = openapi();
        Assumptions.assumeTrue(hasWebhooks(document), "the server under test has no /webhooks paths yet");
        for (String call : List.of("post /webhooks", "get /webhooks", "get /webhooks/{webhook_id}", "patch /webhooks/{webhook_id}",
                "delete /webhooks/{webhook_id}", "post /webhooks/{webhook_id}/rotate-secret", "post /webhooks/{webhook_id}/test",
                "get /webhooks/{webhook_id}/deliveries", "post /webhooks/{webhook_id}/deliveries/{delivery_id}/retry")) {
            String[] parts = call.split(" ");
            String key = pathKey(document, parts[1]);
            assertNotNull(key, "the document has " + parts[1]);
            assertTrue(document.path("paths").path(key).has(parts[0]), "the document has " + call);
        }
        Set<String> query = new TreeSet<>();
        document.path("paths").path(pathKey(document, "/webhooks/{webhook_id}/deliveries")).path("get").path("parameters")
                .forEach(p -> { if (p.path("in").asText().equals("query")) query.add(p.path("name").asText()); });
        assertEquals(Set.of("limit", "before_id"), query, "DeliveryListParams");

        // One Webhook for every answer, its secret optional: in the answers of create and rotate-secret only.
        JsonNode webhook = resolve(document, answer(document, "get", "/webhooks/{webhook_id}", "200").path("properties").path("webhook"));
        assertEquals(properties(webhook), components(Webhook.class));
        Set<String> always = components(Webhook.class);
        always.remove("secret");
        assertEquals(always, required(webhook), "every field but the secret is always there");
        for (String[] withSecret : new String[][] {{"/webhooks", "201"}, {"/webhooks/{webhook_id}/rotate-secret", "200"}}) {
            JsonNode created = resolve(document, answer(document, "post", withSecret[0], withSecret[1]).path("properties").path("webhook"));
            assertTrue(created.path("properties").has("secret"), "the webhook of POST " + withSecret[0] + " has its secret");
        }
        JsonNode list = answer(document, "get", "/webhooks", "200");
        assertEquals(properties(webhook), properties(resolve(document, list.path("properties").path("webhooks").path("items"))));
        assertTrue(answer(document, "post", "/webhooks/{webhook_id}/test", "202").path("properties").has("message_id"), "test() returns it");

        JsonNode deliveries = answer(document, "get", "/webhooks/{webhook_id}/deliveries", "200");
        assertEquals(Set.of("success", "deliveries", "pagination"), properties(deliveries));
        JsonNode delivery = resolve(document, deliveries.path("properties").path("deliveries").path("items"));
        assertEquals(properties(delivery), components(WebhookDelivery.class));
        assertEquals(components(WebhookDelivery.class), required(delivery));
        assertEquals(properties(resolve(document, deliveries.path("properties").path("pagination"))), components(WebhookDeliveryPagination.class));
        Set<String> states = new TreeSet<>();
        for (JsonNode option : delivery.path("properties").path("state").path("anyOf")) option.path("enum").forEach(v -> states.add(v.asText()));
        delivery.path("properties").path("state").path("enum").forEach(v -> states.add(v.asText()));
        assertEquals(new TreeSet<>(List.of(WebhookDelivery.STATE_PENDING, WebhookDelivery.STATE_SUCCEEDED, WebhookDelivery.STATE_FAILED)), states);
        Set<String> reasons = new TreeSet<>();
        for (JsonNode option : webhook.path("properties").path("disabled_reason").path("anyOf")) option.path("enum").forEach(v -> reasons.add(v.asText()));
        assertEquals(new TreeSet<>(List.of(Webhook.DISABLED_GONE, Webhook.DISABLED_FAILING, Webhook.DISABLED_OWNER)), reasons);
    }

    private static boolean hasUploadRequests(JsonNode document) {
        return pathKey(document, "/upload-requests") != null;
    }

    /** The properties of a schema, or of every object among its {@code anyOf} / {@code oneOf} options. */
    private static Set<String> unionProperties(JsonNode document, JsonNode schema) {
        JsonNode resolved = resolve(document, schema);
        Set<String> names = properties(resolved);
        for (String union : List.of("anyOf", "oneOf")) {
            for (JsonNode option : resolved.path(union)) names.addAll(unionProperties(document, option));
        }
        return names;
    }

    /**
     * Issue 34: the upload request calls the SDK makes are in the document, and UploadRequest, the
     * files' pagination and the file record's source have the records' fields. Skipped while the
     * server has no /upload-requests.
     */
    @Test
    void theUploadRequestRecordsAndCallsAreTheDocuments() throws Exception {
        JsonNode document = openapi();
        Assumptions.assumeTrue(hasUploadRequests(document), "the server under test has no /upload-requests paths yet");
        for (String call : List.of("post /upload-requests", "get /upload-requests", "get /upload-requests/{request_id}",
                "patch /upload-requests/{request_id}", "delete /upload-requests/{request_id}", "post /upload-requests/{request_id}/close",
                "get /upload-requests/{request_id}/files")) {
            String[] parts = call.split(" ");
            String key = pathKey(document, parts[1]);
            assertNotNull(key, "the document has " + parts[1]);
            assertTrue(document.path("paths").path(key).has(parts[0]), "the document has " + call);
        }
        Set<String> query = new TreeSet<>();
        document.path("paths").path(pathKey(document, "/upload-requests/{request_id}/files")).path("get").path("parameters")
                .forEach(p -> { if (p.path("in").asText().equals("query")) query.add(p.path("name").asText()); });
        assertEquals(Set.of("limit", "before_id"), query, "UploadRequestFileListParams");

        JsonNode request = resolve(document, answer(document, "get", "/upload-requests/{request_id}", "200")
                .path("properties").path("upload_request"));
        assertEquals(properties(request), components(UploadRequest.class));
        assertEquals(properties(request), properties(resolve(document, answer(document, "post", "/upload-requests", "201")
                .path("properties").path("upload_request"))));
        JsonNode list = answer(document, "get", "/upload-requests", "200");
        assertEquals(properties(request), properties(resolve(document, list.path("properties").path("upload_requests").path("items"))));
        Set<String> statuses = new TreeSet<>();
        JsonNode status = resolve(document, request.path("properties").path("status"));
        status.path("enum").forEach(v -> statuses.add(v.asText()));
        for (JsonNode option : status.path("anyOf")) resolve(document, option).path("enum").forEach(v -> statuses.add(v.asText()));
        assertEquals(new TreeSet<>(List.of(UploadRequest.STATUS_ACTIVE, UploadRequest.STATUS_EXPIRED, UploadRequest.STATUS_CLOSED,
                UploadRequest.STATUS_FULL)), statuses);

        JsonNode files = answer(document, "get", "/upload-requests/{request_id}/files", "200");
        assertEquals(Set.of("success", "files", "pagination"), properties(files));
        assertEquals(properties(resolve(document, files.path("properties").path("pagination"))), components(UploadRequestFilePagination.class));
        JsonNode file = resolve(document, files.path("properties").path("files").path("items"));
        assertTrue(properties(file).contains("source"), "the file records of an upload request have their source");

        JsonNode source = document.path("components").path("schemas").path("File").path("properties").path("source");
        assertFalse(source.isMissingNode(), "the File schema has source");
        assertEquals(unionProperties(document, source), components(FileSource.class));
    }

    private static boolean hasScan(JsonNode document) {
        return document.path("components").path("schemas").path("File").path("properties").has("scan");
    }

    /**
     * Issue 35: the File schema's scan has FileScan's fields, its statuses are FileScan's constants,
     * and the link's download answers name scan_pending and file_not_scannable. Skipped while the
     * server has no scan.
     */
    @Test
    void theFileScanRecordIsTheDocuments() throws Exception {
        JsonNode document = openapi();
        Assumptions.assumeTrue(hasScan(document), "the server under test has no scan on its file records yet");
        JsonNode scan = document.path("components").path("schemas").path("File").path("properties").path("scan");
        assertEquals(unionProperties(document, scan), components(FileScan.class));
        Set<String> statuses = new TreeSet<>();
        for (JsonNode option : resolve(document, scan).path("anyOf")) {
            JsonNode status = resolve(document, resolve(document, option).path("properties").path("status"));
            status.path("enum").forEach(v -> statuses.add(v.asText()));
            for (JsonNode literal : status.path("anyOf")) {
                JsonNode l = resolve(document, literal);
                l.path("enum").forEach(v -> statuses.add(v.asText()));
                if (l.has("const")) statuses.add(l.get("const").asText());
            }
        }
        assertEquals(new TreeSet<>(List.of(FileScan.STATUS_PENDING, FileScan.STATUS_CLEAN, FileScan.STATUS_INFECTED,
                FileScan.STATUS_ERROR, FileScan.STATUS_SKIPPED)), statuses);
    }

    @Test
    void theErrorCodesTheSdkActsOnAreTheDocumentsCodes() throws Exception {
        Set<String> documented = new TreeSet<>();
        JsonNode document = openapi();
        document.path("components").path("schemas").path("Error").path("properties").path("error").path("properties")
                .path("code").path("enum").forEach(code -> documented.add(code.asText()));
        Set<String> known = new TreeSet<>(Errors.LIMIT_CODES);
        known.add("idempotency_in_progress");
        known.add("insufficient_scope"); // InsufficientScopeException
        known.add("ip_not_allowed"); // IpNotAllowedException
        if (hasWebhooks(document)) {
            known.add("webhook_url_not_allowed"); // named in WebhooksResource's javadoc and the README
        } else {
            known.remove("webhook_limit_exceeded"); // a server without webhooks: its document may lack their codes
        }
        if (!hasUploadRequests(document)) known.remove("upload_request_full"); // likewise before upload requests
        if (hasScan(document)) {
            known.add("scan_pending"); // ScanPendingException
        } else {
            known.remove("file_not_scannable"); // likewise before virus scanning
        }
        known.removeAll(documented);
        assertEquals(Set.of(), known, "codes the SDK maps that the document does not have (of " + documented + ")");
    }

    @Test
    void theStatsAnswerHasTheDocumentsTopLevelFields() throws Exception {
        JsonNode paths = openapi().path("paths");
        String path = null;
        for (var names = paths.fieldNames(); names.hasNext(); ) {
            String name = names.next();
            if (name.endsWith("/stats")) path = name;
        }
        assertNotNull(path, "the document has GET …/stats");
        JsonNode stats = paths.path(path).path("get").path("responses").path("200").path("content").path("application/json").path("schema");
        Set<String> documented = new TreeSet<>();
        JsonNode properties = stats.has("$ref")
                ? openapi().path("components").path("schemas").path(stats.get("$ref").asText().replaceAll(".*/", "")).path("properties")
                : stats.path("properties");
        properties.fieldNames().forEachRemaining(documented::add);
        documented.remove("success");
        Set<String> known = Arrays.stream(StatsResult.class.getRecordComponents()).map(RecordComponent::getName)
                .filter(n -> !n.equals("extra")).collect(Collectors.toCollection(TreeSet::new));
        assertEquals(documented, known);
    }
}
