package dev.fileshare;

import static org.junit.jupiter.api.Assertions.*;

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 30, point 3: a process uploading a file resumably is killed midway; a second process
 * finishes the same upload from the URL the first one showed as soon as it was created.
 */
class ResumeAcrossProcessesIT {
    private static final int MIB = 1024 * 1024;

    @TempDir
    Path dir;

    @Test
    void aKilledUploadIsFinishedByAnotherProcessFromItsUrl() throws Exception {
        TestServer server = TestServer.get();
        String key = server.createAccount("resume", "pro");
        byte[] data = new byte[3 * MIB + 12345];
        new Random(30).nextBytes(data);
        Path file = dir.resolve("big.bin");
        Files.write(file, data);

        // 1. The first process: uploads 1 MiB chunks, and stalls once the server has the first one.
        String testClasses = Path.of(UploadWorker.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
        String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        ProcessBuilder pb = new ProcessBuilder(javaBin, "-Xshare:auto", "-Xmx64m",
                "-cp", ExamplesIT.sdkClasspath() + File.pathSeparator + testClasses,
                "dev.fileshare.UploadWorker", file.toString(), Integer.toString(MIB), Integer.toString(MIB))
                .redirectErrorStream(true);
        pb.environment().put("FILESHARE_BASE_URL", server.baseUrl);
        pb.environment().put("FILESHARE_API_KEY", key);
        Process first = pb.start();
        String url = null;
        List<String> lines = new ArrayList<>();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(first.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line; (line = out.readLine()) != null; ) {
                lines.add(line);
                if (line.startsWith("URL ")) url = line.substring(4);
                if (line.equals("STALLED")) break;
            }
            assertTrue(lines.contains("STALLED"), "the first process got midway: " + lines);
            first.destroyForcibly(); // a crash: no cleanup runs
            assertTrue(first.waitFor(20, TimeUnit.SECONDS));
        } finally {
            first.destroyForcibly();
        }
        assertNotNull(url, "the upload's URL was shown as soon as it was created: " + lines);
        assertFalse(String.join("\n", lines).contains(key), "the key never shows");

        // 2. This process (another one) continues the same upload from its URL.
        List<Long> progress = new ArrayList<>();
        try (FileshareClient client = server.client("pro").apiKey(key).build()) {
            FileInfo stored = client.files().upload(file, UploadOptions.builder().uploadUrl(url).chunkSize(MIB)
                    .onProgress((sent, total) -> progress.add(sent)).build());
            assertEquals(MIB, progress.get(0), "continued after the first process's chunk, not from 0");
            assertEquals(data.length, stored.size());
            assertEquals(HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(data)), stored.sha256());
            assertEquals(1, client.files().list().pagination().total(), "one file, not two");
            assertEquals(1, client.stats().stats().uploadsToday(), "one upload slot");

            // The upload is done: continuing it again is refused as the server sees it, nothing stored twice.
            Path copy = dir.resolve("copy.bin");
            client.download(stored, copy);
            assertArrayEquals(data, Files.readAllBytes(copy));
        }
    }
}
