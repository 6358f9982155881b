package dev.fileshare;

import static org.junit.jupiter.api.Assertions.*;

import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.io.OutputStream;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The download's POST-and-grant flow against a fake link: the POST (password in a JSON body, never
 * followed by the HTTP library, never sent twice after a lost connection), then the grant, which
 * serves resumes for free and is remembered for the link and destination.
 */
class GrantDownloadFakeTest {
    static final String PASSWORD = "correct horse battery";
    static final byte[] DATA = new byte[200_000];
    static final String SHA;

    static {
        new Random(5).nextBytes(DATA);
        try {
            SHA = Sha256.hex(MessageDigest.getInstance("SHA-256").digest(DATA));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    @TempDir
    Path dir;

    /** The fake's link: /download/tok; its grants: /download/tok/g&lt;n&gt;, each counted POST a new one. */
    static final class Link {
        final AtomicInteger posts = new AtomicInteger();
        final AtomicReference<String> password = new AtomicReference<>();
        /** Grants that answer 404 (revoked). */
        final java.util.Set<String> dead = java.util.concurrent.ConcurrentHashMap.newKeySet();
        /** Cut the next grant GET after this many bytes (-1: no cut). */
        final AtomicInteger cutAfter = new AtomicInteger(-1);
        String expiresAt = "2099-01-01 00:00:00";

        void handle(HttpExchange ex) throws IOException {
            String path = ex.getRequestURI().getPath();
            String host = "http://" + ex.getRequestHeaders().getFirst("Host");
            if (ex.getRequestMethod().equals("POST") && path.equals("/download/tok")) {
                String body = new String((byte[]) ex.getAttribute("body"), StandardCharsets.UTF_8); // FakeServer read it
                String expected = password.get();
                if (expected != null) {
                    String given = body.isEmpty() ? null : Json.MAPPER.readTree(body).path("password").asText(null);
                    if (!expected.equals(given)) {
                        FakeServer.json(ex, 401, FakeServer.error("invalid_password", "The password is wrong."));
                        return;
                    }
                }
                String grant = host + "/download/tok/g" + posts.incrementAndGet();
                FakeServer.json(ex, 303, "{\"success\":true,\"download_url\":\"" + grant + "\",\"expires_at\":\"" + expiresAt + "\"}",
                        "Location", grant);
            } else if (path.startsWith("/download/tok/g") && !dead.contains(path)) {
                serve(ex);
            } else {
                FakeServer.json(ex, 404, FakeServer.error("not_found", "No file behind this link."));
            }
        }

        private void serve(HttpExchange ex) throws IOException {
            ex.getResponseHeaders().set("ETag", "\"" + SHA + "\"");
            if (ex.getRequestMethod().equals("HEAD")) {
                ex.getResponseHeaders().set("Content-Length", Integer.toString(DATA.length));
                ex.sendResponseHeaders(200, -1);
                return;
            }
            String range = ex.getRequestHeaders().getFirst("Range");
            int start = range == null ? 0 : Integer.parseInt(range.replace("bytes=", "").replace("-", ""));
            if (start > 0) ex.getResponseHeaders().set("Content-Range", "bytes " + start + "-" + (DATA.length - 1) + "/" + DATA.length);
            ex.sendResponseHeaders(start > 0 ? 206 : 200, DATA.length - start);
            int cut = cutAfter.getAndSet(-1);
            OutputStream out = ex.getResponseBody();
            out.write(DATA, start, cut >= 0 ? cut : DATA.length - start);
            out.flush();
            if (cut >= 0) throw new IOException("cut on purpose"); // the exchange closes short of its length
            out.close();
        }
    }

    private static List<String> sequence(FakeServer fake) {
        return fake.requests.stream().map(r -> r.method() + " " + r.path()).toList();
    }

    @Test
    void aProtectedLinkGetsThePasswordInAJsonBodyThenTheGrantIsStreamed() throws Exception {
        Link link = new Link();
        link.password.set(PASSWORD);
        try (FakeServer fake = new FakeServer((ex, n) -> link.handle(ex)); FileshareClient client = fake.client().build()) {
            String url = fake.origin() + "/download/tok";
            Path dest = dir.resolve("a.bin");
            DownloadResult result = client.download(url, dest, DownloadOptions.builder().password(PASSWORD).build());
            assertEquals(new DownloadResult(DATA.length, SHA, 0), result);
            assertArrayEquals(DATA, Files.readAllBytes(dest));
            assertEquals(List.of("POST /download/tok", "GET /download/tok/g1"), sequence(fake));
            FakeServer.Seen post = fake.requests.get(0);
            assertEquals("{\"password\":\"" + PASSWORD + "\"}", new String(post.body(), StandardCharsets.UTF_8));
            assertEquals("application/json", post.header("Content-Type"));
            assertEquals("application/json", post.header("Accept"));
            for (FakeServer.Seen r : fake.requests) {
                assertNull(r.header("Authorization"), "no key goes to a link");
                assertFalse(r.path().contains(PASSWORD), "never in a URL");
            }

            // Wrong or missing: AuthenticationException invalid_password, one POST each, nothing written.
            fake.requests.clear();
            Path other = dir.resolve("b.bin");
            AuthenticationException wrong = assertThrows(AuthenticationException.class,
                    () -> client.download(url, other, DownloadOptions.builder().password("not it at all").build()));
            assertEquals(401, wrong.status().orElseThrow());
            assertEquals("invalid_password", wrong.code());
            assertFalse(wrong.getMessage().contains("not it at all"));
            AuthenticationException missing = assertThrows(AuthenticationException.class, () -> client.download(url, other));
            assertEquals("invalid_password", missing.code());
            assertEquals(List.of("POST /download/tok", "POST /download/tok"), sequence(fake));
            assertEquals(0, fake.requests.get(1).body().length, "no password: an empty body");
            assertTrue(fake.sleeps.isEmpty(), "a 401 is not retried");
        }
    }

    @Test
    void thePostIsRetriedOnlyWhenTheServerAnsweredAndAsksForAShortWait() throws Exception {
        AtomicInteger mode = new AtomicInteger();
        Link link = new Link();
        try (FakeServer fake = new FakeServer((ex, n) -> {
            if (ex.getRequestMethod().equals("POST") && mode.getAndIncrement() == 0) {
                FakeServer.json(ex, 503, FakeServer.error("service_unavailable", "busy"), "Retry-After", "2");
            } else if (ex.getRequestMethod().equals("POST") && mode.get() >= 10) {
                FakeServer.json(ex, 429, FakeServer.error("rate_limited", "Too many wrong passwords."), "Retry-After", "900");
            } else {
                link.handle(ex);
            }
        }); FileshareClient client = fake.client().build()) {
            client.download(fake.origin() + "/download/tok", dir.resolve("a.bin"));
            assertEquals(List.of("POST /download/tok", "POST /download/tok", "GET /download/tok/g1"), sequence(fake));
            assertEquals(List.of(2000L), fake.sleeps);

            // Ten wrong passwords later: Retry-After 900 s is not slept through, nor sent again.
            mode.set(10);
            fake.requests.clear();
            RateLimitException limited = assertThrows(RateLimitException.class, () -> client.download(fake.origin() + "/download/tok",
                    dir.resolve("c.bin"), DownloadOptions.builder().password("guess-number-11").build()));
            assertEquals(900L, limited.retryAfter().orElseThrow().toSeconds());
            assertEquals(1, fake.requests.size());
            assertEquals(List.of(2000L), fake.sleeps);
        }
        // A 500 may come after the download was counted: not sent again either.
        try (FakeServer fake = new FakeServer((ex, n) -> FakeServer.json(ex, 500, FakeServer.error("internal_error", "x")));
             FileshareClient client = fake.client().build()) {
            assertThrows(ServerException.class, () -> client.download(fake.origin() + "/download/tok", dir.resolve("e.bin")));
            assertEquals(1, fake.requests.size());
            assertNull(fake.requests.get(0).header("Idempotency-Key"), "the download's POST carries no key");
        }
        // A connection lost after the POST went out may have counted a download: it is not sent again.
        try (LinksFakeTest.HangUp server = new LinksFakeTest.HangUp();
             FileshareClient client = FileshareClient.builder().baseUrl(server.baseUrl()).apiKey(TestKeys.FAKE_KEY).maxRetries(3).build()) {
            assertThrows(APIConnectionException.class, () -> client.download(server.origin() + "/download/tok", dir.resolve("d.bin")));
            assertEquals(1, server.accepted.get());
        }
    }

    @Test
    void theGrantsGetIsRetriedAfterA502ButALongRetryAfterIsThrownAtOnce() throws Exception {
        AtomicInteger gets = new AtomicInteger();
        AtomicReference<String> retryAfter = new AtomicReference<>();
        Link link = new Link();
        try (FakeServer fake = new FakeServer((ex, n) -> {
            if (ex.getRequestMethod().equals("GET") && gets.getAndIncrement() == 0) {
                String wait = retryAfter.get();
                if (wait == null) FakeServer.json(ex, 502, FakeServer.error("bad_gateway", "x"));
                else FakeServer.json(ex, 503, FakeServer.error("service_unavailable", "maintenance"), "Retry-After", wait);
            } else {
                link.handle(ex);
            }
        }); FileshareClient client = fake.client().build()) {
            assertEquals(SHA, client.download(fake.origin() + "/download/tok", dir.resolve("a.bin")).sha256());
            assertEquals(List.of("POST /download/tok", "GET /download/tok/g1", "GET /download/tok/g1"), sequence(fake));
            assertEquals(List.of(250L), fake.sleeps);

            gets.set(0);
            retryAfter.set("3600");
            fake.requests.clear();
            ServerException e = assertThrows(ServerException.class,
                    () -> client.download(fake.origin() + "/download/tok", dir.resolve("b.bin")));
            assertEquals(3600L, e.retryAfter().orElseThrow().toSeconds());
            assertEquals(List.of("POST /download/tok", "GET /download/tok/g2"), sequence(fake));
            assertEquals(List.of(250L), fake.sleeps, "nothing more slept");
        }
    }

    @Test
    void aClientThatFollowsRedirectsStillLeavesThe303ToTheSdk() throws Exception {
        Link link = new Link();
        HttpClient following = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .followRedirects(HttpClient.Redirect.ALWAYS).build();
        try (FakeServer fake = new FakeServer((ex, n) -> link.handle(ex));
             FileshareClient client = fake.client().httpClient(following).build()) {
            assertEquals(SHA, client.download(fake.origin() + "/download/tok", dir.resolve("a.bin")).sha256());
            assertEquals(List.of("POST /download/tok", "GET /download/tok/g1"), sequence(fake));
        }
    }

    @Test
    void aGrantInTheBodyOnlyAndALinkThatMovedAreFollowed() throws Exception {
        Link link = new Link();
        try (FakeServer fake = new FakeServer((ex, n) -> {
            String path = ex.getRequestURI().getPath();
            if (path.equals("/old/tok")) {
                FakeServer.json(ex, 308, "", "Location", "/download/tok"); // the link itself moved: POST again there
            } else if (path.equals("/bodyonly")) {
                FakeServer.json(ex, 303, "{\"success\":true,\"download_url\":\"/download/tok/g9\"}");
            } else {
                link.handle(ex);
            }
        }); FileshareClient client = fake.client().build()) {
            assertEquals(SHA, client.download(fake.origin() + "/old/tok", dir.resolve("a.bin")).sha256());
            assertEquals(List.of("POST /old/tok", "POST /download/tok", "GET /download/tok/g1"), sequence(fake));
            fake.requests.clear();
            assertEquals(SHA, client.download(fake.origin() + "/bodyonly", dir.resolve("b.bin")).sha256());
            assertEquals(List.of("POST /bodyonly", "GET /download/tok/g9"), sequence(fake));
        }
    }

    @Test
    void aCutDownloadContinuesFromTheSameGrantWithoutASecondPost() throws Exception {
        Link link = new Link();
        link.cutAfter.set(70_000);
        try (FakeServer fake = new FakeServer((ex, n) -> link.handle(ex)); FileshareClient client = fake.client().build()) {
            Path dest = dir.resolve("a.bin");
            DownloadResult result = client.download(fake.origin() + "/download/tok", dest);
            assertEquals(SHA, result.sha256());
            assertArrayEquals(DATA, Files.readAllBytes(dest));
            assertEquals(1, link.posts.get());
            assertEquals(List.of("POST /download/tok", "GET /download/tok/g1", "GET /download/tok/g1"), sequence(fake));
            assertEquals("bytes=70000-", fake.requests.get(2).header("Range"));
            assertEquals("\"" + SHA + "\"", fake.requests.get(2).header("If-Range"));
        }
    }

    @Test
    void aRememberedGrantIsUsedUntilShortlyBeforeItEndsAndReplacedWhenItDied() throws Exception {
        Link link = new Link();
        link.expiresAt = "2030-01-01 01:00:00";
        AtomicReference<Instant> now = new AtomicReference<>(Instant.parse("2030-01-01T00:00:00Z"));
        Clock clock = new Clock() {
            @Override
            public ZoneOffset getZone() {
                return ZoneOffset.UTC;
            }

            @Override
            public Clock withZone(java.time.ZoneId zone) {
                return this;
            }

            @Override
            public Instant instant() {
                return now.get();
            }
        };
        try (FakeServer fake = new FakeServer((ex, n) -> link.handle(ex))) {
            FileshareClient.Builder builder = fake.client();
            builder.clock = clock;
            try (FileshareClient client = builder.build()) {
                String url = fake.origin() + "/download/tok";
                Path dest = dir.resolve("a.bin");
                client.download(url, dest);
                // A partial file 58 minutes later: the grant still serves it (a range, no POST).
                Files.write(dest, java.util.Arrays.copyOf(DATA, 1000));
                now.set(now.get().plus(Duration.ofMinutes(58)));
                assertEquals(1000, client.download(url, dest).resumedFrom());
                assertEquals(1, link.posts.get());
                // Within the last minute of its hour: a new grant (a new download counted).
                now.set(now.get().plus(Duration.ofMinutes(1)));
                client.download(url, dest, DownloadOptions.builder().resume(false).build());
                assertEquals(2, link.posts.get());
                // The grant was revoked meanwhile: 404, so the link is asked again, once.
                link.dead.add("/download/tok/g2");
                assertEquals(SHA, client.download(url, dest, DownloadOptions.builder().resume(false).build()).sha256());
                assertEquals(3, link.posts.get());
                assertEquals(List.of("GET /download/tok/g2", "POST /download/tok", "GET /download/tok/g3"),
                        sequence(fake).subList(sequence(fake).size() - 3, sequence(fake).size()));
                // A link that is gone for good: NotFoundException, after one POST.
                try (FakeServer gone = new FakeServer((ex, n) -> FakeServer.json(ex, 404, FakeServer.error("not_found", "No file behind this link.")))) {
                    assertThrows(NotFoundException.class, () -> client.download(gone.origin() + "/download/tok", dir.resolve("z.bin")));
                    assertEquals(List.of("POST /download/tok"), sequence(gone));
                }
            }
        }
    }
}
