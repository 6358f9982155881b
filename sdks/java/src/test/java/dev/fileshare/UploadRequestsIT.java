package dev.fileshare;

import static org.junit.jupiter.api.Assertions.*;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Issue 34 against the real server: {@code client.uploadRequests()} with the launcher's pro key
 * (which holds requests:manage), and guests sending files the way the guest page does: tus at
 * {@code POST /api/v1/uploads} with {@code Authorization: UploadRequest <token>} (raw
 * java.net.http, no key), after {@code POST /r/<token>/grant} when the request has a password.
 */
class UploadRequestsIT {
    static TestServer server;
    static FileshareClient pro;
    static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    /** Requests and files to remove after each test. */
    private final List<Long> requests = new ArrayList<>();
    private final List<Long> files = new ArrayList<>();

    @BeforeAll
    static void start() {
        server = TestServer.get();
        pro = server.client("pro").build();
    }

    @AfterAll
    static void stop() {
        pro.close();
    }

    @AfterEach
    void cleanUp() {
        for (long id : requests) {
            try {
                pro.uploadRequests().delete(id);
            } catch (NotFoundException gone) {
                // deleted by the test
            }
        }
        for (long id : files) {
            try {
                pro.files().delete(id);
            } catch (NotFoundException gone) {
                // deleted by the test
            }
        }
    }

    private UploadRequest create(Consumer<UploadRequestCreateParams.Builder> more) {
        UploadRequestCreateParams.Builder b = UploadRequestCreateParams.builder().label("java sdk " + System.nanoTime())
                .expiresIn(Duration.ofDays(1));
        more.accept(b);
        UploadRequest r = pro.uploadRequests().create(b.build());
        requests.add(r.requestId());
        return r;
    }

    /** A guest's one-request tus upload (creation-with-upload), as the sheet describes it. */
    static HttpResponse<String> guestUpload(String token, String filename, byte[] content, String grant) throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(TestServer.get().baseUrl + "/uploads"))
                .timeout(Duration.ofSeconds(30))
                .header("Tus-Resumable", "1.0.0")
                .header("Authorization", "UploadRequest " + token)
                .header("Upload-Length", Integer.toString(content.length))
                .header("Upload-Metadata", "filename " + Base64.getEncoder().encodeToString(filename.getBytes(StandardCharsets.UTF_8)))
                .header("Content-Type", "application/offset+octet-stream")
                .POST(HttpRequest.BodyPublishers.ofByteArray(content));
        if (grant != null) b.header("Fileshare-Upload-Grant", grant);
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** A guest upload that must succeed: the new file's id (from {@code Fileshare-File-Id}), removed after the test. */
    private long guestUploadOk(String token, String filename, String content, String grant) throws IOException, InterruptedException {
        HttpResponse<String> answer = guestUpload(token, filename, content.getBytes(StandardCharsets.UTF_8), grant);
        assertEquals(201, answer.statusCode(), answer.headers().map() + " " + answer.body());
        String id = answer.headers().firstValue("fileshare-file-id").orElse(null);
        assertNotNull(id, "Fileshare-File-Id: " + answer.headers().map());
        files.add(Long.parseLong(id));
        return Long.parseLong(id);
    }

    private static String errorCode(HttpResponse<String> answer) throws IOException {
        JsonNode body = Json.MAPPER.readTree(answer.body().isEmpty() ? "{}" : answer.body());
        return body.path("error").path("code").asText(null);
    }

    private static void near(Instant expected, Instant actual, Duration tolerance, String what) {
        assertTrue(Duration.between(expected, actual).abs().compareTo(tolerance) <= 0, what + ": expected about " + expected + ", got " + actual);
    }

    @Test
    void createRoundTripsTheFieldsThenListGetUpdateCloseDelete() {
        String label = "Invoices for March " + System.nanoTime();
        UploadRequestCreateParams params = UploadRequestCreateParams.builder().label(label).message("Please send\nthe signed PDFs.\tThanks")
                .expiresIn(Duration.ofDays(7)).maxFiles(5).maxFileSize(1 << 20).maxTotalSize(10 << 20).password("correct horse battery")
                .fileExpiresIn(Duration.ofDays(1)).build();
        RawResponse<UploadRequest> raw = pro.withRawResponse(c -> c.uploadRequests().create(params));
        UploadRequest r = raw.data();
        requests.add(r.requestId());
        assertEquals(201, raw.statusCode());
        assertTrue(raw.headers().firstValue("location").orElse("").endsWith("/upload-requests/" + r.requestId()),
                "Location: " + raw.headers().map());
        assertTrue(r.requestId() > 0);
        assertTrue(r.url().startsWith(server.serverUrl + "/r/"), r.url());
        assertTrue(r.token().matches("[A-Za-z0-9_-]{43}"), r.token());
        assertEquals(r.url(), server.serverUrl + "/r/" + r.token());
        assertEquals(label, r.label());
        assertEquals("Please send\nthe signed PDFs.\tThanks", r.message());
        near(Instant.now().plus(Duration.ofDays(7)), r.expiresAtTime().toInstant(), Duration.ofMinutes(5), "expires_at");
        assertEquals(5L, r.maxFiles());
        assertEquals(1L << 20, r.maxFileSize());
        assertEquals(10L << 20, r.maxTotalSize());
        assertEquals(86400L, r.fileExpiresIn());
        assertTrue(r.passwordProtected());
        assertEquals(0, r.filesReceived());
        assertEquals(0, r.bytesReceived());
        assertEquals(UploadRequest.STATUS_ACTIVE, r.status());
        near(Instant.now(), r.createdAtTime().toInstant(), Duration.ofMinutes(5), "created_at");
        assertEquals(Map.of(), r.extra(), "every field known");
        assertFalse(r.toString().contains("correct horse"));

        // Only the required fields: the rest null.
        UploadRequest bare = create(b -> { });
        assertNull(bare.message());
        assertNull(bare.maxFiles());
        assertNull(bare.maxFileSize());
        assertNull(bare.maxTotalSize());
        assertNull(bare.fileExpiresIn());
        assertFalse(bare.passwordProtected());
        assertNotEquals(r.token(), bare.token());
        assertTrue(bare.requestId() > r.requestId());

        // list (newest first) and get.
        List<UploadRequest> listed = pro.uploadRequests().list();
        List<Long> ids = listed.stream().map(UploadRequest::requestId).toList();
        assertTrue(ids.indexOf(bare.requestId()) >= 0 && ids.indexOf(bare.requestId()) < ids.indexOf(r.requestId()), "newest first: " + ids);
        assertEquals(r, listed.stream().filter(x -> x.requestId() == r.requestId()).findFirst().orElseThrow());
        assertEquals(r, pro.uploadRequests().get(r.requestId()));

        // update: only what is set; cleared fields are null.
        UploadRequest updated = pro.uploadRequests().update(r.requestId(), UploadRequestUpdateParams.builder().label(label + " (2)")
                .clearMessage().clearPassword().maxFiles(3).clearMaxTotalSize().build());
        assertEquals(label + " (2)", updated.label());
        assertNull(updated.message());
        assertFalse(updated.passwordProtected());
        assertEquals(3L, updated.maxFiles());
        assertNull(updated.maxTotalSize());
        assertEquals(r.maxFileSize(), updated.maxFileSize(), "kept");
        assertEquals(r.fileExpiresIn(), updated.fileExpiresIn(), "kept");
        assertEquals(r.expiresAt(), updated.expiresAt(), "kept");
        assertEquals(r.url(), updated.url());
        Instant at = Instant.now().plus(Duration.ofDays(2)).plusMillis(700);
        UploadRequest moved = pro.uploadRequests().update(r.requestId(), UploadRequestUpdateParams.builder().expiresAt(at)
                .clearFileExpiresIn().clearMaxFileSize().message("again").build());
        assertEquals(ApiTime.format(at), moved.expiresAt());
        assertNull(moved.fileExpiresIn());
        assertNull(moved.maxFileSize());
        assertEquals("again", moved.message());
        assertEquals(moved, pro.uploadRequests().get(r.requestId()));

        // close: closed, idempotent, and a later expiry does not open it again.
        UploadRequest closed = pro.uploadRequests().close(r.requestId());
        assertEquals(UploadRequest.STATUS_CLOSED, closed.status());
        assertFalse(closed.isActive());
        assertEquals(UploadRequest.STATUS_CLOSED, pro.uploadRequests().close(r.requestId()).status(), "closing again changes nothing");
        assertEquals(UploadRequest.STATUS_CLOSED, pro.uploadRequests().update(r.requestId(), UploadRequestUpdateParams.builder()
                .expiresIn(Duration.ofDays(5)).build()).status(), "a closed request stays closed");
        assertEquals(UploadRequest.STATUS_CLOSED, pro.uploadRequests().get(r.requestId()).status());

        // delete: the record as it was, closed; then gone.
        UploadRequest deleted = pro.uploadRequests().delete(bare.requestId());
        assertEquals(bare.requestId(), deleted.requestId());
        assertEquals(UploadRequest.STATUS_CLOSED, deleted.status());
        assertThrows(NotFoundException.class, () -> pro.uploadRequests().get(bare.requestId()));
        assertThrows(NotFoundException.class, () -> pro.uploadRequests().delete(bare.requestId()));
        assertThrows(NotFoundException.class, () -> pro.uploadRequests().close(bare.requestId()));
        assertThrows(NotFoundException.class, () -> pro.uploadRequests().files(bare.requestId()));
        assertTrue(pro.uploadRequests().list().stream().noneMatch(x -> x.requestId() == bare.requestId()));
    }

    @Test
    void createWithTheSameIdempotencyKeyMakesOneRequest() {
        String key = "java-upload-request-" + System.nanoTime();
        UploadRequestCreateParams params = UploadRequestCreateParams.builder().label("idempotent").expiresIn(Duration.ofHours(1))
                .idempotencyKey(key).build();
        RawResponse<UploadRequest> first = pro.withRawResponse(c -> c.uploadRequests().create(params));
        requests.add(first.data().requestId());
        RawResponse<UploadRequest> again = pro.withRawResponse(c -> c.uploadRequests().create(params));
        if (again.data().requestId() != first.data().requestId()) requests.add(again.data().requestId());
        assertEquals(first.data().requestId(), again.data().requestId(), "the same request");
        assertEquals(first.data().url(), again.data().url());
        assertEquals("true", again.headers().firstValue("idempotent-replayed").orElse(null));
        BadRequestException reused = assertThrows(BadRequestException.class, () -> pro.uploadRequests().create(
                UploadRequestCreateParams.builder().label("other").expiresIn(Duration.ofHours(1)).idempotencyKey(key).build()));
        assertEquals("idempotency_key_reused", reused.code());
    }

    /** The 400 {@code invalid_parameter} of a bad field, whose message names it. */
    private static void invalid(String field, Runnable call) {
        BadRequestException e = assertThrows(BadRequestException.class, call::run, field);
        assertEquals(400, e.status().orElseThrow(), field);
        assertEquals("invalid_parameter", e.code(), field + ": " + e.getMessage());
        assertTrue(e.getMessage().contains(field), "the message names " + field + ": " + e.getMessage());
    }

    private static Runnable creating(Consumer<UploadRequestCreateParams.Builder> fields) {
        return () -> {
            UploadRequestCreateParams.Builder b = UploadRequestCreateParams.builder().label("bad").expiresIn(Duration.ofDays(1));
            fields.accept(b);
            pro.uploadRequests().create(b.build());
        };
    }

    @Test
    void badFieldsAreInvalidParameter() {
        int before = pro.uploadRequests().list().size();
        invalid("label", creating(b -> b.label("")));
        invalid("label", creating(b -> b.label("x".repeat(201))));
        invalid("label", creating(b -> b.label("two\nlines")));
        invalid("message", creating(b -> b.message("x".repeat(2001))));
        invalid("message", creating(b -> b.message("a bell \u0007")));
        invalid("expires_in", creating(b -> b.expiresIn(Duration.ofDays(91))));
        invalid("expires_at", () -> pro.uploadRequests().create(UploadRequestCreateParams.builder().label("bad")
                .expiresAt(Instant.now().minus(Duration.ofHours(1))).build()));
        invalid("expires_at", () -> pro.uploadRequests().create(UploadRequestCreateParams.builder().label("bad")
                .expiresAt(Instant.now().plus(Duration.ofDays(91))).build()));
        invalid("max_files", creating(b -> b.maxFiles(0)));
        invalid("max_files", creating(b -> b.maxFiles(10_001)));
        invalid("max_file_size", creating(b -> b.maxFileSize(0)));
        invalid("max_file_size", creating(b -> b.maxFileSize(Long.MAX_VALUE / 2)));
        invalid("max_total_size", creating(b -> b.maxTotalSize(0)));
        invalid("password", creating(b -> b.password("short")));
        invalid("file_expires_in", creating(b -> b.fileExpiresIn(Duration.ofSeconds(315_360_001))));
        assertEquals(before, pro.uploadRequests().list().size(), "nothing was made");

        // The limits themselves are accepted.
        UploadRequest edge = create(b -> b.label("y".repeat(200)).message("z".repeat(2000)).maxFiles(10_000).maxTotalSize(1)
                .password("8 chars!").fileExpiresIn(Duration.ofSeconds(315_360_000)));
        assertEquals(200, edge.label().length());
        assertEquals(10_000L, edge.maxFiles());

        // An update: the same rules.
        long id = edge.requestId();
        invalid("label", () -> pro.uploadRequests().update(id, UploadRequestUpdateParams.builder().label("").build()));
        invalid("max_files", () -> pro.uploadRequests().update(id, UploadRequestUpdateParams.builder().maxFiles(0).build()));
        invalid("expires_in", () -> pro.uploadRequests().update(id, UploadRequestUpdateParams.builder().expiresIn(Duration.ofDays(91)).build()));
        assertEquals(edge, pro.uploadRequests().get(id), "unchanged");
        invalid("limit", () -> pro.uploadRequests().files(id, UploadRequestFileListParams.builder().limit(101).build()));
        assertThrows(NotFoundException.class, () -> pro.uploadRequests().get(999_999_999));
        assertThrows(NotFoundException.class, () -> pro.uploadRequests().update(999_999_999, UploadRequestUpdateParams.builder().label("x").build()));
    }

    @Test
    void aKeyWithoutRequestsManageIsRefusedAndAnotherAccountSeesNothing() {
        UploadRequest r = create(b -> { });
        try (FileshareClient readOnly = server.client("read_only").build()) {
            InsufficientScopeException e = assertThrows(InsufficientScopeException.class, () -> readOnly.uploadRequests().list());
            assertEquals("requests:manage", e.requiredScope());
            assertEquals(403, e.status().orElseThrow());
            assertEquals("insufficient_scope", e.code());
            assertInstanceOf(PermissionDeniedException.class, e);
            assertThrows(InsufficientScopeException.class, () -> readOnly.uploadRequests().get(r.requestId()));
            assertThrows(InsufficientScopeException.class, () -> readOnly.uploadRequests().files(r.requestId()));
            assertThrows(InsufficientScopeException.class, () -> readOnly.uploadRequests().close(r.requestId()));
            assertThrows(InsufficientScopeException.class, () -> readOnly.uploadRequests().create(UploadRequestCreateParams.builder()
                    .label("no").expiresIn(Duration.ofHours(1)).build()));
        }
        assertEquals(UploadRequest.STATUS_ACTIVE, pro.uploadRequests().get(r.requestId()).status(), "nothing was closed");
        try (FileshareClient stranger = FileshareClient.builder().baseUrl(server.baseUrl)
                .apiKey(server.createAccount("upload-requests-stranger", "pro")).build()) {
            assertThrows(NotFoundException.class, () -> stranger.uploadRequests().get(r.requestId()));
            assertThrows(NotFoundException.class, () -> stranger.uploadRequests().close(r.requestId()));
            assertThrows(NotFoundException.class, () -> stranger.uploadRequests().delete(r.requestId()));
            assertThrows(NotFoundException.class, () -> stranger.uploadRequests().files(r.requestId()));
            assertTrue(stranger.uploadRequests().list().stream().noneMatch(x -> x.requestId() == r.requestId()));
        }
    }

    @Test
    void aGuestUploadLandsInTheAccountWithItsSourceAndTheRequestFillsUp() throws Exception {
        UploadRequest r = create(b -> b.maxFiles(2).fileExpiresIn(Duration.ofHours(1)));
        long first = guestUploadOk(r.token(), "hello.txt", "hello", null);

        // files(): the guest's file, with its source; the counters moved.
        UploadRequestFileList page = pro.uploadRequests().files(r.requestId());
        assertEquals(1, page.files().size());
        FileInfo received = page.files().get(0);
        assertEquals(first, received.fileId());
        assertEquals("hello.txt", received.filename());
        assertEquals(5, received.size());
        assertEquals(Sha256.hex(java.security.MessageDigest.getInstance("SHA-256").digest("hello".getBytes(StandardCharsets.UTF_8))), received.sha256());
        assertEquals(FileSource.TYPE_UPLOAD_REQUEST, received.source().type());
        assertEquals(r.requestId(), received.source().requestId());
        assertTrue(received.source().isUploadRequest());
        assertNotNull(received.expiresAtTime(), "file_expires_in gives the file an expiry");
        near(Instant.now().plus(Duration.ofHours(1)), received.expiresAtTime().toInstant(), Duration.ofMinutes(5), "the file's expires_at");
        assertNull(page.pagination().nextBeforeId());
        assertEquals(received, pro.files().get(first), "the same record in the account's files");
        UploadRequest after = pro.uploadRequests().get(r.requestId());
        assertEquals(1, after.filesReceived());
        assertEquals(5, after.bytesReceived());
        assertEquals(UploadRequest.STATUS_ACTIVE, after.status());

        // A file of the holder's own: source api.
        FileInfo own = pro.files().upload("mine".getBytes(StandardCharsets.UTF_8), UploadOptions.builder().filename("own.txt").build());
        files.add(own.fileId());
        assertEquals(new FileSource(FileSource.TYPE_API, null, Map.of()), pro.files().get(own.fileId()).source());
        // The upload's answer carries it too.
        assertEquals(pro.files().get(own.fileId()).source(), own.source(), "upload answer");

        // The second file fills it (max_files 2): status full, and the token is dead.
        long second = guestUploadOk(r.token(), "second.txt", "world!", null);
        UploadRequest full = pro.uploadRequests().get(r.requestId());
        assertEquals(UploadRequest.STATUS_FULL, full.status());
        assertEquals(2, full.filesReceived());
        assertEquals(11, full.bytesReceived());
        HttpResponse<String> third = guestUpload(r.token(), "third.txt", "no room".getBytes(StandardCharsets.UTF_8), null);
        assertEquals(401, third.statusCode(), third.body());
        assertEquals("unauthorized", errorCode(third));

        // Paging: newest first, by before_id; iterateFiles yields both once.
        UploadRequestFileList one = pro.uploadRequests().files(r.requestId(), UploadRequestFileListParams.builder().limit(1).build());
        assertEquals(List.of(second), one.files().stream().map(FileInfo::fileId).toList());
        assertEquals(1, one.pagination().limit());
        assertNotNull(one.pagination().nextBeforeId());
        UploadRequestFileList two = pro.uploadRequests().files(r.requestId(), UploadRequestFileListParams.builder().limit(1)
                .beforeId(one.pagination().nextBeforeId()).build());
        assertEquals(List.of(first), two.files().stream().map(FileInfo::fileId).toList());
        assertEquals(List.of(second, first), pro.uploadRequests().iterateFiles(r.requestId(), UploadRequestFileListParams.builder().limit(1).build())
                .stream().map(FileInfo::fileId).toList());
        assertEquals(List.of(second, first), pro.uploadRequests().iterateFiles(r.requestId()).stream().map(FileInfo::fileId).toList());

        // Raising the limit opens it again; closing it kills the token; its files stay.
        assertEquals(UploadRequest.STATUS_ACTIVE, pro.uploadRequests().update(r.requestId(), UploadRequestUpdateParams.builder().maxFiles(3)
                .build()).status());
        pro.uploadRequests().close(r.requestId());
        HttpResponse<String> closed = guestUpload(r.token(), "late.txt", "late".getBytes(StandardCharsets.UTF_8), null);
        assertEquals(401, closed.statusCode(), closed.body());
        pro.uploadRequests().delete(r.requestId());
        assertEquals(first, pro.files().get(first).fileId(), "the files stay when the request goes");

        // The audit log: a guest uploaded it.
        AuditEvent uploaded = pro.auditEvents().iterate(AuditEventListParams.builder().action("file.uploaded").build()).stream()
                .filter(e -> e.target() != null && Long.valueOf(first).equals(e.target().id())).findFirst().orElseThrow();
        assertEquals("guest", uploaded.actor().type());
        assertEquals(r.requestId(), uploaded.actor().id());
        assertTrue(pro.auditEvents().iterate(AuditEventListParams.builder().action("upload_request.created").build()).stream()
                .anyMatch(e -> e.target() != null && Long.valueOf(r.requestId()).equals(e.target().id())), "upload_request.created");
    }

    @Test
    void aFileLargerThanTheRoomLeftIsUploadRequestFull() throws Exception {
        UploadRequest r = create(b -> b.maxTotalSize(8));
        guestUploadOk(r.token(), "five.txt", "12345", null);
        HttpResponse<String> tooBig = guestUpload(r.token(), "four.txt", "1234".getBytes(StandardCharsets.UTF_8), null);
        assertEquals(403, tooBig.statusCode(), tooBig.body());
        assertEquals("upload_request_full", errorCode(tooBig));
        // What the SDK makes of that answer.
        FileshareException mapped = Errors.fromResponse(tooBig.statusCode(), tooBig.headers(), tooBig.body());
        assertInstanceOf(LimitExceededException.class, mapped);
        assertEquals("upload_request_full", mapped.code());
        UploadRequest after = pro.uploadRequests().get(r.requestId());
        assertEquals(1, after.filesReceived());
        assertEquals(5, after.bytesReceived());
        assertEquals(UploadRequest.STATUS_ACTIVE, after.status(), "5 of 8 bytes: room for a smaller file");
        guestUploadOk(r.token(), "three.txt", "123", null);
        assertEquals(UploadRequest.STATUS_FULL, pro.uploadRequests().get(r.requestId()).status(), "8 of 8 bytes");
    }

    @Test
    void aPasswordProtectedRequestNeedsAGrant() throws Exception {
        UploadRequest r = create(b -> b.password("open sesame"));
        HttpResponse<String> wrong = grant(r.token(), "not the password");
        assertEquals(401, wrong.statusCode(), wrong.body());
        assertEquals("invalid_password", errorCode(wrong));
        HttpResponse<String> withoutGrant = guestUpload(r.token(), "nogrant.txt", "x".getBytes(StandardCharsets.UTF_8), null);
        assertEquals(401, withoutGrant.statusCode(), withoutGrant.body());
        HttpResponse<String> right = grant(r.token(), "open sesame");
        assertEquals(200, right.statusCode(), right.body());
        JsonNode body = Json.MAPPER.readTree(right.body());
        assertTrue(body.path("success").asBoolean());
        assertNotNull(ApiTime.parse(body.path("expires_at").asText()), right.body());
        long id = guestUploadOk(r.token(), "granted.txt", "granted", body.path("grant").asText());
        assertEquals(List.of(id), pro.uploadRequests().files(r.requestId()).files().stream().map(FileInfo::fileId).toList());
        // The token is no API key.
        HttpResponse<String> asKey = HTTP.send(HttpRequest.newBuilder(URI.create(server.baseUrl + "/files"))
                .header("Authorization", "UploadRequest " + r.token()).GET().build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(401, asKey.statusCode(), asKey.body());
    }

    private static HttpResponse<String> grant(String token, String password) throws IOException, InterruptedException {
        return HTTP.send(HttpRequest.newBuilder(URI.create(server.serverUrl + "/r/" + token + "/grant"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(Json.write(Map.of("password", password)))).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void webhookEventsOfAGuestUpload() throws Exception {
        try (WebhooksIT.Receiver receiver = new WebhooksIT.Receiver()) {
            Webhook hook = pro.webhooks().create(WebhookCreateParams.builder().url(receiver.url())
                    .events(WebhookEvent.UPLOAD_REQUEST_FILE_RECEIVED, WebhookEvent.UPLOAD_REQUEST_FULL).build());
            try {
                UploadRequest r = create(b -> b.maxFiles(1));
                long id = guestUploadOk(r.token(), "hooked.txt", "hooked", null);
                WebhookEvent received = event(receiver, hook, WebhookEvent.UPLOAD_REQUEST_FILE_RECEIVED, r.requestId());
                assertEquals(r.label(), received.data().get("label"));
                assertEquals(1, ((Number) received.data().get("files_received")).intValue());
                assertEquals(6, ((Number) received.data().get("bytes_received")).intValue());
                FileInfo file = received.file();
                assertEquals(id, file.fileId());
                assertEquals("hooked.txt", file.filename());
                assertEquals(r.requestId(), file.source().requestId());
                WebhookEvent full = event(receiver, hook, WebhookEvent.UPLOAD_REQUEST_FULL, r.requestId());
                assertEquals(1, ((Number) full.data().get("files_received")).intValue());
            } finally {
                pro.webhooks().delete(hook.webhookId());
            }
        }
    }

    private static WebhookEvent event(WebhooksIT.Receiver receiver, Webhook hook, String type, long requestId) throws InterruptedException {
        WebhooksIT.Received message = receiver.waitFor(m -> {
            try {
                JsonNode body = Json.MAPPER.readTree(m.body());
                return body.path("type").asText().equals(type) && body.path("data").path("request_id").asLong() == requestId;
            } catch (IOException e) {
                return false;
            }
        });
        WebhookEvent event = Webhooks.verify(message.body(), message.headers(), hook.secret());
        assertEquals(type, event.type());
        return event;
    }
}
