package dev.fileshare;

import static org.junit.jupiter.api.Assertions.*;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The client against a local fake server: retries, errors, integrity, timeouts, headers. */
class FakeServerTest {
    private static final String STATS = "{\"success\":true,\"stats\":{\"total_files\":1,\"total_size\":2,\"total_downloads\":3,"
            + "\"uploads_today\":4,\"future_stat\":5},\"limits\":{\"max_file_size\":10,\"daily_uploads\":11,"
            + "\"requests_per_minute\":12,\"requests_per_day\":13},\"plan\":\"pro\",\"quota\":{\"bytes\":7}}";

    @TempDir
    Path dir;

    @Test
    void retries503And429ThenSucceeds() throws Exception {
        try (FakeServer fake = new FakeServer((ex, n) -> {
            if (n == 1) FakeServer.json(ex, 503, FakeServer.error("service_unavailable", "down"));
            else if (n == 2) FakeServer.json(ex, 429, FakeServer.error("rate_limited", "slow"), "Retry-After", "3");
            else FakeServer.json(ex, 200, STATS);
        }); FileshareClient client = fake.client().build()) {
            AccountStats stats = client.stats();
            assertEquals(3, fake.requests.size());
            assertEquals(List.of(250L, 3000L), fake.sleeps); // jitter 0.5 x 500 ms, then Retry-After
            assertEquals(1, stats.stats().totalFiles());
            assertEquals(13, stats.limits().requestsPerDay());
            assertEquals("pro", stats.plan());
            assertEquals(5, stats.stats().extra().get("future_stat"));
            assertEquals(java.util.Map.of("bytes", 7), stats.extra().get("quota"));
            FakeServer.Seen seen = fake.requests.get(0);
            assertEquals("GET", seen.method());
            assertEquals("/api/v1/stats", seen.path());
            assertEquals("Bearer " + TestKeys.FAKE_KEY, seen.header("Authorization"));
            assertEquals("fileshare-sdk-java/" + Version.VERSION, seen.header("User-Agent"));
        }
    }

    @Test
    void givesUpAfterMaxRetries() throws Exception {
        try (FakeServer fake = new FakeServer((ex, n) -> FakeServer.json(ex, 429, FakeServer.error("rate_limited", "slow"),
                "Retry-After", "60", "RateLimit-Limit", "10", "RateLimit-Remaining", "0", "RateLimit-Reset", "60",
                "X-Request-Id", "abc"));
             FileshareClient client = fake.client().maxRetries(3).build()) {
            RateLimitException e = assertThrows(RateLimitException.class, client::stats);
            assertEquals(4, fake.requests.size());
            assertEquals(List.of(60_000L, 60_000L, 60_000L), fake.sleeps); // 60 s is still slept through
            assertEquals(429, e.status().orElseThrow());
            assertEquals("rate_limited", e.code());
            assertEquals(60L, e.retryAfter().orElseThrow().toSeconds());
            assertEquals(10L, e.rateLimit().limit());
            assertEquals("abc", e.requestId());
        }
    }

    @Test
    void aRetryAfterOverSixtySecondsIsThrownAtOnce() throws Exception {
        try (FakeServer fake = new FakeServer((ex, n) -> {
            if (ex.getRequestURI().getPath().endsWith("/stats")) {
                FakeServer.json(ex, 429, FakeServer.error("rate_limited", "slow"), "Retry-After", "61", "RateLimit-Limit", "10");
            } else {
                FakeServer.json(ex, 503, FakeServer.error("service_unavailable", "maintenance"), "Retry-After", "3600");
            }
        }); FileshareClient client = fake.client().maxRetries(5).build()) {
            RateLimitException e = assertThrows(RateLimitException.class, client::stats);
            assertEquals(61L, e.retryAfter().orElseThrow().toSeconds());
            assertEquals(10L, e.rateLimit().limit());
            // An upload (keyed, replayable) and a 503: the same.
            ServerException s = assertThrows(ServerException.class, () -> client.files().upload(new byte[3]));
            assertEquals(3600L, s.retryAfter().orElseThrow().toSeconds());
            assertEquals(2, fake.requests.size(), "one attempt each");
            assertTrue(fake.sleeps.isEmpty(), "nothing slept: " + fake.sleeps);
        }
    }

    @Test
    void serverErrors500502503And504AreRetriedOthersNot() throws Exception {
        try (FakeServer fake = new FakeServer((ex, n) -> {
            String path = ex.getRequestURI().getPath();
            int status = Integer.parseInt(path.substring(path.lastIndexOf('/') + 1));
            FakeServer.json(ex, status, FakeServer.error("internal_error", "x"));
        }); FileshareClient client = fake.client().maxRetries(1).build()) {
            for (int status : new int[] {500, 502, 503, 504}) {
                fake.requests.clear();
                assertEquals(status, assertThrows(ServerException.class, () -> client.files().get(status)).status().orElseThrow());
                assertEquals(2, fake.requests.size(), status + " is retried");
            }
            for (int status : new int[] {501, 505}) {
                fake.requests.clear();
                assertThrows(ServerException.class, () -> client.files().get(status));
                assertEquals(1, fake.requests.size(), status + " is not retried");
            }
            assertEquals(List.of(250L, 250L, 250L, 250L), fake.sleeps);
        }
    }

    @Test
    void statsCarryTheStorageQuotaAndTheBytesReserved() throws Exception {
        String quota = "{\"success\":true,\"stats\":{\"total_files\":2,\"total_size\":700,\"total_downloads\":0,"
                + "\"uploads_today\":2,\"storage_reserved\":300},\"limits\":{\"max_file_size\":10,\"daily_uploads\":11,"
                + "\"requests_per_minute\":12,\"requests_per_day\":13,\"max_storage\":1000},\"plan\":\"pro\"}";
        String unlimited = quota.replace("\"max_storage\":1000", "\"max_storage\":null");
        try (FakeServer fake = new FakeServer((ex, n) -> FakeServer.json(ex, 200, n == 1 ? quota : n == 2 ? unlimited : STATS));
             FileshareClient client = fake.client().build()) {
            AccountStats s = client.stats();
            assertEquals(1000L, s.limits().maxStorage());
            assertEquals(700, s.stats().totalSize());
            assertEquals(300, s.stats().storageReserved());
            assertTrue(s.stats().extra().isEmpty(), "known fields are not extra: " + s.stats().extra());
            assertTrue(s.limits().extra().isEmpty(), "known fields are not extra: " + s.limits().extra());
            AccountStats u = client.stats();
            assertNull(u.limits().maxStorage(), "null: unlimited");
            assertFalse(u.limits().extra().containsKey("max_storage"));
            AccountStats old = client.stats(); // a server from before quotas
            assertNull(old.limits().maxStorage());
            assertEquals(0, old.stats().storageReserved());
        }
        // The constructors of earlier versions still compile and mean "unlimited", "nothing reserved".
        assertNull(new Limits(1, 2, 3, 4, java.util.Map.of()).maxStorage());
        assertEquals(0, new Stats(1, 2, 3, 4, java.util.Map.of()).storageReserved());
    }

    @Test
    void otherErrorsAreNotRetried() throws Exception {
        try (FakeServer fake = new FakeServer((ex, n) -> {
            if (ex.getRequestURI().getPath().endsWith("/files/7")) FakeServer.json(ex, 404, FakeServer.error("not_found", "No file with id 7."));
            else if (ex.getRequestURI().getPath().endsWith("/files")) FakeServer.json(ex, 400, FakeServer.error("invalid_parameter", "limit"));
            else if (ex.getRequestURI().getPath().endsWith("/files/8")) FakeServer.json(ex, 501, FakeServer.error("not_implemented", "oops"));
            else FakeServer.json(ex, 401, FakeServer.error("unauthorized", "bad key"));
        }); FileshareClient client = fake.client().build()) {
            assertThrows(NotFoundException.class, () -> client.files().get(7));
            assertThrows(BadRequestException.class, () -> client.files().list(1, 500));
            ServerException s = assertThrows(ServerException.class, () -> client.files().get(8));
            assertEquals(501, s.status().orElseThrow());
            AuthenticationException a = assertThrows(AuthenticationException.class, client::stats);
            assertFalse(a.getMessage().contains(TestKeys.FAKE_KEY));
            assertEquals(4, fake.requests.size());
            assertTrue(fake.sleeps.isEmpty());
            assertEquals("/api/v1/files?page=1&limit=500", fake.requests.get(1).path());
        }
    }

    @Test
    void connectionFailuresAreRetriedThenAPIConnectionException() throws Exception {
        AtomicInteger accepted = new AtomicInteger();
        try (ServerSocket socket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            Thread t = new Thread(() -> {
                while (true) {
                    try (Socket s = socket.accept()) {
                        accepted.incrementAndGet();
                        s.getInputStream().read(new byte[4096]); // read the request, then hang up without an answer
                    } catch (IOException e) {
                        return;
                    }
                }
            });
            t.setDaemon(true);
            t.start();
            FileshareClient.Builder b = FileshareClient.builder().baseUrl("http://127.0.0.1:" + socket.getLocalPort() + "/api/v1")
                    .apiKey(TestKeys.FAKE_KEY).maxRetries(2);
            List<Long> sleeps = new ArrayList<>();
            b.sleeper = sleeps::add;
            b.random = () -> 1.0;
            try (FileshareClient client = b.build()) {
                APIConnectionException e = assertThrows(APIConnectionException.class, client::stats);
                assertTrue(e.status().isEmpty());
                // 3 attempts; the JDK's client itself sends an idempotent GET again once on a closed connection.
                assertTrue(accepted.get() >= 3, "attempts: " + accepted.get());
                assertEquals(List.of(500L, 1000L), sleeps);
            }
        }
        // Nothing listens: refused.
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        try (FileshareClient client = FileshareClient.builder().baseUrl("http://127.0.0.1:" + port + "/api/v1")
                .apiKey(TestKeys.FAKE_KEY).maxRetries(0).build()) {
            assertThrows(APIConnectionException.class, client::stats);
        }
    }

    @Test
    void idleTimeoutIsAConnectionError() throws Exception {
        try (FakeServer fake = new FakeServer((ex, n) -> {
            try {
                Thread.sleep(3000);
            } catch (InterruptedException ignored) {
                // stop
            }
            FakeServer.json(ex, 200, STATS);
        }); FileshareClient client = fake.client().maxRetries(0).timeout(Duration.ofMillis(300)).build()) {
            long start = System.nanoTime();
            APIConnectionException e = assertThrows(APIConnectionException.class, client::stats);
            assertTrue(e.getMessage().contains("300 ms"), e.getMessage());
            assertTrue(System.nanoTime() - start < 2_000_000_000L, "gave up within the idle timeout");
        }
    }

    @Test
    void idleTimeoutWhileReadingABody() throws Exception {
        try (FakeServer fake = new FakeServer((ex, n) -> {
            ex.getResponseHeaders().set("ETag", "\"" + "0".repeat(64) + "\"");
            ex.sendResponseHeaders(200, 100);
            OutputStream out = ex.getResponseBody();
            out.write(new byte[10]);
            out.flush();
            try {
                Thread.sleep(3000);
            } catch (InterruptedException ignored) {
                // stop
            }
        }); FileshareClient client = fake.client().maxRetries(0).timeout(Duration.ofMillis(300)).build()) {
            long start = System.nanoTime();
            assertThrows(APIConnectionException.class, () -> client.download(fake.origin() + "/download/x", dir.resolve("x")));
            assertTrue(System.nanoTime() - start < 2_500_000_000L);
        }
    }

    @Test
    void uploadComparesTheSha256AndStreamsAreNotRetried() throws Exception {
        byte[] content = "hello world".getBytes(StandardCharsets.UTF_8);
        String real = Sha256.hex(java.security.MessageDigest.getInstance("SHA-256").digest(content));
        AtomicInteger mode = new AtomicInteger();
        try (FakeServer fake = new FakeServer((ex, n) -> {
            switch (mode.get()) {
                case 0 -> FakeServer.json(ex, 201, "{\"success\":true," + FakeServer.file(5, "f".repeat(64), 11, "http://x/download/t").substring(1));
                case 1 -> FakeServer.json(ex, 503, FakeServer.error("service_unavailable", "down"));
                default -> FakeServer.json(ex, n % 2 == 1 ? 503 : 201, n % 2 == 1 ? FakeServer.error("service_unavailable", "down")
                        : "{\"success\":true," + FakeServer.file(6, real, 11, "http://x/download/t").substring(1));
            }
        }); FileshareClient client = fake.client().build()) {
            IntegrityException e = assertThrows(IntegrityException.class, () -> client.files().upload(content, null));
            assertEquals("f".repeat(64), e.expected());
            assertEquals(real, e.actual());
            String body = new String(fake.requests.get(0).body(), StandardCharsets.UTF_8);
            assertTrue(body.contains("name=\"file\"; filename=\"file\""), body);
            assertTrue(fake.requests.get(0).header("Content-Type").startsWith("multipart/form-data; boundary=----fileshare-sdk-java-"));

            // A one-shot stream is sent once: no retry.
            mode.set(1);
            fake.requests.clear();
            assertThrows(ServerException.class, () -> client.files().upload(new ByteArrayInputStream(content)));
            assertEquals(1, fake.requests.size());

            // A path can be read again: retried, and the hash of the attempt that got through is checked.
            mode.set(2);
            fake.requests.clear();
            Path path = dir.resolve("hello.txt");
            Files.write(path, content);
            List<long[]> progress = new ArrayList<>();
            FileInfo file = client.files().upload(path, UploadOptions.builder()
                    .onProgress((sent, total) -> progress.add(new long[] {sent, total})).build());
            assertEquals(6, file.fileId());
            assertEquals(2, fake.requests.size());
            assertTrue(new String(fake.requests.get(1).body(), StandardCharsets.UTF_8).contains("filename=\"hello.txt\""));
            assertArrayEquals(new long[] {11, 11}, progress.get(progress.size() - 1));
        }
    }

    /** A fake account's file list: {@code GET /files} by page or by {@code before_id}, {@code DELETE /files/{id}}. */
    private static FakeServer filesFake(java.util.NavigableSet<Long> ids) throws IOException {
        return new FakeServer((ex, n) -> {
            String path = ex.getRequestURI().getPath();
            if (ex.getRequestMethod().equals("DELETE")) {
                ids.remove(Long.parseLong(path.substring(path.lastIndexOf('/') + 1)));
                FakeServer.json(ex, 200, "{\"success\":true}");
                return;
            }
            java.util.Map<String, Long> q = new java.util.HashMap<>();
            for (String pair : ex.getRequestURI().getQuery().split("&")) q.put(pair.split("=")[0], Long.parseLong(pair.split("=")[1]));
            int limit = q.get("limit").intValue();
            List<Long> newestFirst = new ArrayList<>(q.containsKey("before_id") ? ids.headSet(q.get("before_id"), false).descendingSet()
                    : ids.descendingSet());
            int from = q.containsKey("page") ? (q.get("page").intValue() - 1) * limit : 0;
            List<Long> page = newestFirst.subList(Math.min(from, newestFirst.size()), Math.min(from + limit, newestFirst.size()));
            StringBuilder files = new StringBuilder();
            for (long id : page) files.append(files.length() == 0 ? "" : ",").append(FakeServer.file(id, "a", 1, "l"));
            boolean more = from + limit < newestFirst.size();
            FakeServer.json(ex, 200, "{\"success\":true,\"files\":[" + files + "],\"pagination\":{\"page\":"
                    + (q.containsKey("before_id") ? "null" : q.getOrDefault("page", 1L)) + ",\"limit\":" + limit
                    + ",\"total\":" + ids.size() + ",\"pages\":" + (ids.size() + limit - 1) / limit
                    + ",\"next_before_id\":" + (more ? page.get(page.size() - 1) : "null") + "}}");
        });
    }

    @Test
    void iteratePagesByBeforeIdSoDeletingEveryFileItYieldsSkipsNone() throws Exception {
        java.util.NavigableSet<Long> ids = new java.util.concurrent.ConcurrentSkipListSet<>();
        for (long id = 1; id <= 7; id++) ids.add(id);
        try (FakeServer fake = filesFake(ids); FileshareClient client = fake.client().build()) {
            List<Long> yielded = new ArrayList<>();
            for (FileInfo f : client.files().iterate(3)) {
                yielded.add(f.fileId());
                client.files().delete(f.fileId());
            }
            assertEquals(List.of(7L, 6L, 5L, 4L, 3L, 2L, 1L), yielded);
            assertTrue(ids.isEmpty(), "left: " + ids);
            assertEquals(List.of("/api/v1/files?limit=3", "/api/v1/files?before_id=5&limit=3", "/api/v1/files?before_id=2&limit=3"),
                    fake.requests.stream().filter(r -> r.method().equals("GET")).map(FakeServer.Seen::path).toList());

            // By page numbers the same loop skips files: page 2 of what is left is not what followed page 1.
            for (long id = 1; id <= 7; id++) ids.add(id);
            List<Long> byPage = new ArrayList<>();
            for (int page = 1; ; page++) {
                FileList list = client.files().list(page, 3);
                for (FileInfo f : list.files()) {
                    byPage.add(f.fileId());
                    client.files().delete(f.fileId());
                }
                if (list.pagination().nextBeforeId() == null) break;
            }
            assertEquals(List.of(7L, 6L, 5L, 1L), byPage);
            assertEquals(java.util.Set.of(4L, 3L, 2L), ids);
        }
    }

    @Test
    void listAndListBeforeReadThePagination() throws Exception {
        java.util.NavigableSet<Long> ids = new java.util.TreeSet<>(List.of(10L, 20L, 30L, 40L, 50L));
        try (FakeServer fake = filesFake(ids); FileshareClient client = fake.client().build()) {
            FileList first = client.files().list(1, 2);
            assertEquals(new Pagination(1L, 2, 5, 3, 40L), first.pagination());
            assertEquals("/api/v1/files?page=1&limit=2", fake.requests.get(0).path());
            FileList next = client.files().listBefore(first.pagination().nextBeforeId(), 2);
            assertEquals(List.of(30L, 20L), next.files().stream().map(FileInfo::fileId).toList());
            assertNull(next.pagination().page(), "no page number applies");
            assertEquals(20L, next.pagination().nextBeforeId());
            assertEquals("/api/v1/files?before_id=40&limit=2", fake.requests.get(1).path());
            FileList last = client.files().listBefore(20, 2);
            assertEquals(List.of(10L), last.files().stream().map(FileInfo::fileId).toList());
            assertNull(last.pagination().nextBeforeId());
            assertEquals(new Pagination(2, 20, 1, 1), new Pagination(2L, 20, 1, 1, null), "the constructor of earlier versions");
            assertEquals(50, client.files().iterate().iterator().next().fileId());
            assertEquals("/api/v1/files?limit=100", fake.requests.get(fake.requests.size() - 1).path(), "iterate(): 100 a request");
        }
    }

    @Test
    void iterateStopsOnANextBeforeIdThatDoesNotGoDown() throws Exception {
        try (FakeServer fake = new FakeServer((ex, n) -> FakeServer.json(ex, 200, "{\"success\":true,\"files\":["
                + FakeServer.file(5, "a", 1, "l") + "],\"pagination\":{\"page\":null,\"limit\":1,\"total\":9,\"pages\":9,"
                + "\"next_before_id\":5}}"));
             FileshareClient client = fake.client().build()) {
            Iterator<FileInfo> it = client.files().iterate(1).iterator();
            assertEquals(5, it.next().fileId());
            // The page before 5 points at 5 again: an error, not an endless loop.
            FileshareException e = assertThrows(FileshareException.class, it::next);
            assertTrue(e.getMessage().contains("next_before_id 5 does not go below 5"), e.getMessage());
            assertEquals("/api/v1/files?before_id=5&limit=1", fake.requests.get(1).path());
        }
    }

    @Test
    void aServerWithoutNextBeforeIdIsIteratedByPageNeverYieldingAFileTwice() throws Exception {
        // Page 1 holds 3, 2; then a new upload shifts the pages: page 2 holds 2, 1.
        try (FakeServer fake = new FakeServer((ex, n) -> {
            String q = ex.getRequestURI().getQuery();
            String files = !q.contains("page=") ? FakeServer.file(3, "a", 1, "l") + "," + FakeServer.file(2, "a", 1, "l")
                    : q.contains("page=2") ? FakeServer.file(2, "a", 1, "l") + "," + FakeServer.file(1, "a", 1, "l")
                    : FakeServer.file(0, "a", 1, "l");
            FakeServer.json(ex, 200, "{\"success\":true,\"files\":[" + files + "],\"pagination\":{\"page\":1,\"limit\":2,\"total\":5,\"pages\":3}}");
        }); FileshareClient client = fake.client().build()) {
            List<Long> ids = new ArrayList<>();
            for (FileInfo f : client.files().iterate(2)) ids.add(f.fileId());
            assertEquals(List.of(3L, 2L, 1L, 0L), ids);
            assertEquals(List.of("/api/v1/files?limit=2", "/api/v1/files?page=2&limit=2", "/api/v1/files?page=3&limit=2"),
                    fake.requests.stream().map(FakeServer.Seen::path).toList());
        }
    }

    @Test
    void asyncCallsFailWithTheSameExceptions() throws Exception {
        try (FakeServer fake = new FakeServer((ex, n) -> FakeServer.json(ex, 404, FakeServer.error("not_found", "no")));
             FileshareClient client = fake.client().build()) {
            CompletionException e = assertThrows(CompletionException.class, () -> client.files().getAsync(9).join());
            assertInstanceOf(NotFoundException.class, e.getCause());
            assertInstanceOf(NotFoundException.class, FileshareClient.unwrap(e));
        }
    }

    @Test
    void resumableForcedOnAServerWithoutTusIsAConfigurationError() throws Exception {
        try (FakeServer fake = new FakeServer((ex, n) -> FakeServer.json(ex, 404, FakeServer.error("not_found", "No route")));
             FileshareClient client = fake.client().build()) {
            assertFalse(client.supportsResumableUploads());
            assertThrows(ConfigurationException.class,
                    () -> client.files().upload(new byte[10], UploadOptions.builder().resumable(true).build()));
            assertNull(fake.requests.get(0).header("Authorization"), "OPTIONS is sent without the key");
        }
    }

    @Test
    void unknownFieldsSentAsNullAreKeptNotDropped() throws Exception {
        String stats = "{\"success\":true,\"stats\":{\"total_files\":1,\"total_size\":2,\"total_downloads\":3,"
                + "\"uploads_today\":4,\"future_stat\":null,\"other_stat\":6},\"limits\":{\"max_file_size\":10,\"daily_uploads\":11,"
                + "\"requests_per_minute\":12,\"requests_per_day\":13,\"future_limit\":null},\"plan\":\"pro\",\"notice\":null}";
        String file = FakeServer.file(3, "a".repeat(64), 1, "http://x/download/t");
        String withNull = file.substring(0, file.length() - 1) + ",\"expires_at\":null,\"archived_at\":null,\"tags\":[\"x\",null]}";
        try (FakeServer fake = new FakeServer((ex, n) -> {
            String path = ex.getRequestURI().getPath();
            if (path.endsWith("/stats")) FakeServer.json(ex, 200, stats);
            else if (path.endsWith("/files/3")) FakeServer.json(ex, 200, "{\"success\":true,\"file\":" + withNull + "}");
            else FakeServer.json(ex, 200, "{\"success\":true,\"files\":[" + withNull + "],"
                    + "\"pagination\":{\"page\":1,\"limit\":20,\"total\":1,\"pages\":1}}");
        }); FileshareClient client = fake.client().build()) {
            AccountStats s = client.stats();
            assertTrue(s.stats().extra().containsKey("future_stat"), "stats: " + s.stats().extra());
            assertNull(s.stats().extra().get("future_stat"));
            assertEquals(6, s.stats().extra().get("other_stat"));
            assertEquals(List.of("future_stat", "other_stat"), List.copyOf(s.stats().extra().keySet()));
            assertTrue(s.limits().extra().containsKey("future_limit"), "limits: " + s.limits().extra());
            assertTrue(s.extra().containsKey("notice"), "top level: " + s.extra());
            assertNull(s.extra().get("notice"));
            assertThrows(UnsupportedOperationException.class, () -> s.stats().extra().put("x", 1));

            for (FileInfo f : List.of(client.files().get(3), client.files().list().files().get(0))) {
                assertTrue(f.extra().containsKey("archived_at"), "file: " + f.extra());
                assertNull(f.extra().get("archived_at"));
                assertFalse(f.extra().containsKey("expires_at"), "a known field: " + f.extra());
                assertNull(f.expiresAt());
                assertNull(f.expiresAtTime());
                assertEquals(java.util.Arrays.asList("x", null), f.extra().get("tags"));
                assertEquals(3, f.fileId());
                assertThrows(UnsupportedOperationException.class, () -> f.extra().remove("archived_at"));
            }
        }
    }

    @Test
    void aSuccessThatIsNotJsonCarriesStatusAndRequestId() throws Exception {
        try (FakeServer fake = new FakeServer((ex, n) -> {
            ex.getResponseHeaders().set("X-Request-Id", "req-not-json");
            byte[] page = "<html>a proxy's page</html>".getBytes(StandardCharsets.UTF_8);
            ex.getResponseHeaders().set("Content-Type", "text/html");
            ex.sendResponseHeaders(200, page.length);
            try (OutputStream out = ex.getResponseBody()) {
                out.write(page);
            }
        }); FileshareClient client = fake.client().build()) {
            FileshareException e = assertThrows(FileshareException.class, client::stats);
            assertEquals(FileshareException.class, e.getClass());
            assertEquals(200, e.status().orElseThrow());
            assertEquals("req-not-json", e.requestId());
            assertNull(e.code());
            assertTrue(e.getMessage().contains("not JSON"), e.getMessage());
            assertEquals(1, fake.requests.size(), "not retried");
        }
    }

    /** Writes {@code body} in {@code pieces} parts, {@code pauseMs} apart: slow, but never idle for long. */
    private static void trickle(com.sun.net.httpserver.HttpExchange ex, byte[] body, int pieces, long pauseMs) throws IOException {
        ex.sendResponseHeaders(200, body.length);
        OutputStream out = ex.getResponseBody();
        int step = (body.length + pieces - 1) / pieces;
        for (int at = 0; at < body.length; at += step) {
            try {
                Thread.sleep(pauseMs);
            } catch (InterruptedException e) {
                throw new IOException(e);
            }
            out.write(body, at, Math.min(step, body.length - at));
            out.flush();
        }
        out.close();
    }

    @Test
    void aTransferLongerThanTheTimeoutSucceedsWhileBytesKeepMoving() throws Exception {
        Duration timeout = Duration.ofMillis(400);
        long timeoutNanos = timeout.toNanos();
        byte[] content = new byte[10 * 64 * 1024];
        new java.util.Random(3).nextBytes(content);
        String sha = Sha256.hex(java.security.MessageDigest.getInstance("SHA-256").digest(content));
        try (FakeServer fake = new FakeServer((ex, n) -> {
            String path = ex.getRequestURI().getPath();
            if (path.endsWith("/stats")) {
                ex.getResponseHeaders().set("Content-Type", "application/json");
                trickle(ex, STATS.getBytes(StandardCharsets.UTF_8), 8, 150); // about 1.2 s
            } else if (path.startsWith("/download/")) {
                if (FakeServer.grant(ex)) return;
                ex.getResponseHeaders().set("ETag", "\"" + sha + "\"");
                trickle(ex, content, 10, 150); // about 1.5 s
            } else {
                FakeServer.json(ex, 201, "{\"success\":true," + FakeServer.file(8, sha, content.length, "http://x/download/t").substring(1));
            }
        }); FileshareClient client = fake.client().maxRetries(0).timeout(timeout).build()) {
            // A JSON answer whose body trickles in.
            long start = System.nanoTime();
            assertEquals(1, client.stats().stats().totalFiles());
            assertTrue(System.nanoTime() - start > 2 * timeoutNanos, "the answer took longer than the timeout");

            // A download whose body trickles in.
            start = System.nanoTime();
            Path dest = dir.resolve("slow.bin");
            client.download(fake.origin() + "/download/slow", dest);
            assertTrue(System.nanoTime() - start > 2 * timeoutNanos, "the download took longer than the timeout");
            assertArrayEquals(content, Files.readAllBytes(dest));

            // An upload whose source yields a 64 KiB block every 150 ms (about 1.5 s in all).
            java.io.InputStream slow = new java.io.InputStream() {
                private int at;

                private void pace() throws IOException {
                    if (at % (64 * 1024) != 0 || at >= content.length) return;
                    try {
                        Thread.sleep(150);
                    } catch (InterruptedException e) {
                        throw new IOException(e);
                    }
                }

                @Override
                public int read() throws IOException {
                    pace();
                    return at < content.length ? content[at++] & 0xff : -1;
                }

                @Override
                public int read(byte[] b, int off, int len) throws IOException {
                    if (at >= content.length) return -1;
                    pace();
                    int n = Math.min(len, Math.min(content.length - at, 64 * 1024 - at % (64 * 1024)));
                    System.arraycopy(content, at, b, off, n);
                    at += n;
                    return n;
                }
            };
            start = System.nanoTime();
            FileInfo uploaded = client.files().upload(slow, UploadOptions.builder().size(content.length).build());
            assertTrue(System.nanoTime() - start > 2 * timeoutNanos, "the upload took longer than the timeout");
            assertEquals(8, uploaded.fileId());
            byte[] sent = fake.requests.get(fake.requests.size() - 1).body();
            String body = new String(sent, StandardCharsets.ISO_8859_1);
            assertTrue(body.contains(new String(content, StandardCharsets.ISO_8859_1)), "the whole content arrived");
        }
    }
}
