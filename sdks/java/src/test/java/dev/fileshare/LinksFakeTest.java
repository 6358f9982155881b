package dev.fileshare;

import static org.junit.jupiter.api.Assertions.*;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The links resource and files().update against a fake: methods, paths, bodies (set, cleared, left out), records, retries. */
class LinksFakeTest {
    static final String LINK = "{\"link_id\":12,\"file_id\":3,\"url\":\"http://x/download/tok\",\"default\":false,"
            + "\"label\":\"for the auditors\",\"expires_at\":\"2026-12-01 00:00:00\",\"max_downloads\":3,\"download_count\":1,"
            + "\"password_protected\":true,\"status\":\"active\",\"created_at\":\"2026-11-27 10:00:00\",\"future\":null}";
    static final String DEFAULT_LINK = "{\"link_id\":11,\"file_id\":3,\"url\":\"http://x/download/def\",\"default\":true,"
            + "\"label\":null,\"expires_at\":null,\"max_downloads\":null,\"download_count\":0,"
            + "\"password_protected\":false,\"status\":\"active\",\"created_at\":\"2026-11-27 09:00:00\"}";

    private static Map<String, Object> map(Object... pairs) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i + 1 < pairs.length; i += 2) m.put((String) pairs[i], pairs[i + 1]);
        return m;
    }

    private static JsonNode body(FakeServer.Seen seen) throws Exception {
        return Json.MAPPER.readTree(new String(seen.body(), StandardCharsets.UTF_8));
    }

    @Test
    void anUpdateSetsClearsOrLeavesOutEachField() throws Exception {
        LinkUpdate update = LinkUpdate.builder().clearPassword().maxDownloads(5).clearLabel().build();
        assertEquals(map("password", null, "max_downloads", 5L, "label", null), update.body());
        assertEquals("{\"password\":null,\"max_downloads\":5,\"label\":null}", Json.write(update.body()));
        assertEquals(map("expires_at", null, "max_downloads", null), LinkUpdate.builder().clearExpiry().clearMaxDownloads().build().body());
        assertEquals(map(), LinkUpdate.builder().build().body());
        // The last call for a field wins: set after clear is a set.
        assertEquals(map("label", "x"), LinkUpdate.builder().clearLabel().label("x").build().body());

        assertEquals(map("expires_in", 2L), LinkOptions.builder().expiresIn(Duration.ofMillis(1001)).build().body(),
                "a fraction of a second is rounded up");
        assertEquals(map("expires_in", 604800L), LinkOptions.builder().expiresIn(Duration.ofDays(7)).build().body());
        assertEquals(map("expires_at", "2026-12-01 00:00:00"),
                LinkOptions.builder().expiresAt(Instant.parse("2026-12-01T00:00:00.900Z")).build().body());
        assertEquals(map("expires_at", "2026-12-01 00:00:00"),
                FileUpdate.builder().expiresAt(OffsetDateTime.parse("2026-12-01T01:00:00+01:00").toInstant()).build().body());
        assertEquals(map("expires_at", null, "filename", "a.pdf"), FileUpdate.builder().clearExpiry().filename("a.pdf").build().body());

        // An expiry is relative or absolute, never both; null is not a way to clear.
        assertThrows(ConfigurationException.class, () -> LinkOptions.builder().expiresIn(Duration.ofDays(1)).expiresAt(Instant.now()).build());
        assertThrows(ConfigurationException.class, () -> LinkUpdate.builder().clearExpiry().expiresIn(Duration.ofDays(1)).build());
        assertThrows(ConfigurationException.class, () -> FileUpdate.builder().expiresIn(Duration.ofDays(1)).clearExpiry().build());
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> LinkUpdate.builder().password(null));
        assertTrue(e.getMessage().contains("clear"), e.getMessage());
        assertThrows(ConfigurationException.class, () -> LinkOptions.builder().label(null));
        assertThrows(ConfigurationException.class, () -> FileUpdate.builder().expiresIn(null));
    }

    @Test
    void thePasswordNeverShows() {
        String secret = "correct horse battery staple";
        LinkOptions options = LinkOptions.builder().password(secret).maxDownloads(3).build();
        assertFalse(options.toString().contains(secret), options.toString());
        assertTrue(options.toString().contains("password=[redacted]"), options.toString());
        assertTrue(options.toString().contains("max_downloads=3"), options.toString());
        assertFalse(LinkUpdate.builder().password(secret).build().toString().contains(secret));
        assertTrue(LinkUpdate.builder().clearPassword().build().toString().contains("password=null"));
        DownloadOptions download = DownloadOptions.builder().password(secret).build();
        assertFalse(download.toString().contains(secret), download.toString());
        assertEquals(secret, download.password());
        assertTrue(DownloadOptions.defaults().toString().contains("password=none"));
    }

    @Test
    void everyLinkCallSendsWhatTheSheetSaysAndReadsTheRecord() throws Exception {
        try (FakeServer fake = new FakeServer((ex, n) -> {
            String route = ex.getRequestMethod() + " " + ex.getRequestURI().getPath();
            switch (route) {
                case "POST /api/v1/files/3/links" -> FakeServer.json(ex, 201, "{\"success\":true,\"link\":" + LINK + "}",
                        "Location", "/api/v1/links/12");
                case "GET /api/v1/files/3/links" -> FakeServer.json(ex, 200, "{\"success\":true,\"links\":[" + DEFAULT_LINK + "," + LINK + "]}");
                case "GET /api/v1/links/12", "PATCH /api/v1/links/12", "POST /api/v1/links/12/rotate" ->
                        FakeServer.json(ex, 200, "{\"success\":true,\"link\":" + LINK + "}");
                case "DELETE /api/v1/links/12" -> FakeServer.json(ex, 200, "{\"success\":true,\"message\":\"Link revoked.\"}");
                case "DELETE /api/v1/links/11" -> FakeServer.json(ex, 409, FakeServer.error("default_link_required", "The default link cannot be deleted."));
                case "PATCH /api/v1/files/3" -> FakeServer.json(ex, 200, "{\"success\":true,\"file\":"
                        + FakeServer.file(3, "a".repeat(64), 1, "http://x/download/def").replace("}", ",\"expires_at\":\"2026-12-24 18:00:00\"}") + "}");
                default -> FakeServer.json(ex, 404, FakeServer.error("not_found", route));
            }
        }); FileshareClient client = fake.client().build()) {
            Link link = client.links().create(3, LinkOptions.builder().label("for the auditors").maxDownloads(3)
                    .password("s3cret-pass").expiresIn(Duration.ofDays(4)).build());
            assertEquals(new Link(12, 3, "http://x/download/tok", false, "for the auditors", "2026-12-01 00:00:00", 3L, 1, true,
                    "active", "2026-11-27 10:00:00", map("future", null)), link);
            assertEquals(OffsetDateTime.parse("2026-12-01T00:00:00Z"), link.expiresAtTime());
            assertEquals(OffsetDateTime.parse("2026-11-27T10:00:00Z"), link.createdAtTime());
            FakeServer.Seen create = fake.requests.get(0);
            assertEquals("application/json", create.header("Content-Type"));
            assertEquals("Bearer " + TestKeys.FAKE_KEY, create.header("Authorization"));
            assertEquals(Json.MAPPER.readTree("{\"label\":\"for the auditors\",\"max_downloads\":3,\"password\":\"s3cret-pass\","
                    + "\"expires_in\":345600}"), body(create));

            client.links().create(3);
            assertEquals(0, fake.requests.get(1).body().length, "no options: no body");
            assertNull(fake.requests.get(1).header("Content-Type"));

            List<Link> links = client.links().list(3);
            assertEquals(List.of(11L, 12L), links.stream().map(Link::linkId).toList());
            Link byDefault = links.get(0);
            assertTrue(byDefault.isDefault());
            assertNull(byDefault.maxDownloads());
            assertNull(byDefault.label());
            assertNull(byDefault.expiresAtTime());
            assertFalse(byDefault.passwordProtected());
            assertThrows(UnsupportedOperationException.class, () -> links.add(link));

            assertEquals(link, client.links().get(12));
            assertEquals(link, client.links().update(12, LinkUpdate.builder().clearPassword().maxDownloads(5).build()));
            FakeServer.Seen patch = fake.requests.get(fake.requests.size() - 1);
            assertEquals("PATCH", patch.method());
            assertEquals("{\"password\":null,\"max_downloads\":5}", new String(patch.body(), StandardCharsets.UTF_8));
            assertEquals(link, client.links().rotate(12));
            assertEquals(0, fake.requests.get(fake.requests.size() - 1).body().length);
            client.links().delete(12);
            BadRequestException conflict = assertThrows(BadRequestException.class, () -> client.links().delete(11));
            assertEquals(409, conflict.status().orElseThrow());
            assertEquals("default_link_required", conflict.code());
            assertThrows(NotFoundException.class, () -> client.links().get(99));

            FileInfo file = client.files().update(3, FileUpdate.builder().expiresIn(Duration.ofHours(1)).filename("b.txt").build());
            assertEquals("2026-12-24 18:00:00", file.expiresAt());
            assertEquals(OffsetDateTime.parse("2026-12-24T18:00:00Z"), file.expiresAtTime());
            assertFalse(file.extra().containsKey("expires_at"));
            assertEquals("{\"expires_in\":3600,\"filename\":\"b.txt\"}",
                    new String(fake.requests.get(fake.requests.size() - 1).body(), StandardCharsets.UTF_8));
            assertEquals(file, client.files().updateAsync(3, FileUpdate.builder().clearExpiry().build()).get());
            assertEquals("{\"expires_at\":null}", new String(fake.requests.get(fake.requests.size() - 1).body(), StandardCharsets.UTF_8));
        }
    }

    @Test
    void aCreationCarriesOneIdempotencyKeyOnEveryAttemptSoItIsRetriedLikeAGet() throws Exception {
        List<String> seen = new ArrayList<>();
        try (FakeServer fake = new FakeServer((ex, n) -> {
            seen.add(ex.getRequestMethod() + " " + ex.getRequestURI().getPath());
            if (n % 2 == 1) FakeServer.json(ex, 503, FakeServer.error("service_unavailable", "busy"));
            else FakeServer.json(ex, 201, "{\"success\":true,\"link\":" + LINK + "}");
        }); FileshareClient client = fake.client().build()) {
            assertEquals(12, client.links().create(3).linkId());
            assertEquals(12, client.links().rotate(12).linkId());
            assertEquals(12, client.links().create(3, LinkOptions.builder().label("x").idempotencyKey("my-key-1").build()).linkId());
            assertEquals(List.of("POST /api/v1/files/3/links", "POST /api/v1/files/3/links",
                    "POST /api/v1/links/12/rotate", "POST /api/v1/links/12/rotate",
                    "POST /api/v1/files/3/links", "POST /api/v1/files/3/links"), seen);
            String key = fake.requests.get(0).header("Idempotency-Key");
            assertTrue(key.matches("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"), "a UUID v4: " + key);
            assertEquals(key, fake.requests.get(1).header("Idempotency-Key"), "the same key on the retry");
            assertNull(fake.requests.get(2).header("Idempotency-Key"), "a rotation carries no key");
            assertEquals("my-key-1", fake.requests.get(4).header("Idempotency-Key"));
            assertEquals("my-key-1", fake.requests.get(5).header("Idempotency-Key"));
            assertEquals("{\"label\":\"x\"}", new String(fake.requests.get(4).body(), StandardCharsets.UTF_8), "the key is not in the body");

            // Another call, another key.
            seen.clear();
            fake.requests.clear();
            client.links().create(3);
            client.links().create(3);
            assertNotEquals(fake.requests.get(1).header("Idempotency-Key"), fake.requests.get(3).header("Idempotency-Key"));
        }
        // A connection lost after the request went out: the creation is sent again with its key (the
        // server answers a copy that arrived with the first link); a rotation carries no key: not sent again.
        try (HangUp server = new HangUp()) {
            FileshareClient.Builder b = FileshareClient.builder().baseUrl(server.baseUrl()).apiKey(TestKeys.FAKE_KEY).maxRetries(3);
            List<Long> sleeps = new ArrayList<>();
            b.sleeper = sleeps::add;
            try (FileshareClient client = b.build()) {
                assertThrows(APIConnectionException.class, () -> client.links().create(3));
                assertEquals(4, server.accepted.get(), "1 + 3 retries");
                assertThrows(APIConnectionException.class, () -> client.links().rotate(12));
                assertEquals(5, server.accepted.get(), "one attempt");
                // An update can be sent again (it sets values): retried.
                assertThrows(APIConnectionException.class, () -> client.links().update(12, LinkUpdate.builder().clearLabel().build()));
                assertTrue(server.accepted.get() >= 5 + 4, "attempts: " + server.accepted.get());
            }
        }
    }

    @Test
    void aRotationIsNotSentAgainAfterA500ButACreationIs() throws Exception {
        try (FakeServer fake = new FakeServer((ex, n) -> FakeServer.json(ex, 500, FakeServer.error("internal_error", "x")));
             FileshareClient client = fake.client().build()) {
            assertThrows(ServerException.class, () -> client.links().rotate(12));
            assertEquals(1, fake.requests.size(), "the server may have rotated before failing");
            assertThrows(ServerException.class, () -> client.links().create(3));
            assertEquals(1 + 1 + 2, fake.requests.size(), "a creation has its key: retried (maxRetries 2)");
        }
    }

    @Test
    void anIdempotencyKeyIsOneTo255PrintableAsciiCharacters() {
        assertEquals("a", LinkOptions.builder().idempotencyKey("a").build().idempotencyKey());
        String longest = "k".repeat(255);
        assertEquals(longest, UploadOptions.builder().idempotencyKey(longest).build().idempotencyKey());
        assertEquals(" !~", UploadOptions.builder().idempotencyKey(" !~").build().idempotencyKey());
        for (String bad : new String[] {"", "k".repeat(256), "line\nbreak", "tab\t", "caf\u00e9", "\u007f"}) {
            assertThrows(ConfigurationException.class, () -> UploadOptions.builder().idempotencyKey(bad), bad);
            assertThrows(ConfigurationException.class, () -> LinkOptions.builder().idempotencyKey(bad), bad);
        }
        assertThrows(ConfigurationException.class, () -> LinkOptions.builder().idempotencyKey(null));
        assertNull(UploadOptions.defaults().idempotencyKey());
        assertNull(LinkOptions.none().idempotencyKey());
    }

    @Test
    void aLinkLimitIsALimitExceededException() throws Exception {
        try (FakeServer fake = new FakeServer((ex, n) -> FakeServer.json(ex, 403,
                FakeServer.error("link_limit_exceeded", "A file has at most 100 links that are not revoked.")));
             FileshareClient client = fake.client().build()) {
            LimitExceededException e = assertThrows(LimitExceededException.class, () -> client.links().create(3));
            assertEquals("link_limit_exceeded", e.code());
            assertEquals(1, fake.requests.size());
        }
    }

    /** A server that reads each request and hangs up without an answer. */
    static final class HangUp implements AutoCloseable {
        final java.net.ServerSocket socket;
        final java.util.concurrent.atomic.AtomicInteger accepted = new java.util.concurrent.atomic.AtomicInteger();

        HangUp() throws java.io.IOException {
            socket = new java.net.ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress());
            Thread t = new Thread(() -> {
                while (true) {
                    try (java.net.Socket s = socket.accept()) {
                        accepted.incrementAndGet();
                        s.getInputStream().read(new byte[65536]);
                    } catch (java.io.IOException e) {
                        return;
                    }
                }
            }, "hang-up");
            t.setDaemon(true);
            t.start();
        }

        String baseUrl() {
            return "http://127.0.0.1:" + socket.getLocalPort() + "/api/v1";
        }

        String origin() {
            return "http://127.0.0.1:" + socket.getLocalPort();
        }

        @Override
        public void close() throws java.io.IOException {
            socket.close();
        }
    }
}
