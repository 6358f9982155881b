package dev.fileshare;

import static org.junit.jupiter.api.Assertions.*;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 35, virus scanning, against the real servers: the launcher's normal server does not scan
 * ({@code scan} is null), and its {@code scanning} server scans every upload with clamd in
 * {@code required} mode (an EICAR upload ends infected and is removed, a clean one ends clean).
 */
class ScanningIT {
    @TempDir
    Path dir;

    /** The launcher's {@code scanning} server, or a skipped test when clamd is not installed here. */
    private static JsonNode scanning() {
        JsonNode scanning = TestServer.get().info.get("scanning");
        Assumptions.assumeTrue(scanning != null && scanning.isObject(),
                "the launcher started no scanning server (clamd, Debian's clamav-daemon, is not installed)");
        return scanning;
    }

    private static FileshareClient scanningClient(JsonNode scanning) {
        return FileshareClient.builder().baseUrl(scanning.get("base_url").asText()).apiKey(scanning.path("keys").path("pro").asText()).build();
    }

    /** Reads the file again until its scan is no longer pending (scans take milliseconds; 60 s at most). */
    private static FileInfo scanned(FileshareClient client, FileInfo file) throws InterruptedException {
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (file.scan() != null && file.scan().isPending()) {
            assertTrue(System.nanoTime() < deadline, "file " + file.fileId() + " still pending after 60 s");
            Thread.sleep(100);
            file = client.files().get(file.fileId());
        }
        return file;
    }

    private static List<Long> listedIds(FileshareClient client) {
        List<Long> ids = new ArrayList<>();
        for (FileInfo f : client.files().iterate(100)) ids.add(f.fileId());
        return ids;
    }

    @Test
    void theNormalServerDoesNotScan() {
        try (FileshareClient client = TestServer.get().client("pro").build()) {
            FileInfo uploaded = client.files().upload("not scanned".getBytes(StandardCharsets.UTF_8),
                    UploadOptions.builder().filename("plain.txt").build());
            try {
                assertNull(uploaded.scan(), "the upload answer: scan null");
                assertFalse(uploaded.extra().containsKey("scan"));
                assertNull(client.files().get(uploaded.fileId()).scan(), "get()");
                FileInfo listed = client.files().list(1, 100).files().stream().filter(f -> f.fileId() == uploaded.fileId()).findFirst()
                        .orElseThrow();
                assertNull(listed.scan(), "list()");
            } finally {
                client.files().delete(uploaded.fileId());
            }
        }
    }

    @Test
    void anEicarUploadEndsInfectedAndIsRemoved() throws Exception {
        JsonNode scanning = scanning();
        try (FileshareClient client = scanningClient(scanning)) {
            byte[] eicar = scanning.get("eicar").asText().getBytes(StandardCharsets.US_ASCII);
            long filesBefore = client.files().list(1, 1).pagination().total();
            long statsBefore = client.stats().stats().totalFiles();
            FileInfo uploaded = client.files().upload(eicar, UploadOptions.builder().filename("eicar.com.txt").build());
            assertNotNull(uploaded.scan(), "a scanning server sends scan on the upload answer");
            assertTrue(List.of(FileScan.STATUS_PENDING, FileScan.STATUS_INFECTED).contains(uploaded.scan().status()), uploaded.scan().status());

            FileInfo file = scanned(client, uploaded);
            FileScan scan = file.scan();
            assertEquals(FileScan.STATUS_INFECTED, scan.status());
            assertTrue(scan.isInfected());
            assertEquals(scanning.get("signature").asText(), scan.signature());
            assertNotNull(scan.scannedAtTime(), "scanned_at: " + scan.scannedAt());
            assertEquals(uploaded.fileId(), file.fileId());
            assertEquals(uploaded.sha256(), file.sha256());

            // The link is dead, the file left the list; get() still answers for its owner.
            assertThrows(NotFoundException.class, () -> client.download(uploaded.publicLink(), dir.resolve("eicar.txt")));
            assertThrows(NotFoundException.class, () -> client.download(uploaded, new ByteArrayOutputStream()));
            assertFalse(listedIds(client).contains(uploaded.fileId()), "GET /files no longer lists it");
            assertEquals(filesBefore, client.files().list(1, 1).pagination().total(), "pagination.total excludes it");
            assertEquals(statsBefore, client.stats().stats().totalFiles(), "stats exclude it");
            FileInfo again = client.files().get(uploaded.fileId());
            assertTrue(again.scan().isInfected());
            assertEquals(scan, again.scan());

            // The audit log has scan.infected, by the system, on the file.
            AuditEvent event = null;
            for (AuditEvent e : client.auditEvents().iterate(AuditEventListParams.builder().action("scan.infected").build())) {
                if (e.target() != null && Long.valueOf(uploaded.fileId()).equals(e.target().id())) {
                    event = e;
                    break;
                }
            }
            assertNotNull(event, "an audit event scan.infected for the file");
            assertEquals("system", event.actor().type());
            assertEquals(scan.signature(), event.details().get("signature"));

            // Deleting removes the record: then 404.
            client.files().delete(uploaded.fileId());
            assertThrows(NotFoundException.class, () -> client.files().get(uploaded.fileId()));
        }
    }

    @Test
    void aCleanUploadEndsCleanAndDownloads() throws Exception {
        JsonNode scanning = scanning();
        try (FileshareClient client = scanningClient(scanning)) {
            byte[] data = ("a clean file " + System.nanoTime()).getBytes(StandardCharsets.UTF_8);
            FileInfo uploaded = client.files().upload(data, UploadOptions.builder().filename("clean.txt").build());
            try {
                assertNotNull(uploaded.scan());
                FileInfo file = scanned(client, uploaded);
                assertEquals(FileScan.STATUS_CLEAN, file.scan().status());
                assertTrue(file.scan().isClean());
                assertNull(file.scan().signature());
                assertNotNull(file.scan().scannedAtTime());
                assertTrue(listedIds(client).contains(file.fileId()));
                Path dest = dir.resolve("clean.txt");
                client.download(file, dest);
                assertArrayEquals(data, Files.readAllBytes(dest));
            } finally {
                client.files().delete(uploaded.fileId());
            }
        }
    }
}
