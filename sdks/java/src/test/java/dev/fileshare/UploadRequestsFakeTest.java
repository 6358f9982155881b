package dev.fileshare;

import static org.junit.jupiter.api.Assertions.*;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NavigableSet;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** Issue 34 against a local fake: {@code client.uploadRequests()}, its requests, records, retries and errors. */
class UploadRequestsFakeTest {
    static final String TOKEN = "Zm9vYmFyZm9vYmFyZm9vYmFyZm9vYmFyZm9vYmFyZm9";

    static String request(long id, String status) {
        return "{\"request_id\":" + id + ",\"url\":\"https://files.example.com/r/" + TOKEN + "\",\"label\":\"Invoices for March\","
                + "\"message\":\"Please send\\nthe PDFs\",\"expires_at\":\"2026-12-04 10:00:00\",\"max_files\":5,\"max_file_size\":1048576,"
                + "\"max_total_size\":null,\"file_expires_in\":86400,\"password_protected\":true,\"files_received\":2,"
                + "\"bytes_received\":2048,\"status\":\"" + status + "\",\"created_at\":\"2026-11-27 10:00:00\"}";
    }

    static String file(long id, long requestId) {
        return "{\"file_id\":" + id + ",\"filename\":\"f" + id + ".txt\",\"size\":5,\"upload_date\":\"2026-11-27 10:00:00\","
                + "\"download_count\":0,\"public_link\":\"https://files.example.com/download/t" + id + "\",\"content_type\":\"text/plain\","
                + "\"sha256\":\"" + "b".repeat(64) + "\",\"expires_at\":\"2026-11-28 10:00:00\","
                + "\"source\":{\"type\":\"upload_request\",\"request_id\":" + requestId + "}}";
    }

    private static JsonNode body(FakeServer.Seen seen) throws IOException {
        return Json.MAPPER.readTree(seen.body());
    }

    private static String line(FakeServer.Seen seen) {
        return seen.method() + " " + seen.path();
    }

    @Test
    void createSendsTheFieldsWithAnIdempotencyKeyAndReadsTheRecord() throws Exception {
        try (FakeServer fake = new FakeServer((ex, n) -> FakeServer.json(ex, 201,
                "{\"success\":true,\"upload_request\":" + request(12, "active") + "}", "Location", "/api/v1/upload-requests/12"));
             FileshareClient client = fake.client().build()) {
            UploadRequest r = client.uploadRequests().create(UploadRequestCreateParams.builder()
                    .label("Invoices for March").message("Please send\nthe PDFs").expiresIn(Duration.ofDays(7))
                    .maxFiles(5).maxFileSize(1048576).maxTotalSize(10485760).password("correct horse")
                    .fileExpiresIn(Duration.ofMillis(86_399_500)).build());
            assertEquals(12, r.requestId());
            assertEquals("https://files.example.com/r/" + TOKEN, r.url());
            assertEquals(TOKEN, r.token());
            assertEquals("Invoices for March", r.label());
            assertEquals("Please send\nthe PDFs", r.message());
            assertEquals(OffsetDateTime.of(2026, 12, 4, 10, 0, 0, 0, ZoneOffset.UTC), r.expiresAtTime());
            assertEquals(5L, r.maxFiles());
            assertEquals(1048576L, r.maxFileSize());
            assertNull(r.maxTotalSize());
            assertEquals(86400L, r.fileExpiresIn());
            assertEquals(Duration.ofDays(1), r.fileExpiresInDuration());
            assertTrue(r.passwordProtected());
            assertEquals(2, r.filesReceived());
            assertEquals(2048, r.bytesReceived());
            assertEquals(UploadRequest.STATUS_ACTIVE, r.status());
            assertTrue(r.isActive());
            assertEquals(OffsetDateTime.of(2026, 11, 27, 10, 0, 0, 0, ZoneOffset.UTC), r.createdAtTime());
            assertEquals(Map.of(), r.extra());

            FakeServer.Seen seen = fake.requests.get(0);
            assertEquals("POST /api/v1/upload-requests", line(seen));
            assertTrue(seen.header("Content-Type").startsWith("application/json"));
            assertEquals("Bearer " + TestKeys.FAKE_KEY, seen.header("Authorization"));
            assertEquals(Json.MAPPER.readTree("{\"label\":\"Invoices for March\",\"message\":\"Please send\\nthe PDFs\",\"expires_in\":604800,"
                    + "\"max_files\":5,\"max_file_size\":1048576,\"max_total_size\":10485760,\"password\":\"correct horse\","
                    + "\"file_expires_in\":86400}"), body(seen), "durations in whole seconds, a fraction rounded up");
            String key = seen.header("Idempotency-Key");
            assertTrue(key.matches("[0-9a-f-]{36}"), key);

            // Only what is set; expiresAt in UTC to the second; the caller's own key; each call its own key.
            client.uploadRequests().create(UploadRequestCreateParams.builder().label("x")
                    .expiresAt(Instant.parse("2026-12-01T08:30:15.700Z")).idempotencyKey("mine-1").build());
            FakeServer.Seen second = fake.requests.get(1);
            assertEquals(Json.MAPPER.readTree("{\"label\":\"x\",\"expires_at\":\"2026-12-01 08:30:15\"}"), body(second));
            assertEquals("mine-1", second.header("Idempotency-Key"));
            client.uploadRequests().create(UploadRequestCreateParams.builder().label("y").expiresIn(Duration.ofHours(1)).build());
            assertNotEquals(key, fake.requests.get(2).header("Idempotency-Key"));

            RawResponse<UploadRequest> raw = client.withRawResponse(c -> c.uploadRequests().create(UploadRequestCreateParams.builder()
                    .label("z").expiresIn(Duration.ofHours(1)).build()));
            assertEquals(201, raw.statusCode());
            assertEquals("/api/v1/upload-requests/12", raw.headers().firstValue("location").orElseThrow());
        }
    }

    @Test
    void createParamsNeedALabelAndOneExpiry() {
        assertThrows(ConfigurationException.class, () -> UploadRequestCreateParams.builder().expiresIn(Duration.ofDays(1)).build());
        assertThrows(ConfigurationException.class, () -> UploadRequestCreateParams.builder().label("x").build());
        ConfigurationException both = assertThrows(ConfigurationException.class, () -> UploadRequestCreateParams.builder().label("x")
                .expiresIn(Duration.ofDays(1)).expiresAt(Instant.now().plusSeconds(60)).build());
        assertTrue(both.getMessage().contains("expiresIn cannot go together with expiresAt"), both.getMessage());
        assertThrows(ConfigurationException.class, () -> UploadRequestCreateParams.builder().label(null));
        assertThrows(ConfigurationException.class, () -> UploadRequestCreateParams.builder().message(null));
        assertThrows(ConfigurationException.class, () -> UploadRequestCreateParams.builder().expiresIn(null));
        assertThrows(ConfigurationException.class, () -> UploadRequestCreateParams.builder().idempotencyKey(""));
        UploadRequestCreateParams params = UploadRequestCreateParams.builder().label("Docs").expiresIn(Duration.ofSeconds(60))
                .password("secret-password").build();
        assertEquals("Docs", params.label());
        assertNull(params.idempotencyKey());
        assertEquals("UploadRequestCreateParams{label=Docs, expires_in=60, password=[redacted]}", params.toString());
    }

    @Test
    void aCreationIsRetriedWithTheSameKey() throws Exception {
        try (FakeServer fake = new FakeServer((ex, n) -> {
            if (n == 1) FakeServer.json(ex, 500, FakeServer.error("internal_error", "x"));
            else if (n == 2) FakeServer.json(ex, 409, FakeServer.error("idempotency_in_progress", "busy"));
            else FakeServer.json(ex, 201, "{\"success\":true,\"upload_request\":" + request(12, "active") + "}", "Idempotent-Replayed", "true");
        }); FileshareClient client = fake.client().maxRetries(2).build()) {
            UploadRequest r = client.uploadRequests().create(UploadRequestCreateParams.builder().label("x").expiresIn(Duration.ofDays(1)).build());
            assertEquals(12, r.requestId());
            assertEquals(3, fake.requests.size());
            String key = fake.requests.get(0).header("Idempotency-Key");
            assertNotNull(key);
            for (FakeServer.Seen seen : fake.requests) assertEquals(key, seen.header("Idempotency-Key"), "the same key on every attempt");
        }
        try (LinksFakeTest.HangUp server = new LinksFakeTest.HangUp()) {
            FileshareClient.Builder b = FileshareClient.builder().baseUrl(server.baseUrl()).apiKey(TestKeys.FAKE_KEY).maxRetries(2);
            b.sleeper = millis -> { };
            try (FileshareClient client = b.build()) {
                assertThrows(APIConnectionException.class, () -> client.uploadRequests().create(UploadRequestCreateParams.builder()
                        .label("x").expiresIn(Duration.ofDays(1)).build()));
                assertEquals(3, server.accepted.get(), "a lost connection too: 1 + 2 retries");
                assertThrows(APIConnectionException.class, () -> client.uploadRequests().close(12));
                assertEquals(6, server.accepted.get(), "close is idempotent: retried too");
            }
        }
    }

    @Test
    void listGetUpdateCloseDelete() throws Exception {
        try (FakeServer fake = new FakeServer((ex, n) -> {
            String method = ex.getRequestMethod();
            String path = ex.getRequestURI().getPath();
            if (method.equals("GET") && path.equals("/api/v1/upload-requests")) {
                FakeServer.json(ex, 200, "{\"success\":true,\"upload_requests\":[" + request(13, "full") + ","
                        + request(12, "expired").replace("\"status\"", "\"region\":\"eu\",\"status\"") + "]}");
            } else if (path.endsWith("/404")) {
                FakeServer.json(ex, 404, FakeServer.error("not_found", "Upload request not found."));
            } else if (method.equals("DELETE") || path.endsWith("/close")) {
                FakeServer.json(ex, 200, "{\"success\":true,\"upload_request\":" + request(12, "closed") + "}");
            } else {
                FakeServer.json(ex, 200, "{\"success\":true,\"upload_request\":" + request(12, "active") + "}");
            }
        }); FileshareClient client = fake.client().build()) {
            List<UploadRequest> all = client.uploadRequests().list();
            assertEquals(List.of(13L, 12L), all.stream().map(UploadRequest::requestId).toList());
            assertEquals(UploadRequest.STATUS_FULL, all.get(0).status());
            assertFalse(all.get(0).isActive());
            assertEquals(UploadRequest.STATUS_EXPIRED, all.get(1).status());
            assertEquals(Map.of("region", "eu"), all.get(1).extra(), "unknown fields kept");
            assertThrows(UnsupportedOperationException.class, () -> all.add(all.get(0)));
            assertEquals("GET /api/v1/upload-requests", line(fake.requests.get(0)));

            assertEquals(12, client.uploadRequests().get(12).requestId());
            assertEquals("GET /api/v1/upload-requests/12", line(fake.requests.get(1)));
            assertEquals("not_found", assertThrows(NotFoundException.class, () -> client.uploadRequests().get(404)).code());

            client.uploadRequests().update(12, UploadRequestUpdateParams.builder().label("renamed").build());
            FakeServer.Seen patch = fake.requests.get(3);
            assertEquals("PATCH /api/v1/upload-requests/12", line(patch));
            assertEquals(Json.MAPPER.readTree("{\"label\":\"renamed\"}"), body(patch), "only what is set");
            client.uploadRequests().update(12, UploadRequestUpdateParams.builder().clearMessage().clearMaxFiles().clearMaxFileSize()
                    .clearMaxTotalSize().clearPassword().clearFileExpiresIn().expiresIn(Duration.ofDays(2)).build());
            assertEquals(Json.MAPPER.readTree("{\"message\":null,\"max_files\":null,\"max_file_size\":null,\"max_total_size\":null,"
                    + "\"password\":null,\"file_expires_in\":null,\"expires_in\":172800}"), body(fake.requests.get(4)), "cleared: an explicit null");
            client.uploadRequests().update(12, UploadRequestUpdateParams.builder().message("m").maxFiles(3).maxFileSize(10).maxTotalSize(20)
                    .password("new password").fileExpiresIn(Duration.ofMinutes(1)).expiresAt(Instant.parse("2026-12-01T00:00:00Z")).build());
            assertEquals(Json.MAPPER.readTree("{\"message\":\"m\",\"max_files\":3,\"max_file_size\":10,\"max_total_size\":20,"
                    + "\"password\":\"new password\",\"file_expires_in\":60,\"expires_at\":\"2026-12-01 00:00:00\"}"), body(fake.requests.get(5)));
            assertThrows(ConfigurationException.class, () -> client.uploadRequests().update(12, null));
            assertThrows(ConfigurationException.class, () -> UploadRequestUpdateParams.builder().label(null));
            assertThrows(ConfigurationException.class, () -> UploadRequestUpdateParams.builder().expiresIn(Duration.ofDays(1))
                    .expiresAt(Instant.now()).build());
            assertEquals("UploadRequestUpdateParams{password=[redacted], max_files=null}",
                    UploadRequestUpdateParams.builder().password("x".repeat(8)).clearMaxFiles().build().toString());

            UploadRequest closed = client.uploadRequests().close(12);
            assertEquals(UploadRequest.STATUS_CLOSED, closed.status());
            assertEquals("POST /api/v1/upload-requests/12/close", line(fake.requests.get(6)));
            assertEquals(0, fake.requests.get(6).body().length, "no body");

            UploadRequest deleted = client.uploadRequests().delete(12);
            assertEquals(UploadRequest.STATUS_CLOSED, deleted.status(), "the record as it was, closed");
            assertEquals("DELETE /api/v1/upload-requests/12", line(fake.requests.get(7)));
            for (int i = 0; i < fake.requests.size(); i++) {
                assertNull(fake.requests.get(i).header("Idempotency-Key"), "only a creation carries a key: " + line(fake.requests.get(i)));
            }
        }
    }

    @Test
    void malformedAnswersAreFileshareExceptions() throws Exception {
        try (FakeServer fake = new FakeServer((ex, n) -> FakeServer.json(ex, 200, "{\"success\":true}"));
             FileshareClient client = fake.client().build()) {
            assertThrows(FileshareException.class, () -> client.uploadRequests().get(5), "no upload request object");
            assertThrows(FileshareException.class, () -> client.uploadRequests().list(), "no list");
            assertThrows(FileshareException.class, () -> client.uploadRequests().files(5), "no file list");
        }
    }

    @Test
    void theErrors() throws Exception {
        try (FakeServer fake = new FakeServer((ex, n) -> {
            switch (n) {
                case 1 -> FakeServer.json(ex, 400, FakeServer.error("invalid_parameter", "label: at most 200 characters."));
                case 2 -> FakeServer.json(ex, 403, FakeServer.error("upload_request_full", "This upload request has no room left for this file."));
                default -> FakeServer.json(ex, 403, "{\"success\":false,\"error\":{\"code\":\"insufficient_scope\",\"message\":\"Lacks it.\","
                        + "\"required_scope\":\"requests:manage\"}}");
            }
        }); FileshareClient client = fake.client().build()) {
            UploadRequestCreateParams params = UploadRequestCreateParams.builder().label("x".repeat(201)).expiresIn(Duration.ofDays(1)).build();
            BadRequestException bad = assertThrows(BadRequestException.class, () -> client.uploadRequests().create(params));
            assertEquals("invalid_parameter", bad.code());
            assertEquals(400, bad.status().orElseThrow());
            LimitExceededException full = assertThrows(LimitExceededException.class, () -> client.uploadRequests().create(params));
            assertEquals("upload_request_full", full.code());
            assertEquals(403, full.status().orElseThrow());
            InsufficientScopeException scope = assertThrows(InsufficientScopeException.class, () -> client.uploadRequests().list());
            assertEquals("requests:manage", scope.requiredScope());
            assertEquals(3, fake.requests.size(), "none of them retried");
        }
    }

    @Test
    void fileRecordsCarryTheirSource() {
        FileInfo guest = Json.fileInfo(Json.MAPPER.valueToTree(Map.of("file_id", 1, "source", Map.of("type", "upload_request", "request_id", 12))));
        assertEquals(new FileSource(FileSource.TYPE_UPLOAD_REQUEST, 12L, Map.of()), guest.source());
        assertTrue(guest.source().isUploadRequest());
        FileInfo api = Json.fileInfo(Json.MAPPER.valueToTree(Map.of("file_id", 2, "source", Map.of("type", "api"))));
        assertEquals(new FileSource(FileSource.TYPE_API, null, Map.of()), api.source());
        assertFalse(api.source().isUploadRequest());
        assertEquals(Map.of(), api.extra(), "source is no unknown field");
        FileInfo later = Json.fileInfo(Json.MAPPER.valueToTree(Map.of("file_id", 3, "source", Map.of("type", "sftp", "host", "h"))));
        assertEquals("sftp", later.source().type());
        assertEquals(Map.of("host", "h"), later.source().extra());
        assertNull(Json.fileInfo(Json.MAPPER.valueToTree(Map.of("file_id", 4))).source(), "an older server sends none");
        assertNull(new FileInfo(5, "a", 1, null, 0, null, null, null, null, Map.of()).source(), "the constructors from before");
        assertNull(new FileInfo(5, "a", 1, null, 0, null, null, null, Map.of()).source());
    }

    @Test
    void theTokenIsTheUrlsLastPathSegment() {
        UploadRequest r = Json.uploadRequest(Json.MAPPER.valueToTree(Map.of("request_id", 1, "url", "http://127.0.0.1:3000/r/abc_-DEF")));
        assertEquals("abc_-DEF", r.token());
        assertNull(Json.uploadRequest(Json.MAPPER.valueToTree(Map.of("request_id", 1))).token());
        assertNull(r.maxFiles());
        assertNull(r.fileExpiresInDuration());
        assertNull(r.expiresAtTime());
    }

    private static Map<String, String> query(String raw) {
        Map<String, String> q = new HashMap<>();
        if (raw == null) return q;
        for (String pair : raw.split("&")) {
            String[] kv = pair.split("=", 2);
            q.put(kv[0], URLDecoder.decode(kv[1], StandardCharsets.UTF_8));
        }
        return q;
    }

    /** A request's files: {@code GET /upload-requests/12/files} newest first by {@code before_id}, default limit 20. */
    private static FakeServer filesFake(NavigableSet<Long> ids) throws IOException {
        return new FakeServer((ex, n) -> {
            Map<String, String> q = query(ex.getRequestURI().getRawQuery());
            int limit = Integer.parseInt(q.getOrDefault("limit", "20"));
            List<Long> newestFirst = new ArrayList<>(q.containsKey("before_id")
                    ? ids.headSet(Long.parseLong(q.get("before_id")), false).descendingSet() : ids.descendingSet());
            List<Long> page = newestFirst.subList(0, Math.min(limit, newestFirst.size()));
            StringBuilder files = new StringBuilder();
            for (long id : page) files.append(files.length() == 0 ? "" : ",").append(file(id, 12));
            boolean more = limit < newestFirst.size();
            FakeServer.json(ex, 200, "{\"success\":true,\"files\":[" + files + "],\"pagination\":{\"limit\":" + limit
                    + ",\"next_before_id\":" + (more ? page.get(page.size() - 1) : "null") + "}}");
        });
    }

    @Test
    void filesReadsAPageAndSendsTheParameters() throws Exception {
        try (FakeServer fake = filesFake(new TreeSet<>(List.of(1L, 2L, 3L, 4L, 5L))); FileshareClient client = fake.client().build()) {
            UploadRequestFileList first = client.uploadRequests().files(12, UploadRequestFileListParams.builder().limit(2).build());
            assertEquals(List.of(5L, 4L), first.files().stream().map(FileInfo::fileId).toList());
            assertEquals(new UploadRequestFilePagination(2, 4L), first.pagination());
            assertEquals("/api/v1/upload-requests/12/files?limit=2", fake.requests.get(0).path());
            FileInfo f = first.files().get(0);
            assertEquals("f5.txt", f.filename());
            assertEquals(new FileSource("upload_request", 12L, Map.of()), f.source());
            assertEquals("2026-11-28 10:00:00", f.expiresAt());

            UploadRequestFileList next = client.uploadRequests().files(12, UploadRequestFileListParams.builder().limit(2)
                    .beforeId(first.pagination().nextBeforeId()).build());
            assertEquals(List.of(3L, 2L), next.files().stream().map(FileInfo::fileId).toList());
            assertEquals("/api/v1/upload-requests/12/files?limit=2&before_id=4", fake.requests.get(1).path());
            client.uploadRequests().files(12);
            assertEquals("/api/v1/upload-requests/12/files", fake.requests.get(2).path(), "nothing set, nothing sent");
            client.uploadRequests().files(12, null);
            assertEquals("/api/v1/upload-requests/12/files", fake.requests.get(3).path());
            assertEquals("UploadRequestFileListParams{limit=2, beforeId=4}",
                    UploadRequestFileListParams.builder().limit(2).beforeId(4).build().toString());
        }
    }

    @Test
    void iterateFilesPagesByNextBeforeId() throws Exception {
        NavigableSet<Long> ids = new TreeSet<>();
        for (long id = 1; id <= 7; id++) ids.add(id);
        try (FakeServer fake = filesFake(ids); FileshareClient client = fake.client().build()) {
            List<Long> yielded = new ArrayList<>();
            for (FileInfo f : client.uploadRequests().iterateFiles(12, UploadRequestFileListParams.builder().limit(3).build())) {
                yielded.add(f.fileId());
            }
            assertEquals(List.of(7L, 6L, 5L, 4L, 3L, 2L, 1L), yielded);
            assertEquals(List.of(
                    "/api/v1/upload-requests/12/files?limit=3",
                    "/api/v1/upload-requests/12/files?limit=3&before_id=5",
                    "/api/v1/upload-requests/12/files?limit=3&before_id=2"),
                    fake.requests.stream().map(FakeServer.Seen::path).toList());

            fake.requests.clear();
            assertEquals(7L, client.uploadRequests().iterateFiles(12).stream().findFirst().orElseThrow().fileId());
            assertEquals(List.of("/api/v1/upload-requests/12/files?limit=100"), fake.requests.stream().map(FakeServer.Seen::path).toList());
            assertEquals(List.of(3L, 2L, 1L), client.uploadRequests().iterateFiles(12, UploadRequestFileListParams.builder().beforeId(4).limit(2).build())
                    .stream().map(FileInfo::fileId).toList());
        }
        try (FakeServer fake = new FakeServer((ex, n) -> FakeServer.json(ex, 200, "{\"success\":true,\"files\":["
                + file(5, 12) + "],\"pagination\":{\"limit\":1,\"next_before_id\":5}}"));
             FileshareClient client = fake.client().build()) {
            Iterator<FileInfo> it = client.uploadRequests().iterateFiles(12, UploadRequestFileListParams.builder().limit(1).build()).iterator();
            assertEquals(5, it.next().fileId());
            FileshareException e = assertThrows(FileshareException.class, it::next);
            assertTrue(e.getMessage().contains("next_before_id 5 does not go below 5"), e.getMessage());
        }
    }

    @Test
    void withOptionsAppliesToUploadRequestCalls() throws Exception {
        try (FakeServer fake = new FakeServer((ex, n) -> FakeServer.json(ex, 201, "{\"success\":true,\"upload_request\":" + request(12, "active") + "}"));
             FileshareClient client = fake.client().build()) {
            client.withOptions(o -> o.header("X-Trace", "t1").idempotencyKey("copy-key")).uploadRequests()
                    .create(UploadRequestCreateParams.builder().label("x").expiresIn(Duration.ofDays(1)).build());
            assertEquals("t1", fake.requests.get(0).header("X-Trace"));
            assertEquals("copy-key", fake.requests.get(0).header("Idempotency-Key"));
        }
    }
}
