package dev.fileshare;

import static org.junit.jupiter.api.Assertions.*;

import java.net.http.HttpHeaders;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Issue 35, virus scanning, against a fake: the file record's {@code scan} in each status, the
 * errors {@code file_not_scannable} (403) and {@code scan_pending} (409, retried by downloads after
 * its {@code Retry-After}).
 */
class ScanFakeTest {
    @TempDir
    Path dir;

    private static final String SHA = "a".repeat(64);

    private static String fileWithScan(long id, String scanJson) {
        String file = FakeServer.file(id, SHA, 68, "http://127.0.0.1:1/download/t" + id);
        return file.substring(0, file.length() - 1) + (scanJson == null ? "" : ",\"scan\":" + scanJson) + "}";
    }

    private static FileInfo parse(String scanJson) throws Exception {
        return Json.fileInfo(Json.MAPPER.readTree(fileWithScan(1, scanJson)));
    }

    @Test
    void theConstantsAreTheApisStatuses() {
        assertEquals(List.of("pending", "clean", "infected", "error", "skipped"), List.of(FileScan.STATUS_PENDING, FileScan.STATUS_CLEAN,
                FileScan.STATUS_INFECTED, FileScan.STATUS_ERROR, FileScan.STATUS_SKIPPED));
    }

    @ParameterizedTest
    @ValueSource(strings = {"pending", "clean", "infected", "error", "skipped"})
    void parsesEachStatus(String status) throws Exception {
        boolean infected = status.equals("infected");
        boolean pending = status.equals("pending");
        String signature = infected ? "\"Win.Test.EICAR_HDB-1\"" : "null";
        String at = pending ? "null" : "\"2026-11-27 18:00:05\"";
        FileInfo file = parse("{\"status\":\"" + status + "\",\"signature\":" + signature + ",\"scanned_at\":" + at + "}");
        FileScan scan = file.scan();
        assertNotNull(scan);
        assertEquals(status, scan.status());
        assertEquals(infected ? "Win.Test.EICAR_HDB-1" : null, scan.signature());
        assertEquals(pending ? null : "2026-11-27 18:00:05", scan.scannedAt());
        assertEquals(pending ? null : OffsetDateTime.of(2026, 11, 27, 18, 0, 5, 0, ZoneOffset.UTC), scan.scannedAtTime());
        assertEquals(pending, scan.isPending());
        assertEquals(status.equals("clean"), scan.isClean());
        assertEquals(infected, scan.isInfected());
        assertEquals(Map.of(), scan.extra());
        assertEquals(Map.of(), file.extra(), "scan is no unknown field");
        assertEquals(new FileScan(status, scan.signature(), scan.scannedAt(), Map.of()), scan);
    }

    @Test
    void nullWhenTheServerDoesNotScanOrSendsNone() throws Exception {
        FileInfo off = parse("null");
        assertNull(off.scan(), "scan: null, a server that does not scan");
        assertEquals(Map.of(), off.extra(), "a null scan is not kept as an unknown field");
        assertNull(parse(null).scan(), "an older server sends none");
        assertNull(parse("\"clean\"").scan(), "not an object");
    }

    @Test
    void aStatusAndFieldsAddedLaterAreKept() throws Exception {
        FileScan later = parse("{\"status\":\"quarantined\",\"signature\":null,\"scanned_at\":null,\"engine\":\"clamav 1.4\"}").scan();
        assertEquals("quarantined", later.status());
        assertFalse(later.isPending() || later.isClean() || later.isInfected());
        assertEquals(Map.of("engine", "clamav 1.4"), later.extra());
        assertNull(later.scannedAtTime());
        Map<String, Object> withNull = new LinkedHashMap<>();
        withNull.put("k", null);
        assertNull(new FileScan("clean", null, null, null).signature());
        assertEquals(Map.of(), new FileScan("clean", null, null, null).extra(), "null extra: empty");
        assertTrue(new FileScan("clean", null, null, withNull).extra().containsKey("k"));
    }

    @Test
    void theConstructorsFromBeforeHaveNoScan() {
        FileSource api = new FileSource(FileSource.TYPE_API, null, Map.of());
        FileInfo withSource = new FileInfo(5, "a", 1, null, 0, null, null, null, null, api, Map.of());
        assertNull(withSource.scan());
        assertEquals(api, withSource.source());
        assertNull(new FileInfo(5, "a", 1, null, 0, null, null, null, null, Map.of()).scan());
        assertNull(new FileInfo(5, "a", 1, null, 0, null, null, null, Map.of()).scan());
        FileScan clean = new FileScan(FileScan.STATUS_CLEAN, null, "2026-11-27 18:00:05", Map.of());
        FileInfo full = new FileInfo(5, "a", 1, null, 0, null, null, null, null, api, clean, Map.of());
        assertEquals(clean, full.scan());
        assertNotEquals(withSource, full, "equals() compares the scan");
    }

    @Test
    void theFileRecordsOfEveryCallCarryTheScan() throws Exception {
        String infected = "{\"status\":\"infected\",\"signature\":\"Fileshare.Test.EICAR.UNOFFICIAL\",\"scanned_at\":\"2026-11-27 18:00:05\"}";
        try (FakeServer fake = new FakeServer((ex, n) -> {
            String path = ex.getRequestURI().getPath();
            if (path.equals("/api/v1/files/7")) {
                FakeServer.json(ex, 200, "{\"success\":true,\"file\":" + fileWithScan(7, infected) + "}");
            } else {
                FakeServer.json(ex, 200, "{\"success\":true,\"files\":[" + fileWithScan(8, "{\"status\":\"pending\",\"signature\":null,"
                        + "\"scanned_at\":null}") + "," + fileWithScan(9, "null") + "],\"pagination\":{\"page\":1,\"limit\":20,\"total\":2,\"pages\":1}}");
            }
        }); FileshareClient client = fake.client().build()) {
            FileInfo got = client.files().get(7);
            assertTrue(got.scan().isInfected());
            assertEquals("Fileshare.Test.EICAR.UNOFFICIAL", got.scan().signature());
            FileList list = client.files().list(1, 20);
            assertTrue(list.files().get(0).scan().isPending());
            assertNull(list.files().get(1).scan());
        }
    }

    private static HttpHeaders headers(String... pairs) {
        Map<String, List<String>> map = new HashMap<>();
        for (int i = 0; i + 1 < pairs.length; i += 2) map.put(pairs[i], List.of(pairs[i + 1]));
        return HttpHeaders.of(map, (a, b) -> true);
    }

    @Test
    void fileNotScannableIsALimitAndScanPendingARetryableConflict() {
        FileshareException notScannable = Errors.fromResponse(403, headers(), FakeServer.error("file_not_scannable", "Too large to scan."));
        assertInstanceOf(LimitExceededException.class, notScannable);
        assertEquals("file_not_scannable", notScannable.code());
        assertFalse(Retry.isRetryable(notScannable));
        assertFalse(Retry.nothingWasDone(notScannable));

        FileshareException pending = Errors.fromResponse(409, headers("Retry-After", "10", "X-Request-Id", "req-9"),
                FakeServer.error("scan_pending", "The file has not been scanned for malware yet; try again shortly."));
        ScanPendingException e = assertInstanceOf(ScanPendingException.class, pending);
        assertInstanceOf(BadRequestException.class, e, "caught where the other 409s are");
        assertEquals(409, e.status().orElseThrow());
        assertEquals("scan_pending", e.code());
        assertEquals(10, e.retryAfter().orElseThrow().toSeconds());
        assertEquals("req-9", e.requestId());
        assertTrue(Retry.isRetryable(e));
        assertTrue(Retry.nothingWasDone(e), "the link counted nothing");
        assertEquals(10_000, new Retry(2, ms -> {}, () -> 0.5).delayMillis(0, e), "after the Retry-After");
        // Another 409 stays a plain BadRequestException, not retried.
        FileshareException other = Errors.fromResponse(409, headers(), FakeServer.error("default_link_required", "No."));
        assertFalse(other instanceof ScanPendingException);
        assertFalse(Retry.isRetryable(other));
    }

    @Test
    void anUploadTooLargeToScanIsRefusedWithALimitExceededException() throws Exception {
        try (FakeServer fake = new FakeServer((ex, n) -> FakeServer.json(ex, 403, FakeServer.error("file_not_scannable",
                "The file is larger than the 26214400 bytes the virus scanner can scan."))); FileshareClient client = fake.client().build()) {
            LimitExceededException e = assertThrows(LimitExceededException.class,
                    () -> client.files().upload("x".getBytes(StandardCharsets.UTF_8)));
            assertEquals("file_not_scannable", e.code());
            assertEquals(1, fake.requests.size(), "not retried");
        }
    }

    private static final byte[] DATA = "the scanned bytes".getBytes(StandardCharsets.UTF_8);

    private static String sha(byte[] data) throws Exception {
        return Sha256.hex(java.security.MessageDigest.getInstance("SHA-256").digest(data));
    }

    private static void pending(com.sun.net.httpserver.HttpExchange ex) throws java.io.IOException {
        FakeServer.json(ex, 409, FakeServer.error("scan_pending", "The file has not been scanned for malware yet; try again shortly."),
                "Retry-After", "10");
    }

    @Test
    void aDownloadWaitsOutScanPendingThenGetsTheFile() throws Exception {
        String sha = sha(DATA);
        AtomicInteger posts = new AtomicInteger();
        try (FakeServer fake = new FakeServer((ex, n) -> {
            if (ex.getRequestMethod().equals("POST") && posts.incrementAndGet() <= 2) {
                pending(ex);
            } else if (!FakeServer.grant(ex)) {
                ex.getResponseHeaders().set("ETag", "\"" + sha + "\"");
                ex.sendResponseHeaders(200, DATA.length);
                ex.getResponseBody().write(DATA);
            }
        }); FileshareClient client = fake.client().build()) {
            Path dest = dir.resolve("a.txt");
            DownloadResult result = client.download(fake.origin() + "/download/tok", dest);
            assertEquals(DATA.length, result.size());
            assertArrayEquals(DATA, Files.readAllBytes(dest));
            assertEquals(List.of(10_000L, 10_000L), fake.sleeps, "the Retry-After, twice (maxRetries 2)");
            assertEquals(3, posts.get());
        }
    }

    @Test
    void aGrantThatAnswersScanPendingIsAskedAgain() throws Exception {
        String sha = sha(DATA);
        AtomicInteger gets = new AtomicInteger();
        try (FakeServer fake = new FakeServer((ex, n) -> {
            if (FakeServer.grant(ex)) return;
            if (gets.incrementAndGet() == 1) {
                pending(ex);
                return;
            }
            ex.getResponseHeaders().set("ETag", "\"" + sha + "\"");
            ex.sendResponseHeaders(200, DATA.length);
            ex.getResponseBody().write(DATA);
        }); FileshareClient client = fake.client().build()) {
            Path dest = dir.resolve("b.txt");
            client.download(fake.origin() + "/download/tok", dest);
            assertArrayEquals(DATA, Files.readAllBytes(dest));
            assertEquals(List.of(10_000L), fake.sleeps);
            assertEquals(List.of("POST", "GET", "GET"), fake.requests.stream().map(FakeServer.Seen::method).toList(),
                    "the same grant, one download counted");
        }
    }

    @Test
    void aFileStillPendingAfterTheRetriesThrowsScanPendingException() throws Exception {
        try (FakeServer fake = new FakeServer((ex, n) -> pending(ex)); FileshareClient client = fake.client().maxRetries(1).build()) {
            ScanPendingException e = assertThrows(ScanPendingException.class,
                    () -> client.download(fake.origin() + "/download/tok", dir.resolve("c.txt")));
            assertEquals(10, e.retryAfter().orElseThrow().toSeconds());
            assertEquals(2, fake.requests.size(), "one retry");
            assertEquals(List.of(10_000L), fake.sleeps);
        }
        try (FakeServer fake = new FakeServer((ex, n) -> pending(ex)); FileshareClient client = fake.client().maxRetries(0).build()) {
            assertThrows(ScanPendingException.class, () -> client.download(fake.origin() + "/download/tok", dir.resolve("d.txt")));
            assertEquals(1, fake.requests.size(), "maxRetries(0): at once");
            assertEquals(List.of(), fake.sleeps);
        }
    }

    @Test
    void anUnscannableFilesLinkIsALimitExceededException() throws Exception {
        try (FakeServer fake = new FakeServer((ex, n) -> FakeServer.json(ex, 403, FakeServer.error("file_not_scannable", "Too large to scan.")));
             FileshareClient client = fake.client().build()) {
            LimitExceededException e = assertThrows(LimitExceededException.class,
                    () -> client.download(fake.origin() + "/download/tok", dir.resolve("e.txt")));
            assertEquals("file_not_scannable", e.code());
            assertEquals(1, fake.requests.size());
        }
    }
}
