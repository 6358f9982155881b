package dev.fileshare;

import static org.junit.jupiter.api.Assertions.*;

import com.fasterxml.jackson.databind.JsonNode;
import java.lang.reflect.RecordComponent;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Arrays;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/**
 * Issue 30 against the real server: raw answers, error headers, and the records against the OpenAPI
 * document (the drift test; issue 32 added CurrentKey, AuditEvent and the scope and address codes).
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

    /** Issue 32: {@code GET /key} and {@code GET /audit-events} (their schemas are inline) against CurrentKey and AuditEvent. */
    @Test
    void theKeyAndAuditRecordsHaveTheFieldsOfTheOpenApiDocument() throws Exception {
        JsonNode document = openapi();
        JsonNode key = answer(document, "/api/v1/key");
        assertEquals(Set.of("success", "key", "plan"), properties(key));
        Set<String> keyFields = properties(key.path("properties").path("key"));
        keyFields.add("plan"); // CurrentKey carries the answer's plan beside the key's fields
        assertEquals(keyFields, components(CurrentKey.class));

        JsonNode events = answer(document, "/api/v1/audit-events");
        assertEquals(Set.of("success", "events", "pagination"), properties(events));
        JsonNode event = events.path("properties").path("events").path("items");
        assertEquals(properties(event), components(AuditEvent.class));
        assertEquals(properties(event.path("properties").path("actor")), components(AuditEvent.Actor.class));
        JsonNode target = event.path("properties").path("target");
        for (JsonNode option : target.path("anyOf")) if (option.path("type").asText().equals("object")) target = option;
        assertEquals(properties(target), components(AuditEvent.Target.class));
        assertEquals(properties(events.path("properties").path("pagination")), components(AuditEventPagination.class));
    }

    @Test
    void theErrorCodesTheSdkActsOnAreTheDocumentsCodes() throws Exception {
        Set<String> documented = new TreeSet<>();
        openapi().path("components").path("schemas").path("Error").path("properties").path("error").path("properties")
                .path("code").path("enum").forEach(code -> documented.add(code.asText()));
        Set<String> known = new TreeSet<>(Errors.LIMIT_CODES);
        known.add("idempotency_in_progress");
        known.add("insufficient_scope"); // InsufficientScopeException
        known.add("ip_not_allowed"); // IpNotAllowedException
        // sdks.md lists webhook_limit_exceeded among the limits ahead of the server, which has no
        // webhooks yet (nor its document the code): mapped for when it comes, not checked here.
        known.remove("webhook_limit_exceeded");
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
