package dev.fileshare;

import static org.junit.jupiter.api.Assertions.*;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.LongStream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** files().downloadArchive() against the real server; the ZIPs are read back with java.util.zip.ZipFile, which checks each CRC-32. */
class ArchiveIT {
    static TestServer server;
    static FileshareClient client;
    static byte[] data = ProAccountIT.random(150_000, 31);
    static List<FileInfo> files = new ArrayList<>();

    @TempDir
    Path dir;

    @BeforeAll
    static void start() {
        server = TestServer.get();
        client = server.client("pro").build();
        files.add(client.files().upload(data, UploadOptions.builder().filename("data.bin").build()));
        files.add(client.files().upload("one".getBytes(StandardCharsets.UTF_8), UploadOptions.builder().filename("same.txt").build()));
        files.add(client.files().upload("two".getBytes(StandardCharsets.UTF_8), UploadOptions.builder().filename("SAME.txt").build()));
        files.add(client.files().upload(new byte[0], UploadOptions.builder().filename("Ünïcödé – empty.txt").build()));
    }

    @AfterAll
    static void stop() {
        client.close();
    }

    /**
     * name, method, sha256 of each entry, read through the central directory (java.util.zip.ZipFile).
     * Not ZipInputStream: it reads local headers only and refuses stored entries whose sizes follow
     * their data (docs/api.md, POST /files/archive).
     */
    static List<String> entries(Path zip) throws Exception {
        List<String> found = new ArrayList<>();
        try (ZipFile file = new ZipFile(zip.toFile(), StandardCharsets.UTF_8)) {
            for (ZipEntry entry : java.util.Collections.list(file.entries())) {
                try (InputStream in = file.getInputStream(entry)) {
                    found.add(entry.getName() + " " + entry.getMethod() + " " + ProAccountIT.sha(in.readAllBytes()));
                }
            }
        }
        return found;
    }

    static List<Long> ids(int... indexes) {
        List<Long> ids = new ArrayList<>();
        for (int i : indexes) ids.add(files.get(i).fileId());
        return ids;
    }

    @Test
    void aZipToAPathNamesOrderAndBytesExact() throws Exception {
        Path target = dir.resolve("all.zip");
        long[] last = {-2, -2};
        ArchiveResult result = client.files().downloadArchive(ids(0, 1, 2, 3), target, (done, total) -> {
            last[0] = done;
            last[1] = total;
        });
        assertTrue(result.filename().matches("files-\\d{8}-\\d{6}\\.zip"), result.filename());
        assertEquals(Files.size(target), result.size());
        assertArrayEquals(new long[] {result.size(), result.size()}, last);
        assertEquals(List.of(
                "data.bin 0 " + ProAccountIT.sha(data),
                "same.txt 0 " + ProAccountIT.sha("one".getBytes(StandardCharsets.UTF_8)),
                "SAME (2).txt 0 " + ProAccountIT.sha("two".getBytes(StandardCharsets.UTF_8)),
                "Ünïcödé – empty.txt 0 " + ProAccountIT.sha(new byte[0])), entries(target));
    }

    @Test
    void aStreamDestination() throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ArchiveResult result = client.files().downloadArchive(ids(1), out, null);
        assertEquals(out.size(), result.size());
        Path copy = Files.write(dir.resolve("from-stream.zip"), out.toByteArray());
        assertEquals(List.of("same.txt 0 " + ProAccountIT.sha("one".getBytes(StandardCharsets.UTF_8))), entries(copy));
    }

    @Test
    void anotherAccountsIdIsNotFoundBeforeAnyByte() throws Exception {
        try (FileshareClient other = FileshareClient.builder().baseUrl(server.baseUrl).apiKey(server.createAccount("java-archive", "pro")).build()) {
            FileInfo theirs = other.files().upload("theirs".getBytes(StandardCharsets.UTF_8), UploadOptions.builder().filename("theirs.txt").build());
            Path target = dir.resolve("refused.zip");
            NotFoundException e = assertThrows(NotFoundException.class,
                    () -> client.files().downloadArchive(List.of(files.get(0).fileId(), theirs.fileId()), target));
            assertTrue(e.getMessage().contains(Long.toString(theirs.fileId())), e.getMessage());
            assertFalse(Files.exists(target));
        }
    }

    @Test
    void needsFilesReadAndLinksWrite() throws Exception {
        try (FileshareClient auditor = server.client("auditor").build(); FileshareClient readOnly = server.client("read_only").build()) {
            PermissionDeniedException e = assertThrows(PermissionDeniedException.class,
                    () -> auditor.files().downloadArchive(ids(1), dir.resolve("scope.zip")));
            assertEquals("insufficient_scope", e.code());
            assertEquals("files:read", e.requiredScope());
            // files:read (with links:read and stats:read) reads metadata only: no file's bytes for a read-only key.
            InsufficientScopeException refused = assertThrows(InsufficientScopeException.class,
                    () -> readOnly.files().downloadArchive(ids(1), dir.resolve("read-only.zip")));
            assertEquals("links:write", refused.requiredScope());
            assertFalse(Files.exists(dir.resolve("read-only.zip")));
        }
    }

    @Test
    void refusesBadIdsBeforeAnyRequest() {
        Path target = dir.resolve("x.zip");
        assertThrows(ConfigurationException.class, () -> client.files().downloadArchive(List.of(), target));
        assertThrows(ConfigurationException.class, () -> client.files().downloadArchive(List.of(0L), target));
        assertThrows(ConfigurationException.class,
                () -> client.files().downloadArchive(LongStream.rangeClosed(1, 1001).boxed().toList(), target));
    }

    @Test
    void aCutMidArchiveStartsAgainAndAFinalOneRemovesTheFile() throws Exception {
        try (CuttingProxy proxy = new CuttingProxy(server.serverUrl);
             FileshareClient retrying = FileshareClient.builder().baseUrl(proxy.origin() + "/api/v1").apiKey(server.key("pro")).build();
             FileshareClient once = FileshareClient.builder().baseUrl(proxy.origin() + "/api/v1").apiKey(server.key("pro")).maxRetries(0).build()) {
            int before = proxy.cuts.get();
            proxy.cutOnce("POST /api/v1/files/archive", CuttingProxy.Direction.RESPONSE, 100_000);
            Path target = dir.resolve("cut.zip");
            retrying.files().downloadArchive(ids(0), target);
            assertEquals(before + 1, proxy.cuts.get());
            assertEquals(List.of("data.bin 0 " + ProAccountIT.sha(data)), entries(target));

            proxy.cutOnce("POST /api/v1/files/archive", CuttingProxy.Direction.RESPONSE, 100_000);
            Path lost = dir.resolve("cut-for-good.zip");
            assertThrows(APIConnectionException.class, () -> once.files().downloadArchive(ids(0), lost));
            assertFalse(Files.exists(lost));
        }
    }
}
