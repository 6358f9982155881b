package dev.fileshare;

import static org.junit.jupiter.api.Assertions.*;

import java.io.ByteArrayInputStream;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Every call against the real server, with the pro account. */
class ProAccountIT {
    static TestServer server;
    static FileshareClient client;

    @TempDir
    Path dir;

    @BeforeAll
    static void start() {
        server = TestServer.get();
        client = server.client("pro").build();
    }

    @AfterAll
    static void stop() {
        client.close();
    }

    static byte[] random(int size, long seed) {
        byte[] b = new byte[size];
        new Random(seed).nextBytes(b);
        return b;
    }

    static String sha(byte[] b) throws Exception {
        return Sha256.hex(MessageDigest.getInstance("SHA-256").digest(b));
    }

    @Test
    void uploadGetListDeleteAPath() throws Exception {
        byte[] content = random(100_000, 1);
        Path path = dir.resolve("photo.jpg");
        Files.write(path, content);
        List<long[]> progress = new ArrayList<>();
        FileInfo file = client.files().upload(path, UploadOptions.builder()
                .onProgress((sent, total) -> progress.add(new long[] {sent, total})).build());
        assertEquals("photo.jpg", file.filename());
        assertEquals(100_000, file.size());
        assertEquals("image/jpeg", file.contentType());
        assertEquals(sha(content), file.sha256());
        assertTrue(file.publicLink().startsWith(server.serverUrl + "/download/"), file.publicLink());
        assertNotNull(file.uploadedAt());
        assertTrue(Math.abs(java.time.Duration.between(file.uploadedAt().toInstant(), java.time.Instant.now()).toMinutes()) < 5);
        long previous = -1;
        for (long[] p : progress) {
            assertTrue(p[0] >= previous, "progress never goes back");
            assertEquals(100_000, p[1]);
            previous = p[0];
        }
        assertEquals(100_000, previous);

        assertEquals(file, client.files().get(file.fileId()));
        FileList page = client.files().list(1, 100);
        assertTrue(page.files().stream().anyMatch(f -> f.fileId() == file.fileId()));
        assertEquals(1, page.pagination().page());
        assertEquals(100, page.pagination().limit());
        assertTrue(page.pagination().total() >= 1);

        client.files().delete(file.fileId());
        NotFoundException gone = assertThrows(NotFoundException.class, () -> client.files().get(file.fileId()));
        assertEquals("not_found", gone.code());
        assertNotNull(gone.requestId());
        assertThrows(NotFoundException.class, () -> client.files().delete(file.fileId()));
        assertThrows(NotFoundException.class, () -> client.download(file, dir.resolve("gone.jpg")));
    }

    @Test
    void uploadBytesAndStreamsOfKnownAndUnknownLength() throws Exception {
        byte[] content = "hello, stream\n".getBytes(StandardCharsets.UTF_8);
        FileInfo bytes = client.files().upload(content, UploadOptions.builder().filename("b.txt").contentType("text/plain").build());
        FileInfo unknown = client.files().upload(new ByteArrayInputStream(content), UploadOptions.builder().filename("s.txt").build());
        FileInfo known = client.files().upload(new ByteArrayInputStream(content), UploadOptions.builder().size(content.length).build());
        FileInfo empty = client.files().upload(new byte[0], UploadOptions.builder().filename("empty.log").build());
        for (FileInfo f : List.of(bytes, unknown, known)) {
            assertEquals(content.length, f.size());
            assertEquals(sha(content), f.sha256());
        }
        assertEquals("text/plain", bytes.contentType());
        assertEquals("file", known.filename());
        assertEquals(0, empty.size());
        Path out = dir.resolve("empty.out");
        assertEquals(0, client.download(empty, out).size());
        assertTrue(Files.exists(out));
        for (FileInfo f : List.of(bytes, unknown, known, empty)) client.files().delete(f.fileId());
    }

    @Test
    void fileNamesKeepTheirCharacters() throws Exception {
        FileInfo f = client.files().upload("x".getBytes(StandardCharsets.UTF_8),
                UploadOptions.builder().filename("résumé \"final\".pdf").build());
        assertEquals("résumé \"final\".pdf", f.filename());
        assertEquals("application/pdf", f.contentType());
        client.files().delete(f.fileId());
    }

    @Test
    void resumableUploadsInChunksFromAPathAndAStream() throws Exception {
        assertTrue(client.supportsResumableUploads());
        byte[] content = random(700_000, 2);
        Path path = dir.resolve("big.bin");
        Files.write(path, content);
        List<Long> progress = new ArrayList<>();
        FileInfo viaPath = client.files().upload(path, UploadOptions.builder().resumable(true).chunkSize(256 * 1024)
                .onProgress((sent, total) -> progress.add(sent)).build());
        assertEquals(sha(content), viaPath.sha256());
        assertEquals("big.bin", viaPath.filename());
        assertEquals(700_000L, progress.get(progress.size() - 1));
        // A stream of unknown length: a deferred length, declared with the last chunk.
        FileInfo viaStream = client.files().upload(new ByteArrayInputStream(content),
                UploadOptions.builder().resumable(true).chunkSize(300_000).filename("stream.bin").build());
        assertEquals(sha(content), viaStream.sha256());
        // A stream that ends exactly on a chunk boundary, and an empty one.
        byte[] even = random(2 * 131_072, 3);
        assertEquals(sha(even), client.files().upload(new ByteArrayInputStream(even),
                UploadOptions.builder().resumable(true).chunkSize(131_072).build()).sha256());
        FileInfo empty = client.files().upload(new byte[0], UploadOptions.builder().resumable(true).build());
        assertEquals(0, empty.size());
        // Above the threshold, uploads are resumable on their own.
        try (FileshareClient small = server.client("pro").resumableThreshold(1000).chunkSize(64 * 1024).build()) {
            FileInfo auto = small.files().upload(random(200_000, 4), UploadOptions.builder().filename("auto.bin").build());
            assertEquals(sha(random(200_000, 4)), auto.sha256());
            small.files().delete(auto.fileId());
        }
        for (FileInfo f : List.of(viaPath, viaStream, empty)) client.files().delete(f.fileId());
    }

    @Test
    void iterateYieldsEveryFileOnceEvenWhenUploadsShiftThePages() throws Exception {
        try (FileshareClient own = server.client("pro").build()) {
            Set<Long> before = new HashSet<>();
            for (FileInfo f : own.files().iterate(100)) before.add(f.fileId());
            List<Long> mine = new ArrayList<>();
            for (int i = 0; i < 7; i++) {
                mine.add(own.files().upload(("n" + i).getBytes(StandardCharsets.UTF_8), UploadOptions.builder().filename("it" + i + ".txt").build()).fileId());
            }
            List<Long> seen = new ArrayList<>();
            int n = 0;
            for (FileInfo f : own.files().iterate(2)) {
                seen.add(f.fileId());
                if (n++ == 1) {
                    // New uploads during the iteration push every file one page further.
                    mine.add(own.files().upload("late".getBytes(StandardCharsets.UTF_8)).fileId());
                    mine.add(own.files().upload("later".getBytes(StandardCharsets.UTF_8)).fileId());
                }
            }
            assertEquals(seen.size(), new HashSet<>(seen).size(), "no file twice: " + seen);
            assertTrue(seen.containsAll(mine.subList(0, 7)), "every file that was there");
            for (long id : mine) own.files().delete(id);
        }
    }

    @Test
    void statsKeepEveryField() {
        AccountStats stats = client.stats();
        assertEquals("pro", stats.plan());
        assertEquals(5L * 1024 * 1024 * 1024, stats.limits().maxFileSize());
        assertEquals(500, stats.limits().dailyUploads());
        assertEquals(6000, stats.limits().requestsPerMinute());
        assertTrue(stats.stats().totalFiles() >= 0);
        assertTrue(stats.stats().uploadsToday() >= 0);
    }

    @Test
    void downloadResumesWithRangeAndIfRangeAndVerifies() throws Exception {
        byte[] content = random(1_000_000, 5);
        FileInfo file = client.files().upload(content, UploadOptions.builder().filename("d.bin").build());
        Path dest = dir.resolve("d.bin");
        DownloadResult whole = client.download(file, dest);
        assertEquals(new DownloadResult(1_000_000, file.sha256(), 0), whole);
        assertArrayEquals(content, Files.readAllBytes(dest));
        assertEquals(1, client.files().get(file.fileId()).downloadCount());

        // A partial file is continued: a range from byte 400,000 does not count as a download.
        try (RandomAccessFile raf = new RandomAccessFile(dest.toFile(), "rw")) {
            raf.setLength(400_000);
        }
        List<Long> progress = new ArrayList<>();
        DownloadResult resumed = client.download(file, dest, DownloadOptions.builder().onProgress((d, t) -> progress.add(d)).build());
        assertEquals(400_000, resumed.resumedFrom());
        assertEquals(400_000L, progress.get(0));
        assertEquals(1_000_000L, progress.get(progress.size() - 1));
        assertArrayEquals(content, Files.readAllBytes(dest));
        assertEquals(1, client.files().get(file.fileId()).downloadCount(), "a resumed range is not a download");

        // By link only: a HEAD tells the ETag, then the rest comes.
        try (RandomAccessFile raf = new RandomAccessFile(dest.toFile(), "rw")) {
            raf.setLength(123_456);
        }
        assertEquals(123_456, client.download(file.publicLink(), dest).resumedFrom());
        assertArrayEquals(content, Files.readAllBytes(dest));

        // A partial file that is not this file's beginning: IntegrityException, then resume(false) fixes it.
        Files.write(dest, new byte[300_000]);
        IntegrityException bad = assertThrows(IntegrityException.class, () -> client.download(file, dest));
        assertEquals(file.sha256(), bad.expected());
        assertTrue(bad.getMessage().contains("resume(false)"), bad.getMessage());
        assertEquals(0, client.download(file, dest, DownloadOptions.builder().resume(false).build()).resumedFrom());
        assertArrayEquals(content, Files.readAllBytes(dest));
        client.files().delete(file.fileId());
    }

    @Test
    void asyncVariants() throws Exception {
        Path path = dir.resolve("async.txt");
        Files.writeString(path, "async");
        FileInfo file = client.files().uploadAsync(path, null).get();
        CompletableFuture<StatsResult> stats = client.statsAsync();
        CompletableFuture<FileList> list = client.files().listAsync(1, 10);
        assertEquals(file, client.files().getAsync(file.fileId()).get());
        assertEquals("pro", stats.get().plan());
        assertFalse(list.get().files().isEmpty());
        assertEquals(5, client.downloadAsync(file, dir.resolve("async.out"), null).get().size());
        assertEquals(file.sha256(), client.downloadAsync(file.publicLink(), dir.resolve("async2.out"), null).get().sha256());
        assertEquals(file.sha256(), client.files().uploadAsync(new ByteArrayInputStream("async".getBytes(StandardCharsets.UTF_8)), null)
                .thenApply(f -> {
                    client.files().delete(f.fileId());
                    return f.sha256();
                }).get());
        client.files().deleteAsync(file.fileId()).get();
        CompletionException e = assertThrows(CompletionException.class, () -> client.files().getAsync(file.fileId()).join());
        assertInstanceOf(NotFoundException.class, e.getCause());
    }

    @Test
    void badRequests() {
        BadRequestException e = assertThrows(BadRequestException.class, () -> client.files().list(1, 500));
        assertEquals(400, e.status().orElseThrow());
        assertEquals("invalid_parameter", e.code());
        assertTrue(e.getMessage().contains("limit"), e.getMessage());
        assertThrows(BadRequestException.class, () -> client.files().list(0, 10));
        assertThrows(BadRequestException.class, () -> client.files().get(0));
        assertThrows(BadRequestException.class, () -> client.files().delete(-1));
    }
}
