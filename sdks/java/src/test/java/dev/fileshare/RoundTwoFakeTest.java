package dev.fileshare;

import static org.junit.jupiter.api.Assertions.*;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.ResourceBundle;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** Issue 30 against the local fake: inspection, per-call options, logging, streams, cancellation, names. */
class RoundTwoFakeTest {
    private static final String FILE = "{\"success\":true,\"file\":" + FakeServer.file(5, "a".repeat(64), 3, "http://x/d/t") + "}";

    /** A System.Logger that keeps every line. */
    static final class Lines implements System.Logger {
        final List<String> lines = new CopyOnWriteArrayList<>();

        @Override
        public String getName() {
            return "dev.fileshare";
        }

        @Override
        public boolean isLoggable(Level level) {
            return true;
        }

        @Override
        public void log(Level level, ResourceBundle bundle, String msg, Throwable thrown) {
            lines.add(level + " " + msg);
        }

        @Override
        public void log(Level level, ResourceBundle bundle, String format, Object... params) {
            lines.add(level + " " + format);
        }
    }

    @Test
    void aBaseUrlWithoutApiV1IsAConfigurationErrorThatSaysWhatToAdd() {
        ConfigurationException e = assertThrows(ConfigurationException.class,
                () -> FileshareClient.builder().baseUrl("https://files.example.com").apiKey(TestKeys.FAKE_KEY).build());
        assertTrue(e.getMessage().contains("add /api/v1 (https://files.example.com/api/v1)"), e.getMessage());
        e = assertThrows(ConfigurationException.class,
                () -> FileshareClient.builder().baseUrl("https://files.example.com/api/").apiKey(TestKeys.FAKE_KEY).build());
        assertTrue(e.getMessage().contains("add /v1 (https://files.example.com/api/v1)"), e.getMessage());
        try (FileshareClient ok = FileshareClient.builder().baseUrl("https://files.example.com/api/v1/").apiKey(TestKeys.FAKE_KEY).build()) {
            assertEquals("https://files.example.com/api/v1", ok.baseUrl());
        }
    }

    @Test
    void everyErrorCarriesItsHeadersBodyRequestIdAndOptionalStatusAndRetryAfter() throws Exception {
        try (FakeServer fake = new FakeServer((ex, n) -> FakeServer.json(ex, 429, FakeServer.error("rate_limited", "slow"),
                "Retry-After", "3600", "X-Request-Id", "req-9", "RateLimit-Remaining", "0"));
             FileshareClient client = fake.client().build()) {
            RateLimitException e = assertThrows(RateLimitException.class, () -> client.files().get(1));
            assertEquals(OptionalInt.of(429), e.status());
            assertEquals(Duration.ofHours(1), e.retryAfter().orElseThrow());
            assertEquals("0", e.headers().firstValue("ratelimit-remaining").orElseThrow());
            assertEquals("rate_limited", e.body().orElseThrow().path("error").path("code").asText());
            assertTrue(e.getMessage().endsWith("(request id req-9)"), e.getMessage());
            @SuppressWarnings("deprecation")
            Integer old = e.statusCode();
            @SuppressWarnings("deprecation")
            Long seconds = e.retryAfterSeconds();
            assertEquals(429, old);
            assertEquals(3600L, seconds);
        }
        FileshareException none = new FileshareException("no answer");
        assertTrue(none.status().isEmpty());
        assertTrue(none.body().isEmpty());
        assertTrue(none.headers().map().isEmpty());
        assertEquals("no answer", none.getMessage());
    }

    @Test
    void anIdleTimeoutIsAnApiTimeoutExceptionUnderTheConnectionError() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        try (FakeServer fake = new FakeServer((ex, n) -> {
            try {
                release.await(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }); FileshareClient client = fake.client().maxRetries(0).build()) {
            RequestOptions quick = RequestOptions.builder().timeout(Duration.ofMillis(200)).build();
            APIConnectionException e = assertThrows(APIConnectionException.class, () -> client.files().get(1, quick));
            assertInstanceOf(APITimeoutException.class, e);
            assertTrue(e.getMessage().contains("200 ms"), e.getMessage());
        } finally {
            release.countDown();
        }
    }

    @Test
    void theRawResponseOfASuccessfulCallShowsRateLimitRemaining() throws Exception {
        String list = "{\"success\":true,\"files\":[],\"pagination\":{\"page\":1,\"limit\":10,\"total\":0,\"pages\":0,\"next_before_id\":null}}";
        try (FakeServer fake = new FakeServer((ex, n) -> FakeServer.json(ex, 200, ex.getRequestURI().getPath().endsWith("/files") ? list : FILE,
                "RateLimit-Remaining", "41", "RateLimit-Limit", "60", "X-Request-Id", "req-" + n));
             FileshareClient client = fake.client().build()) {
            RawResponse<FileInfo> raw = client.files().withRawResponse().get(5);
            assertEquals(200, raw.statusCode());
            assertEquals(41L, raw.rateLimitRemaining().orElseThrow());
            assertEquals(60L, raw.rateLimit().limit());
            assertEquals("req-1", raw.requestId().orElseThrow());
            assertEquals(5, raw.data().fileId());
            assertEquals("GET", raw.method());

            RawResponse<FileList> page = client.withRawResponse(c -> c.files().list(1, 10));
            assertEquals("41", page.header("RateLimit-Remaining").orElseThrow());
            assertEquals("req-2", page.requestId().orElseThrow());
            assertNull(client.files().withRawResponse().delete(5).data());
        }
    }

    @Test
    void perCallOptionsAndWithOptionsChangeOnlyTheirCalls() throws Exception {
        try (FakeServer fake = new FakeServer((ex, n) -> {
            if (n <= 2) FakeServer.json(ex, 503, FakeServer.error("service_unavailable", "busy"));
            else FakeServer.json(ex, 200, FILE);
        }); FileshareClient client = fake.client().maxRetries(2).build()) {
            RequestOptions once = RequestOptions.builder().maxRetries(0).header("X-Trace", "t-1").build();
            assertThrows(ServerException.class, () -> client.files().get(5, once));
            assertEquals(1, fake.requests.size(), "no retry for this call");
            assertEquals("t-1", fake.requests.get(0).header("X-Trace"));

            FileshareClient tagged = client.withOptions(o -> o.header("X-Tenant", "acme"));
            assertEquals(5, tagged.files().get(5).fileId()); // 503, then 200 after one retry
            assertEquals("acme", fake.requests.get(2).header("X-Tenant"));
            assertEquals(2, tagged.maxRetries());

            fake.requests.clear();
            client.files().get(5);
            assertNull(fake.requests.get(0).header("X-Tenant"), "the original client is unchanged");
            assertNull(fake.requests.get(0).header("X-Trace"));
            assertThrows(ConfigurationException.class, () -> RequestOptions.builder().header("Authorization", "Bearer x"));
            assertThrows(ConfigurationException.class, () -> RequestOptions.builder().header("Idempotency-Key", "k"));
        }
    }

    @Test
    void aPerCallIdempotencyKeyGoesOnTheUpload() throws Exception {
        byte[] data = "abc".getBytes(StandardCharsets.UTF_8);
        String sha = sha256(data);
        try (FakeServer fake = new FakeServer((ex, n) -> FakeServer.json(ex, 201,
                "{\"success\":true," + FakeServer.file(7, sha, 3, "http://x/d/t").substring(1)));
             FileshareClient client = fake.client().build()) {
            client.files().upload(data, UploadOptions.builder().resumable(false).build(),
                    RequestOptions.builder().idempotencyKey("invoice-42").build());
            assertEquals("invoice-42", fake.requests.get(0).header("Idempotency-Key"));
            client.files().upload(data, UploadOptions.builder().resumable(false).build());
            assertNotEquals("invoice-42", fake.requests.get(1).header("Idempotency-Key"));
        }
    }

    @Test
    void fileshareLogDebugLogsRequestsAndRetriesButNeverTheKey() throws Exception {
        Lines logger = new Lines();
        try (FakeServer fake = new FakeServer((ex, n) -> {
            if (n == 1) FakeServer.json(ex, 503, FakeServer.error("service_unavailable", "busy"));
            else FakeServer.json(ex, 200, FILE, "X-Request-Id", "req-7");
        })) {
            FileshareClient.Builder b = fake.client();
            b.env = name -> name.equals("FILESHARE_LOG") ? "debug" : null;
            b.logger = logger;
            try (FileshareClient client = b.build()) {
                client.files().get(5);
            }
            String all = String.join("\n", logger.lines);
            assertTrue(all.contains("GET " + fake.baseUrl() + "/files/5 -> 200"), all);
            assertTrue(all.contains("(request id req-7)"), all);
            assertTrue(all.contains("retry 1 of 2"), all);
            assertFalse(all.contains(TestKeys.FAKE_KEY), "the key is never logged");
            assertFalse(all.contains("Bearer"), all);

            Lines quiet = new Lines();
            FileshareClient.Builder q = fake.client();
            q.env = name -> null;
            q.logger = quiet;
            try (FileshareClient client = q.build()) {
                client.files().get(5);
            }
            assertEquals(List.of(), quiet.lines, "off without FILESHARE_LOG");

            Lines info = new Lines();
            FileshareClient.Builder i = fake.client();
            i.env = name -> name.equals("FILESHARE_LOG") ? "info" : null;
            i.logger = info;
            try (FileshareClient client = i.build()) {
                client.files().get(5);
            }
            assertFalse(String.join("\n", info.lines).contains("GET "), "info: no request lines");
        }
    }

    private static String sha256(byte[] data) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(data));
    }

    /** A fake link: its POST answers with a grant, the grant serves {@code data} with its ETag. */
    private static FakeServer linkServing(byte[] data) throws Exception {
        String sha = sha256(data);
        return new FakeServer((ex, n) -> {
            if (FakeServer.grant(ex)) return;
            ex.getResponseHeaders().set("ETag", "\"" + sha + "\"");
            ex.sendResponseHeaders(200, data.length);
            ex.getResponseBody().write(data);
        });
    }

    @Test
    void aLinksTokenIsNotLogged() throws Exception {
        Lines logger = new Lines();
        byte[] data = "x".getBytes(StandardCharsets.UTF_8);
        try (FakeServer fake = linkServing(data)) {
            FileshareClient.Builder b = fake.client();
            b.env = name -> name.equals("FILESHARE_LOG") ? "debug" : null;
            b.logger = logger;
            try (FileshareClient client = b.build()) {
                client.download(fake.origin() + "/d/secret-token", new ByteArrayOutputStream());
            }
            String all = String.join("\n", logger.lines);
            assertTrue(all.contains("POST " + fake.origin() + "/d/… -> 303"), all);
            assertFalse(all.contains("secret-token"), all);
        }
    }

    @Test
    void iterateGivesAStream() throws Exception {
        try (FakeServer fake = new FakeServer((ex, n) -> {
            String q = ex.getRequestURI().getQuery();
            String files = q.contains("before_id=2")
                    ? FakeServer.file(1, "a".repeat(64), 1, "http://x/d/1")
                    : FakeServer.file(3, "a".repeat(64), 1, "http://x/d/3") + "," + FakeServer.file(2, "a".repeat(64), 1, "http://x/d/2");
            String next = q.contains("before_id=2") ? "null" : "2";
            FakeServer.json(ex, 200, "{\"success\":true,\"files\":[" + files + "],\"pagination\":{\"page\":null,\"limit\":2,"
                    + "\"total\":3,\"pages\":2,\"next_before_id\":" + next + "}}");
        }); FileshareClient client = fake.client().build()) {
            assertEquals(List.of(3L, 2L, 1L), client.files().iterate(2).stream().map(FileInfo::fileId).collect(Collectors.toList()));
            assertEquals(3L, client.files().iterate(2).stream().findFirst().orElseThrow().fileId());
            assertEquals(3, fake.requests.size(), "findFirst fetched one page only");
            Iterable<FileInfo> old = client.files().iterate(2); // still an Iterable
            assertNotNull(old.iterator());
        }
    }

    @Test
    void aDownloadGoesIntoAnOutputStreamAndIsChecked() throws Exception {
        byte[] data = "hello, stream".getBytes(StandardCharsets.UTF_8);
        String sha = sha256(data);
        try (FakeServer fake = linkServing(data); FileshareClient client = fake.client().build()) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            DownloadResult result = client.download(fake.origin() + "/d/tok", out);
            assertArrayEquals(data, out.toByteArray());
            assertEquals(sha, result.sha256());
            assertEquals(data.length, result.size());
        }
    }

    @Test
    void cancellingAnAsyncUploadStopsTheTransfer() throws Exception {
        AtomicLong read = new AtomicLong();
        InputStream endless = new InputStream() {
            @Override
            public int read() {
                read.incrementAndGet();
                return 'x';
            }

            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                try {
                    Thread.sleep(5);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new java.io.InterruptedIOException();
                }
                java.util.Arrays.fill(b, off, off + len, (byte) 'x');
                read.addAndGet(len);
                return len;
            }
        };
        try (FakeServer fake = new FakeServer((ex, n) -> {
            InputStream in = ex.getRequestBody();
            in.transferTo(java.io.OutputStream.nullOutputStream());
        }); FileshareClient client = fake.client().maxRetries(0).build()) {
            CompletableFuture<FileInfo> upload = client.files().uploadAsync(endless, UploadOptions.builder().resumable(false).build());
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (read.get() < 1 << 20 && System.nanoTime() < deadline) Thread.sleep(10);
            assertTrue(read.get() >= 1 << 20, "the upload is under way");
            assertTrue(upload.cancel(true));
            assertTrue(upload.isCancelled());
            // The transfer stops within moments: the count settles (a loaded machine may take a little while).
            long before = -1;
            long after = read.get();
            for (int i = 0; i < 20 && after != before; i++) {
                Thread.sleep(400);
                before = after;
                after = read.get();
            }
            assertEquals(before, after, "the source is no longer read: the transfer stopped");
            Thread.sleep(400);
            assertEquals(after, read.get(), "still stopped");
        }
    }

    @Test
    void theStatsNamesAreTheOtherSdksAndTheOldNameStillCompiles() throws Exception {
        String stats = "{\"success\":true,\"stats\":{\"total_files\":1,\"total_size\":2,\"total_downloads\":3,\"uploads_today\":4,"
                + "\"storage_reserved\":0},\"limits\":{\"max_file_size\":10,\"daily_uploads\":11,\"requests_per_minute\":12,"
                + "\"requests_per_day\":13,\"max_storage\":null},\"plan\":\"pro\"}";
        try (FakeServer fake = new FakeServer((ex, n) -> {
            if (ex.getRequestMethod().equals("OPTIONS")) {
                ex.getResponseHeaders().set("Tus-Version", "1.0.0");
                ex.getResponseHeaders().set("Tus-Extension", "creation,termination,checksum");
                ex.getResponseHeaders().set("Tus-Checksum-Algorithm", "sha256");
                ex.getResponseHeaders().set("Tus-Max-Size", "1000");
                ex.sendResponseHeaders(204, -1);
            } else {
                FakeServer.json(ex, 200, stats);
            }
        }); FileshareClient client = fake.client().build()) {
            StatsResult result = client.stats();
            Stats inner = result.stats();
            Limits limits = result.limits();
            assertEquals(1, inner.totalFiles());
            assertEquals(10, limits.maxFileSize());
            @SuppressWarnings("deprecation")
            AccountStats old = client.stats();
            assertEquals("pro", old.plan());
            assertEquals(result, client.statsAsync().get(5, TimeUnit.SECONDS));
            assertEquals(new TusCapabilities(true, true, 1000L), client.resumableUploads());
            assertTrue(client.supportsResumableUploads());
            assertEquals(Map.of(), result.extra());
        }
    }
}
