package dev.fileshare;

import static org.junit.jupiter.api.Assertions.*;

import com.sun.net.httpserver.HttpExchange;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Random;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Resumable uploads against a fake tus 1.0.0 server: when the SDK switches to them, the
 * per-chunk {@code Upload-Checksum}, and the whole-file SHA-256 check at the end.
 */
class ResumableFakeTest {
    private static final String UPLOAD_PATH = "/api/v1/uploads/u1";

    @TempDir
    Path dir;

    private static byte[] content(int size) {
        byte[] b = new byte[size];
        new Random(11).nextBytes(b);
        return b;
    }

    private static byte[] digest(byte[] data, int from, int to) throws Exception {
        MessageDigest d = MessageDigest.getInstance("SHA-256");
        d.update(data, from, to - from);
        return d.digest();
    }

    private static String hex(byte[] data) throws Exception {
        return Sha256.hex(digest(data, 0, data.length));
    }

    /**
     * A fake of the server's {@code /uploads} (tus 1.0.0: creation, checksum with sha256) and of
     * {@code /files/upload} (multipart). The file record of {@code GET /uploads/{id}} claims
     * {@code claimedSha256}, or the SHA-256 of the bytes received when null.
     */
    private static final class TusFake {
        final ByteArrayOutputStream received = new ByteArrayOutputStream();
        final String claimedSha256;
        long length = -1;
        /** The Idempotency-Keys of the creations answered: a creation with one of them is replayed. */
        final java.util.Set<String> keys = new java.util.HashSet<>();
        /** Creations to answer 503 first. */
        int failCreations;
        /** Bytes the account may still store (-1: no quota): a PATCH past it is refused with 403. */
        long quota = -1;
        /** PATCHes to answer 503 (after taking the first chunk, when {@code failAfterFirst}). */
        int failPatches;
        boolean failAfterFirst;

        TusFake(String claimedSha256) {
            this.claimedSha256 = claimedSha256;
        }

        synchronized void handle(HttpExchange ex, int n) throws IOException {
            String method = ex.getRequestMethod();
            String path = ex.getRequestURI().getPath();
            ex.getResponseHeaders().set("Tus-Resumable", "1.0.0");
            if (method.equals("OPTIONS") && path.equals("/api/v1/uploads")) {
                ex.getResponseHeaders().set("Tus-Version", "1.0.0");
                ex.getResponseHeaders().set("Tus-Extension", "creation,creation-defer-length,termination,checksum");
                ex.getResponseHeaders().set("Tus-Checksum-Algorithm", "sha256");
                ex.sendResponseHeaders(204, -1);
            } else if (method.equals("POST") && path.equals("/api/v1/uploads")) {
                if (failCreations > 0) {
                    failCreations--;
                    FakeServer.json(ex, 503, FakeServer.error("service_unavailable", "busy"));
                    return;
                }
                String key = ex.getRequestHeaders().getFirst("Idempotency-Key");
                if (key != null && !keys.add(key)) {
                    ex.getResponseHeaders().set("Idempotent-Replayed", "true");
                } else {
                    length = Long.parseLong(ex.getRequestHeaders().getFirst("Upload-Length"));
                }
                ex.getResponseHeaders().set("Location", UPLOAD_PATH);
                ex.getResponseHeaders().set("Upload-Offset", "0");
                ex.sendResponseHeaders(201, -1);
            } else if (method.equals("HEAD") && path.equals(UPLOAD_PATH)) {
                ex.getResponseHeaders().set("Upload-Offset", Integer.toString(received.size()));
                if (length >= 0) ex.getResponseHeaders().set("Upload-Length", Long.toString(length));
                if (received.size() == length) ex.getResponseHeaders().set("Fileshare-File-Id", "42");
                ex.sendResponseHeaders(200, -1);
            } else if (method.equals("DELETE") && path.equals(UPLOAD_PATH)) {
                ex.sendResponseHeaders(204, -1);
            } else if (method.equals("GET") && path.equals(UPLOAD_PATH)) {
                byte[] bytes = received.toByteArray();
                String sha;
                try {
                    sha = claimedSha256 != null ? claimedSha256 : hex(bytes);
                } catch (Exception e) {
                    throw new IOException(e);
                }
                FakeServer.json(ex, 200, "{\"success\":true,\"upload\":{\"offset\":" + bytes.length + ",\"length\":" + length
                        + ",\"file\":" + FakeServer.file(42, sha, bytes.length, "http://x/download/t") + "}}");
            } else {
                FakeServer.json(ex, 404, FakeServer.error("not_found", "No route " + method + " " + path));
            }
        }

        synchronized void patch(HttpExchange ex, byte[] body) throws IOException {
            long offset = Long.parseLong(ex.getRequestHeaders().getFirst("Upload-Offset"));
            if (offset != received.size()) {
                FakeServer.json(ex, 409, FakeServer.error("offset_mismatch", "offset"));
                return;
            }
            if (failPatches > 0 && (!failAfterFirst || received.size() > 0)) {
                failPatches--;
                FakeServer.json(ex, 503, FakeServer.error("service_unavailable", "busy"));
                return;
            }
            if (quota >= 0 && received.size() + body.length > quota) {
                FakeServer.json(ex, 403, FakeServer.error("storage_quota_exceeded", "The upload would pass the storage quota."));
                return;
            }
            received.write(body);
            ex.getResponseHeaders().set("Tus-Resumable", "1.0.0");
            ex.getResponseHeaders().set("Upload-Offset", Integer.toString(received.size()));
            if (received.size() == length) ex.getResponseHeaders().set("Fileshare-File-Id", "42");
            ex.sendResponseHeaders(204, -1);
        }
    }

    /** A FakeServer that routes to {@code tus} (PATCH with the body it recorded); multipart uploads are answered with {@code multipartSha256}. */
    private static FakeServer server(TusFake tus, String multipartSha256, long multipartSize) throws IOException {
        FakeServer[] self = new FakeServer[1];
        self[0] = new FakeServer((ex, n) -> {
            String method = ex.getRequestMethod();
            String path = ex.getRequestURI().getPath();
            if (method.equals("PATCH") && path.equals(UPLOAD_PATH)) {
                List<FakeServer.Seen> seen = self[0].requests;
                tus.patch(ex, seen.get(seen.size() - 1).body());
            } else if (method.equals("POST") && path.equals("/api/v1/files/upload")) {
                FakeServer.json(ex, 201, "{\"success\":true,"
                        + FakeServer.file(7, multipartSha256, multipartSize, "http://x/download/m").substring(1));
            } else {
                tus.handle(ex, n);
            }
        });
        return self[0];
    }

    /** A fake that takes the first chunk, then answers every PATCH 503. */
    private static TusFake failingAfterFirstChunk() {
        TusFake tus = new TusFake(null);
        tus.failPatches = 100;
        tus.failAfterFirst = true;
        return tus;
    }

    private static String sequence(FakeServer fake) {
        return fake.requests.stream().map(r -> r.method() + " " + r.path()).collect(Collectors.joining(", "));
    }

    @Test
    void sourcesAtTheThresholdGoThroughTusAndSmallerOnesThroughMultipart() throws Exception {
        int threshold = 1000;
        byte[] atThreshold = content(threshold);
        Path path = dir.resolve("big.bin");
        Files.write(path, atThreshold);
        byte[] below = Arrays.copyOf(atThreshold, threshold - 1);
        TusFake tus = new TusFake(null);
        try (FakeServer fake = server(tus, hex(below), below.length);
             FileshareClient client = fake.client().resumableThreshold(threshold).chunkSize(400).build()) {
            // Exactly at the threshold (a path): OPTIONS, creation, three PATCHes (400 + 400 + 200), the file.
            FileInfo file = client.files().upload(path);
            assertEquals(42, file.fileId());
            assertEquals("OPTIONS /api/v1/uploads, POST /api/v1/uploads, PATCH " + UPLOAD_PATH + ", PATCH " + UPLOAD_PATH
                    + ", PATCH " + UPLOAD_PATH + ", GET " + UPLOAD_PATH, sequence(fake));
            assertArrayEquals(atThreshold, tus.received.toByteArray());
            assertEquals(Integer.toString(threshold), fake.requests.get(1).header("Upload-Length"));
            assertEquals("0", fake.requests.get(2).header("Upload-Offset"));
            assertEquals("400", fake.requests.get(3).header("Upload-Offset"));
            assertEquals("800", fake.requests.get(4).header("Upload-Offset"));
            String metadata = fake.requests.get(1).header("Upload-Metadata");
            assertTrue(metadata.contains("filename " + Base64.getEncoder().encodeToString("big.bin".getBytes())), metadata);

            // One byte less (bytes): a single multipart POST, no tus request at all.
            fake.requests.clear();
            FileInfo small = client.files().upload(below, null);
            assertEquals(7, small.fileId());
            assertEquals("POST /api/v1/files/upload", sequence(fake));
            assertTrue(fake.requests.get(0).header("Content-Type").startsWith("multipart/form-data"));
        }
    }

    @Test
    void everyPatchCarriesTheSha256OfItsChunk() throws Exception {
        byte[] data = content(2500);
        TusFake tus = new TusFake(null);
        try (FakeServer fake = server(tus, "unused", 0);
             FileshareClient client = fake.client().build()) {
            FileInfo file = client.files().upload(data, UploadOptions.builder().resumable(true).chunkSize(1000).build());
            assertEquals(hex(data), file.sha256());
            List<FakeServer.Seen> patches = fake.requests.stream().filter(r -> r.method().equals("PATCH")).toList();
            assertEquals(3, patches.size(), sequence(fake));
            int[][] chunks = {{0, 1000}, {1000, 2000}, {2000, 2500}};
            for (int i = 0; i < patches.size(); i++) {
                FakeServer.Seen patch = patches.get(i);
                // Independent of what was received: the digest of the source's own slice...
                String expected = "sha256 " + Base64.getEncoder().encodeToString(digest(data, chunks[i][0], chunks[i][1]));
                assertEquals(expected, patch.header("Upload-Checksum"), "PATCH #" + (i + 1));
                // ... and of the body that PATCH actually carried.
                assertEquals("sha256 " + Base64.getEncoder().encodeToString(digest(patch.body(), 0, patch.body().length)),
                        patch.header("Upload-Checksum"));
                assertEquals("application/offset+octet-stream", patch.header("Content-Type"));
                assertEquals("1.0.0", patch.header("Tus-Resumable"));
            }
        }
    }

    @Test
    void aWholeFileSha256MismatchAfterAResumableUploadIsAnIntegrityException() throws Exception {
        byte[] data = content(1500);
        String wrong = "0".repeat(64);
        TusFake tus = new TusFake(wrong);
        try (FakeServer fake = server(tus, "unused", 0);
             FileshareClient client = fake.client().build()) {
            IntegrityException e = assertThrows(IntegrityException.class,
                    () -> client.files().upload(data, UploadOptions.builder().resumable(true).chunkSize(600).build()));
            assertEquals(wrong, e.expected());
            assertEquals(hex(data), e.actual());
            // The upload itself went through tus to the end; the check failed on the file it became.
            assertArrayEquals(data, tus.received.toByteArray());
            assertEquals("GET " + UPLOAD_PATH, sequence(fake).substring(sequence(fake).lastIndexOf(", ") + 2));
            assertTrue(fake.requests.stream().noneMatch(r -> r.path().equals("/api/v1/files/upload")));
        }
    }

    @Test
    void anExpiryGoesOnTheTusCreationAndOnTheMultipartPostInWholeSeconds() throws Exception {
        byte[] data = content(1200);
        TusFake tus = new TusFake(null);
        try (FakeServer fake = server(tus, hex(data), data.length);
             FileshareClient client = fake.client().build()) {
            client.files().upload(data, UploadOptions.builder().resumable(true).chunkSize(500)
                    .expiresIn(java.time.Duration.ofDays(7)).build());
            FakeServer.Seen creation = fake.requests.stream().filter(r -> r.method().equals("POST")).findFirst().orElseThrow();
            assertEquals("604800", creation.header("Fileshare-Expires-In"));
            assertTrue(fake.requests.stream().filter(r -> !r.method().equals("POST"))
                    .allMatch(r -> r.header("Fileshare-Expires-In") == null), "only on the creation: " + sequence(fake));

            fake.requests.clear();
            client.files().upload(data, UploadOptions.builder().resumable(false).expiresIn(java.time.Duration.ofMillis(1500)).build());
            assertEquals("POST /api/v1/files/upload", sequence(fake));
            assertEquals("2", fake.requests.get(0).header("Fileshare-Expires-In"), "a fraction of a second is rounded up");

            fake.requests.clear();
            client.files().upload(data, UploadOptions.builder().resumable(false).build());
            assertNull(fake.requests.get(0).header("Fileshare-Expires-In"), "no expiry, no header");
        }
    }

    @Test
    void theCreationCarriesOneKeyOnEveryAttempt() throws Exception {
        byte[] data = content(1500);
        TusFake tus = new TusFake(null);
        tus.failCreations = 1;
        try (FakeServer fake = server(tus, "unused", 0); FileshareClient client = fake.client().build()) {
            client.files().upload(data, UploadOptions.builder().resumable(true).chunkSize(1000).build());
            List<FakeServer.Seen> posts = fake.requests.stream().filter(r -> r.method().equals("POST")).toList();
            assertEquals(2, posts.size());
            String key = posts.get(0).header("Idempotency-Key");
            assertTrue(key.matches(IdempotencyFakeTest.UUID_V4), key);
            assertEquals(key, posts.get(1).header("Idempotency-Key"));
            assertTrue(fake.requests.stream().filter(r -> !r.method().equals("POST")).allMatch(r -> r.header("Idempotency-Key") == null),
                    "only the creation: " + sequence(fake));
        }
    }

    @Test
    void aReplayedCreationContinuesWhereTheUploadStands() throws Exception {
        byte[] data = content(2500);
        TusFake tus = new TusFake(null);
        try (FakeServer fake = server(tus, "unused", 0); FileshareClient client = fake.client().build()) {
            UploadOptions options = UploadOptions.builder().resumable(true).chunkSize(1000).idempotencyKey("upload-7").build();
            // An earlier call with this key created the upload and sent its first 1000 bytes.
            tus.keys.add("upload-7");
            tus.length = data.length;
            tus.received.write(data, 0, 1000);
            FileInfo file = client.files().upload(data, options);
            assertEquals(hex(data), file.sha256(), "the SHA-256 covers the bytes sent before too");
            assertArrayEquals(data, tus.received.toByteArray());
            assertEquals("OPTIONS /api/v1/uploads, POST /api/v1/uploads, HEAD " + UPLOAD_PATH + ", PATCH " + UPLOAD_PATH
                    + ", PATCH " + UPLOAD_PATH + ", GET " + UPLOAD_PATH, sequence(fake));
            assertEquals("1000", fake.requests.get(3).header("Upload-Offset"));

            // The same call again: the upload is complete; nothing is sent but the questions.
            fake.requests.clear();
            FileInfo again = client.files().upload(data, options);
            assertEquals(file, again);
            assertEquals("POST /api/v1/uploads, HEAD " + UPLOAD_PATH + ", GET " + UPLOAD_PATH, sequence(fake));
        }
    }

    @Test
    void aChunkPastTheStorageQuotaIsALimitExceededExceptionAndTheUploadIsDeleted() throws Exception {
        TusFake tus = new TusFake(null);
        tus.quota = 1500;
        try (FakeServer fake = server(tus, "unused", 0); FileshareClient client = fake.client().build()) {
            LimitExceededException e = assertThrows(LimitExceededException.class,
                    () -> client.files().upload(content(2500), UploadOptions.builder().resumable(true).chunkSize(1000).build()));
            assertEquals("storage_quota_exceeded", e.code());
            assertEquals("OPTIONS /api/v1/uploads, POST /api/v1/uploads, PATCH " + UPLOAD_PATH + ", PATCH " + UPLOAD_PATH
                    + ", DELETE " + UPLOAD_PATH, sequence(fake), "refused at once, not retried, then given up");
        }
    }

    @Test
    void anUploadWithTheCallersOwnKeyThatFailsOnTheServerIsKeptForALaterCallToContinue() throws Exception {
        byte[] data = content(2500);
        UploadOptions.Builder options = UploadOptions.builder().resumable(true).chunkSize(1000);
        TusFake tus = new TusFake(null);
        tus.failPatches = 100;
        tus.failAfterFirst = true;
        try (FakeServer fake = server(tus, "unused", 0); FileshareClient client = fake.client().build()) {
            // A generated key: nobody can continue the upload, so it is deleted.
            assertThrows(ServerException.class, () -> client.files().upload(data, options.build()));
            assertTrue(sequence(fake).endsWith("DELETE " + UPLOAD_PATH), sequence(fake));

            // The caller's own key: kept after the server failed (503 past the retries) ...
            tus.received.reset();
            fake.requests.clear();
            UploadOptions own = options.idempotencyKey("nightly-backup-2026-11-27").build();
            assertThrows(ServerException.class, () -> client.files().upload(data, own));
            assertFalse(sequence(fake).contains("DELETE"), sequence(fake));
            assertEquals(1000, tus.received.size());

            // ... and the next call with it continues after the first chunk.
            tus.failPatches = 0;
            fake.requests.clear();
            FileInfo file = client.files().upload(data, own);
            assertEquals(hex(data), file.sha256());
            assertArrayEquals(data, tus.received.toByteArray());
            assertEquals("POST /api/v1/uploads, HEAD " + UPLOAD_PATH + ", PATCH " + UPLOAD_PATH + ", PATCH " + UPLOAD_PATH
                    + ", GET " + UPLOAD_PATH, sequence(fake));
        }
        // Refused for good (the storage quota): deleted, own key or not.
        TusFake full = new TusFake(null);
        full.quota = 1500;
        try (FakeServer fake = server(full, "unused", 0); FileshareClient client = fake.client().build()) {
            assertThrows(LimitExceededException.class,
                    () -> client.files().upload(data, options.idempotencyKey("k-quota").build()));
            assertTrue(sequence(fake).endsWith("DELETE " + UPLOAD_PATH), sequence(fake));
        }
    }

    @Test
    void theUploadUrlIsShownAtOnceAndAFailedUploadKeptWithKeepOnFailureIsContinuedFromIt() throws Exception {
        byte[] data = content(2500);
        TusFake tus = failingAfterFirstChunk();
        List<String> urls = new java.util.ArrayList<>();
        try (FakeServer fake = server(tus, "unused", 0); FileshareClient client = fake.client().maxRetries(1).build()) {
            UploadOptions first = UploadOptions.builder().resumable(true).chunkSize(1000)
                    .onUploadCreated(url -> {
                        assertEquals(0, tus.received.size(), "shown before any byte is sent");
                        urls.add(url);
                    })
                    .keepOnFailure(true).build();
            assertThrows(ServerException.class, () -> client.files().upload(data, first));
            assertEquals(List.of(fake.origin() + UPLOAD_PATH), urls);
            assertFalse(sequence(fake).contains("DELETE"), "kept: " + sequence(fake));
            assertEquals(1000, tus.received.size());

            tus.failPatches = 0;
            fake.requests.clear();
            List<Long> progress = new java.util.ArrayList<>();
            FileInfo file = client.files().upload(data, UploadOptions.builder().chunkSize(1000).uploadUrl(urls.get(0))
                    .onProgress((sent, total) -> progress.add(sent)).build());
            assertEquals(hex(data), file.sha256(), "the SHA-256 covers the bytes the first call sent");
            assertArrayEquals(data, tus.received.toByteArray());
            assertEquals("HEAD " + UPLOAD_PATH + ", PATCH " + UPLOAD_PATH + ", PATCH " + UPLOAD_PATH
                    + ", GET " + UPLOAD_PATH, sequence(fake), "no creation: the upload is continued");
            assertEquals(1000L, progress.get(0));
        }
    }

    @Test
    void withoutKeepOnFailureAFailedUploadIsDeletedAndAnUploadUrlOfAnotherLengthIsRefused() throws Exception {
        byte[] data = content(2500);
        TusFake tus = failingAfterFirstChunk();
        try (FakeServer fake = server(tus, "unused", 0); FileshareClient client = fake.client().maxRetries(0).build()) {
            String[] url = new String[1];
            assertThrows(ServerException.class, () -> client.files().upload(data,
                    UploadOptions.builder().resumable(true).chunkSize(1000).onUploadCreated(u -> url[0] = u).build()));
            assertTrue(sequence(fake).endsWith("DELETE " + UPLOAD_PATH), sequence(fake));
            assertNotNull(url[0]);

            tus.length = 9999;
            ConfigurationException e = assertThrows(ConfigurationException.class,
                    () -> client.files().upload(data, UploadOptions.builder().uploadUrl(url[0]).build()));
            assertTrue(e.getMessage().contains("9999"), e.getMessage());
            assertThrows(ConfigurationException.class, () -> UploadOptions.builder().uploadUrl("not a url"));
        }
    }
}
