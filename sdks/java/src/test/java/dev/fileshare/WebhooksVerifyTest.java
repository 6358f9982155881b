package dev.fileshare;

import static org.junit.jupiter.api.Assertions.*;

import com.sun.net.httpserver.Headers;
import dev.fileshare.WebhookVerificationException.Reason;
import java.net.http.HttpHeaders;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** {@link Webhooks#verify}: the Standard Webhooks reference vector and every refusal. */
class WebhooksVerifyTest {
    // The Standard Webhooks reference test vector.
    static final String SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    static final String ID = "msg_p5jXN8AQM9LWM0D4loKWxJek";
    static final long TS = 1614265330;
    static final String BODY = "{\"test\": 2432232314}";
    static final String SIGNATURE = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";
    static final Instant NOW = Instant.ofEpochSecond(TS);

    private static Map<String, String> headers(String id, String ts, String signature) {
        Map<String, String> h = new LinkedHashMap<>();
        if (id != null) h.put("webhook-id", id);
        if (ts != null) h.put("webhook-timestamp", ts);
        if (signature != null) h.put("webhook-signature", signature);
        return h;
    }

    private static Map<String, String> vector() {
        return headers(ID, Long.toString(TS), SIGNATURE);
    }

    private static String newSecret() {
        byte[] key = new byte[32];
        new SecureRandom().nextBytes(key);
        return Webhooks.SECRET_PREFIX + Base64.getEncoder().encodeToString(key);
    }

    private static WebhookVerificationException refused(Reason reason, Executable call) {
        WebhookVerificationException e = assertThrows(WebhookVerificationException.class, call);
        assertEquals(reason, e.reason(), e.getMessage());
        assertFalse(e.getMessage().contains(SECRET.substring(6)), "never the secret: " + e.getMessage());
        return e;
    }

    @Test
    void theReferenceVector() {
        WebhookEvent event = Webhooks.verify(BODY, vector(), SECRET, null, NOW);
        assertEquals(ID, event.messageId());
        assertNull(event.type(), "not a Fileshare body: no type");
        assertNull(event.timestamp());
        assertNull(event.time());
        assertEquals(Map.of(), event.data());
        assertEquals(Map.of("test", 2432232314L), event.extra());
        // The same as bytes, and sign() gives the vector's signature.
        assertEquals(event, Webhooks.verify(BODY.getBytes(StandardCharsets.UTF_8), vector(), SECRET, null, NOW));
        assertEquals(SIGNATURE, Webhooks.sign(SECRET, ID, TS, BODY));
        assertEquals(SIGNATURE, Webhooks.sign(SECRET, ID, TS, BODY.getBytes(StandardCharsets.UTF_8)));
        // A secret without its prefix is taken as the base64 itself.
        assertEquals(event, Webhooks.verify(BODY, vector(), SECRET.substring(6), null, NOW));
        assertEquals(event, Webhooks.verify(BODY, vector(), "  " + SECRET + "\n", null, NOW), "surrounding blanks");
    }

    @Test
    void headersInEveryFormAndLetterCase() {
        Map<String, String> upper = new HashMap<>();
        upper.put("Webhook-Id", ID);
        upper.put("WEBHOOK-TIMESTAMP", Long.toString(TS));
        upper.put("webhook-Signature", SIGNATURE);
        upper.put("Content-Type", "application/json");
        assertEquals(ID, Webhooks.verify(BODY, upper, SECRET, null, NOW).messageId());

        Map<String, List<String>> lists = new TreeMap<>(Map.of("Webhook-Id", List.of(ID), "Webhook-Timestamp", List.of(Long.toString(TS)),
                "Webhook-Signature", List.of(SIGNATURE)));
        assertEquals(ID, Webhooks.verify(BODY, lists, SECRET, null, NOW).messageId());

        HttpHeaders http = HttpHeaders.of(Map.of("Webhook-Id", List.of(ID), "webhook-timestamp", List.of(Long.toString(TS)),
                "WEBHOOK-SIGNATURE", List.of(SIGNATURE)), (a, b) -> true);
        assertEquals(ID, Webhooks.verify(BODY, http, SECRET, null, NOW).messageId());
        assertEquals(ID, Webhooks.verify(BODY.getBytes(StandardCharsets.UTF_8), http, SECRET, null, NOW).messageId());

        // The JDK HttpServer's Headers (a Map<String, List<String>> that normalizes the names).
        Headers server = new Headers();
        server.add("webhook-id", ID);
        server.add("webhook-timestamp", Long.toString(TS));
        server.add("webhook-signature", SIGNATURE);
        assertEquals(ID, Webhooks.verify(BODY.getBytes(StandardCharsets.UTF_8), server, SECRET, null, NOW).messageId());

        // Signatures spread over two header lines (or two names that differ in case) are both read.
        Map<String, List<String>> split = new HashMap<>(Map.of("webhook-id", List.of(ID), "webhook-timestamp", List.of(Long.toString(TS)),
                "webhook-signature", List.of("v1,bm90IGl0", SIGNATURE)));
        assertEquals(ID, Webhooks.verify(BODY, split, SECRET, null, NOW).messageId());
        Map<String, Object> twoNames = new HashMap<>(vector());
        twoNames.put("webhook-signature", "v1,bm90IGl0");
        twoNames.put("Webhook-Signature", SIGNATURE);
        assertEquals(ID, Webhooks.verify(BODY, twoNames, SECRET, null, NOW).messageId());
        // The same id twice counts once.
        Map<String, List<String>> sameIdTwice = new HashMap<>(split);
        sameIdTwice.put("webhook-id", List.of(ID, ID));
        assertEquals(ID, Webhooks.verify(BODY, sameIdTwice, SECRET, null, NOW).messageId());
    }

    @Test
    void aTamperedBody() {
        refused(Reason.NO_MATCHING_SIGNATURE, () -> Webhooks.verify("{\"test\": 2432232315}", vector(), SECRET, null, NOW));
        refused(Reason.NO_MATCHING_SIGNATURE, () -> Webhooks.verify("{\"test\":2432232314}", vector(), SECRET, null, NOW));
        refused(Reason.NO_MATCHING_SIGNATURE, () -> Webhooks.verify(BODY + "\n", vector(), SECRET, null, NOW));
        // A changed id or timestamp is a changed signed content too.
        refused(Reason.NO_MATCHING_SIGNATURE, () -> Webhooks.verify(BODY, headers(ID + "x", Long.toString(TS), SIGNATURE), SECRET, null, NOW));
        refused(Reason.NO_MATCHING_SIGNATURE, () -> Webhooks.verify(BODY, headers(ID, Long.toString(TS + 1), SIGNATURE), SECRET, null, NOW));
    }

    @Test
    void aWrongSecret() {
        WebhookVerificationException e = refused(Reason.NO_MATCHING_SIGNATURE, () -> Webhooks.verify(BODY, vector(), newSecret(), null, NOW));
        assertTrue(e.getMessage().startsWith("no signature matches (1 v1 signature checked)"), e.getMessage());
    }

    @Test
    void aSecretThatIsNoWebhookSecret() {
        for (String bad : new String[] {null, "", "   ", "whsec_", "whsec_not base64!", "whsec_%%%%"}) {
            refused(Reason.INVALID_SECRET, () -> Webhooks.verify(BODY, vector(), bad, null, NOW));
        }
    }

    @Test
    void theTimestampWithinFiveMinutesEitherWay() {
        assertEquals(ID, Webhooks.verify(BODY, vector(), SECRET, null, NOW.plusSeconds(300)).messageId());
        assertEquals(ID, Webhooks.verify(BODY, vector(), SECRET, null, NOW.minusSeconds(300)).messageId());
        WebhookVerificationException old = refused(Reason.TIMESTAMP_TOO_OLD, () -> Webhooks.verify(BODY, vector(), SECRET, null, NOW.plusSeconds(301)));
        assertTrue(old.getMessage().contains("301 s before now"), old.getMessage());
        WebhookVerificationException future = refused(Reason.TIMESTAMP_TOO_NEW,
                () -> Webhooks.verify(BODY, vector(), SECRET, null, NOW.minusSeconds(301)));
        assertTrue(future.getMessage().contains("301 s after now"), future.getMessage());
        // Another tolerance.
        assertEquals(ID, Webhooks.verify(BODY, vector(), SECRET, Duration.ofMinutes(10), NOW.plusSeconds(301)).messageId());
        refused(Reason.TIMESTAMP_TOO_OLD, () -> Webhooks.verify(BODY, vector(), SECRET, Duration.ofSeconds(10), NOW.plusSeconds(11)));
        assertEquals(ID, Webhooks.verify(BODY, vector(), SECRET, Duration.ZERO, NOW).messageId());
        assertThrows(ConfigurationException.class, () -> Webhooks.verify(BODY, vector(), SECRET, Duration.ofSeconds(-1), NOW));
        // The timestamp is checked before the signature: a stale message with a wrong secret says stale.
        refused(Reason.TIMESTAMP_TOO_OLD, () -> Webhooks.verify(BODY, vector(), newSecret(), null, NOW.plusSeconds(3600)));
    }

    @Test
    void theClockByDefault() {
        // The vector is from 2021: stale by the clock.
        refused(Reason.TIMESTAMP_TOO_OLD, () -> Webhooks.verify(BODY, vector(), SECRET));
        String secret = newSecret();
        long now = Instant.now().getEpochSecond();
        String body = "{\"type\":\"webhook.test\",\"timestamp\":\"2026-11-27T10:00:00.000Z\",\"data\":{\"webhook_id\":7}}";
        Map<String, String> h = headers("msg_now", Long.toString(now), Webhooks.sign(secret, "msg_now", now, body));
        assertEquals("webhook.test", Webhooks.verify(body, h, secret).type());
        assertEquals("webhook.test", Webhooks.verify(body.getBytes(StandardCharsets.UTF_8), h, secret).type());
        HttpHeaders http = HttpHeaders.of(Map.of("webhook-id", List.of("msg_now"), "webhook-timestamp", List.of(Long.toString(now)),
                "webhook-signature", List.of(h.get("webhook-signature"))), (a, b) -> true);
        assertEquals("webhook.test", Webhooks.verify(body, http, secret).type());
        assertEquals("webhook.test", Webhooks.verify(body.getBytes(StandardCharsets.UTF_8), http, secret).type());
    }

    @Test
    void twoSignaturesWhereOnlyTheSecondMatches() {
        String other = Webhooks.sign(newSecret(), ID, TS, BODY);
        assertEquals(ID, Webhooks.verify(BODY, headers(ID, Long.toString(TS), other + " " + SIGNATURE), SECRET, null, NOW).messageId());
        assertEquals(ID, Webhooks.verify(BODY, headers(ID, Long.toString(TS), SIGNATURE + " " + other), SECRET, null, NOW).messageId());
        assertEquals(ID, Webhooks.verify(BODY, headers(ID, Long.toString(TS), "  " + other + "\t " + SIGNATURE + " "), SECRET, null, NOW)
                .messageId(), "any blanks between entries");
        WebhookVerificationException e = refused(Reason.NO_MATCHING_SIGNATURE,
                () -> Webhooks.verify(BODY, headers(ID, Long.toString(TS), other + " " + other), SECRET, null, NOW));
        assertTrue(e.getMessage().contains("2 v1 signatures checked"), e.getMessage());
        // An entry that is not base64 counts as checked, and matches nothing.
        assertEquals(ID, Webhooks.verify(BODY, headers(ID, Long.toString(TS), "v1,%%%% " + SIGNATURE), SECRET, null, NOW).messageId());
        refused(Reason.NO_MATCHING_SIGNATURE, () -> Webhooks.verify(BODY, headers(ID, Long.toString(TS), "v1,%%%%"), SECRET, null, NOW));
        refused(Reason.NO_MATCHING_SIGNATURE, () -> Webhooks.verify(BODY, headers(ID, Long.toString(TS), "v1,"), SECRET, null, NOW));
    }

    @Test
    void otherVersionsAreIgnored() {
        String v2 = "v2," + SIGNATURE.substring(3);
        String v1a = "v1a," + SIGNATURE.substring(3);
        assertEquals(ID, Webhooks.verify(BODY, headers(ID, Long.toString(TS), v2 + " " + v1a + " " + SIGNATURE), SECRET, null, NOW).messageId());
        WebhookVerificationException e = refused(Reason.NO_MATCHING_SIGNATURE,
                () -> Webhooks.verify(BODY, headers(ID, Long.toString(TS), v2 + " " + v1a), SECRET, null, NOW));
        assertEquals("webhook-signature holds no v1 signature", e.getMessage(), "even with the right bytes under another version");
        refused(Reason.NO_MATCHING_SIGNATURE, () -> Webhooks.verify(BODY, headers(ID, Long.toString(TS), SIGNATURE.substring(3)), SECRET, null, NOW));
        refused(Reason.NO_MATCHING_SIGNATURE, () -> Webhooks.verify(BODY, headers(ID, Long.toString(TS), "V1," + SIGNATURE.substring(3)), SECRET, null, NOW));
    }

    @Test
    void missingHeaders() {
        String ts = Long.toString(TS);
        assertTrue(refused(Reason.MISSING_HEADER, () -> Webhooks.verify(BODY, headers(null, ts, SIGNATURE), SECRET, null, NOW))
                .getMessage().contains("webhook-id"));
        assertTrue(refused(Reason.MISSING_HEADER, () -> Webhooks.verify(BODY, headers(ID, null, SIGNATURE), SECRET, null, NOW))
                .getMessage().contains("webhook-timestamp"));
        assertTrue(refused(Reason.MISSING_HEADER, () -> Webhooks.verify(BODY, headers(ID, ts, null), SECRET, null, NOW))
                .getMessage().contains("webhook-signature"));
        refused(Reason.MISSING_HEADER, () -> Webhooks.verify(BODY, headers("", ts, SIGNATURE), SECRET, null, NOW));
        refused(Reason.MISSING_HEADER, () -> Webhooks.verify(BODY, headers(ID, "  ", SIGNATURE), SECRET, null, NOW));
        refused(Reason.MISSING_HEADER, () -> Webhooks.verify(BODY, headers(ID, ts, " "), SECRET, null, NOW));
        refused(Reason.MISSING_HEADER, () -> Webhooks.verify(BODY, Map.of(), SECRET, null, NOW));
        refused(Reason.MISSING_HEADER, () -> Webhooks.verify(BODY, Map.of("webhook-id", List.of()), SECRET, null, NOW));
        refused(Reason.MISSING_HEADER, () -> Webhooks.verify(BODY, (Map<String, String>) null, SECRET, null, NOW));
        refused(Reason.MISSING_HEADER, () -> Webhooks.verify(BODY, (HttpHeaders) null, SECRET, null, NOW));
        refused(Reason.MISSING_HEADER, () -> Webhooks.verify(BODY, HttpHeaders.of(Map.of(), (a, b) -> true), SECRET, null, NOW));
    }

    @Test
    void malformedHeaders() {
        for (String ts : new String[] {"abc", "1614265330.5", "-1614265330", "1e9", "1234567890123456"}) {
            WebhookVerificationException e = refused(Reason.INVALID_HEADER, () -> Webhooks.verify(BODY, headers(ID, ts, SIGNATURE), SECRET, null, NOW));
            assertTrue(e.getMessage().startsWith("webhook-timestamp is not unix seconds"), e.getMessage());
        }
        Map<String, List<String>> twoIds = Map.of("webhook-id", List.of(ID, "msg_other"), "webhook-timestamp", List.of(Long.toString(TS)),
                "webhook-signature", List.of(SIGNATURE));
        refused(Reason.INVALID_HEADER, () -> Webhooks.verify(BODY, twoIds, SECRET, null, NOW));
    }

    /** A body the secret signed at {@link #NOW}. */
    private static Map<String, String> signed(String secret, byte[] body) {
        return headers("msg_1", Long.toString(TS), Webhooks.sign(secret, "msg_1", TS, body));
    }

    @Test
    void aSignedBodyThatIsNotAJsonObject() {
        String secret = newSecret();
        for (String body : new String[] {"", "not json", "[1,2]", "\"text\"", "42", "null", "{\"a\":1} trailing", "{\"a\":"}) {
            byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
            refused(Reason.INVALID_BODY, () -> Webhooks.verify(bytes, signed(secret, bytes), secret, null, NOW));
        }
        byte[] notUtf8 = {'{', '"', 'a', '"', ':', '"', (byte) 0xff, (byte) 0xfe, '"', '}'};
        refused(Reason.INVALID_BODY, () -> Webhooks.verify(notUtf8, signed(secret, notUtf8), secret, null, NOW));
        refused(Reason.INVALID_BODY, () -> Webhooks.verify((byte[]) null, signed(secret, new byte[0]), secret, null, NOW));
        // The signature is checked first: an unsigned bad body is a signature refusal, never parsed.
        refused(Reason.NO_MATCHING_SIGNATURE, () -> Webhooks.verify("not json", signed(secret, "{}".getBytes(StandardCharsets.UTF_8)), secret, null, NOW));
    }

    @Test
    void aFileshareEvent() {
        String secret = newSecret();
        String body = "{\"type\":\"file.uploaded\",\"timestamp\":\"2026-11-27T10:00:00.000Z\",\"data\":{\"file_id\":42,"
                + "\"filename\":\"été.txt\",\"size\":5000000000,\"upload_date\":\"2026-11-27 10:00:00\",\"download_count\":0,"
                + "\"public_link\":\"https://files.example.com/download/abc\",\"content_type\":\"text/plain\",\"sha256\":\"ab\","
                + "\"expires_at\":null,\"region\":\"eu\"},\"attempt\":1}";
        WebhookEvent event = Webhooks.verify(body, signed(secret, body.getBytes(StandardCharsets.UTF_8)), secret, null, NOW);
        assertEquals(WebhookEvent.FILE_UPLOADED, event.type());
        assertEquals("2026-11-27T10:00:00.000Z", event.timestamp());
        assertEquals(OffsetDateTime.of(2026, 11, 27, 10, 0, 0, 0, ZoneOffset.UTC), event.time());
        assertEquals("msg_1", event.messageId());
        assertEquals(42, event.data().get("file_id"));
        assertEquals(5_000_000_000L, event.data().get("size"));
        assertTrue(event.data().containsKey("expires_at"), "a null value is kept");
        assertEquals(Map.of("attempt", 1), event.extra());
        assertThrows(UnsupportedOperationException.class, () -> event.data().put("x", 1));

        FileInfo file = event.file();
        assertEquals(42, file.fileId());
        assertEquals("été.txt", file.filename(), "UTF-8 text");
        assertEquals(5_000_000_000L, file.size());
        assertEquals(Map.of("region", "eu"), file.extra());
        assertThrows(FileshareException.class, event::link, "a file is no link");

        String linkBody = "{\"type\":\"link.created\",\"timestamp\":\"2026-11-27T10:00:00.000Z\",\"data\":{\"link_id\":9,\"file_id\":42,"
                + "\"url\":\"https://files.example.com/download/xyz\",\"default\":false,\"label\":null,\"expires_at\":null,"
                + "\"max_downloads\":3,\"download_count\":0,\"password_protected\":true,\"status\":\"active\",\"created_at\":\"2026-11-27 10:00:00\"}}";
        WebhookEvent linkEvent = Webhooks.verify(linkBody, signed(secret, linkBody.getBytes(StandardCharsets.UTF_8)), secret, null, NOW);
        assertEquals(9, linkEvent.link().linkId());
        assertEquals(3L, linkEvent.link().maxDownloads());
        assertThrows(FileshareException.class, linkEvent::file, "a link is no file");
        String deleted = "{\"type\":\"file.deleted\",\"timestamp\":\"2026-11-27T10:00:00.000Z\",\"data\":{\"file_id\":42,"
                + "\"filename\":\"a.txt\",\"reason\":\"owner\"}}";
        WebhookEvent deletedEvent = Webhooks.verify(deleted, signed(secret, deleted.getBytes(StandardCharsets.UTF_8)), secret, null, NOW);
        assertEquals("owner", deletedEvent.data().get("reason"));
        assertThrows(FileshareException.class, deletedEvent::file, "file.deleted names the file, it holds no record");

        // A body without type, timestamp or data.
        String bare = "{\"data\":[1]}";
        WebhookEvent other = Webhooks.verify(bare, signed(secret, bare.getBytes(StandardCharsets.UTF_8)), secret, null, NOW);
        assertNull(other.type());
        assertEquals(Map.of(), other.data(), "data that is not an object");
        assertEquals(11, WebhookEvent.TYPES.size());
        assertTrue(WebhookEvent.TYPES.containsAll(List.of("upload_request.file_received", "upload_request.full")));
    }

    @Test
    void uploadRequestEventsAndTheirFileRecord() throws Exception {
        String secret = newSecret();
        String received = "{\"type\":\"upload_request.file_received\",\"timestamp\":\"2026-11-27T10:00:00.000Z\",\"data\":{"
                + "\"request_id\":12,\"label\":\"Invoices\",\"files_received\":1,\"bytes_received\":5,\"file\":{\"file_id\":42,"
                + "\"filename\":\"hello.txt\",\"size\":5,\"upload_date\":\"2026-11-27 10:00:00\",\"download_count\":0,"
                + "\"public_link\":\"https://files.example.com/download/abc\",\"content_type\":\"text/plain\",\"sha256\":\"" + "a".repeat(64)
                + "\",\"expires_at\":null,\"source\":{\"type\":\"upload_request\",\"request_id\":12}}}}";
        WebhookEvent event = Webhooks.verify(received, signed(secret, received.getBytes(StandardCharsets.UTF_8)), secret, null, NOW);
        assertEquals(WebhookEvent.UPLOAD_REQUEST_FILE_RECEIVED, event.type());
        assertEquals(12, ((Number) event.data().get("request_id")).intValue());
        FileInfo file = event.file();
        assertEquals(42, file.fileId());
        assertEquals("hello.txt", file.filename());
        assertEquals(new FileSource("upload_request", 12L, Map.of()), file.source());
        assertTrue(file.source().isUploadRequest());
        assertEquals(Map.of(), file.extra(), "source is a known field");

        String full = "{\"type\":\"upload_request.full\",\"timestamp\":\"2026-11-27T10:00:00.000Z\",\"data\":{"
                + "\"request_id\":12,\"label\":\"Invoices\",\"files_received\":2,\"bytes_received\":10}}";
        WebhookEvent fullEvent = Webhooks.verify(full, signed(secret, full.getBytes(StandardCharsets.UTF_8)), secret, null, NOW);
        assertEquals(WebhookEvent.UPLOAD_REQUEST_FULL, fullEvent.type());
        assertEquals(2, ((Number) fullEvent.data().get("files_received")).intValue());
        assertThrows(FileshareException.class, fullEvent::file, "upload_request.full holds no file");
    }

    @Test
    void theExceptionIsAFileshareExceptionWithoutAResponse() {
        WebhookVerificationException e = refused(Reason.NO_MATCHING_SIGNATURE, () -> Webhooks.verify(BODY, vector(), newSecret(), null, NOW));
        FileshareException base = e;
        assertTrue(base.status().isEmpty());
        assertNull(base.code());
        assertNull(base.requestId());
        assertTrue(base.body().isEmpty());
        assertFalse(Retry.isRetryable(e));
        assertEquals(Reason.INVALID_BODY, new WebhookVerificationException("x", Reason.INVALID_BODY).reason());
    }
}
