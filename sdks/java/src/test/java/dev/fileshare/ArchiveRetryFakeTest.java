package dev.fileshare;

import static org.junit.jupiter.api.Assertions.*;

import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * downloadArchive against a fake server that cuts the archive: how often it asks again. An archive
 * does not resume, so each attempt costs the whole download from its first byte.
 */
class ArchiveRetryFakeTest {
    private static final int LENGTH = 10_000;

    @TempDir
    Path dir;

    /** Declares the whole archive; sends all of it, or {@code cutAt} bytes and drops the connection. */
    private static void answer(HttpExchange ex, int cutAt) throws IOException {
        ex.getResponseHeaders().set("Content-Type", "application/zip");
        ex.sendResponseHeaders(200, LENGTH);
        OutputStream out = ex.getResponseBody();
        out.write(new byte[cutAt < 0 ? LENGTH : cutAt]);
        out.flush();
        if (cutAt >= 0) throw new IOException("cut on purpose"); // the exchange closes short of its length
        out.close();
    }

    @Test
    void theRetryBudgetIsNeverGivenBackEvenWhenEachCutAttemptGetsFurther() throws Exception {
        // A corrupt stored file cuts every attempt near the same offset, a little further each time
        // (socket chunking): the call must still stop after maxRetries more attempts. The 20th would
        // succeed, so a budget given back on progress ends in a success here.
        try (FakeServer fake = new FakeServer((ex, n) -> answer(ex, n >= 20 ? -1 : 1000 + 100 * n));
                FileshareClient client = fake.client().maxRetries(2).build()) {
            Path dest = dir.resolve("cut.zip");
            assertThrows(APIConnectionException.class, () -> client.files().downloadArchive(List.of(1L, 2L), dest));
            assertEquals(3, fake.requests.size());
            for (FakeServer.Seen seen : fake.requests) {
                assertEquals("POST", seen.method());
                assertTrue(seen.path().endsWith("/files/archive"), seen.path());
            }
            assertFalse(Files.exists(dest), "a path that did not get the whole archive is removed");
        }
    }

    @Test
    void aCutArchiveIsAskedAgainFromItsFirstByteWithinTheBudget() throws Exception {
        try (FakeServer fake = new FakeServer((ex, n) -> answer(ex, n > 2 ? -1 : 3000));
                FileshareClient client = fake.client().maxRetries(2).build()) {
            Path dest = dir.resolve("whole.zip");
            ArchiveResult result = client.files().downloadArchive(List.of(1L), dest);
            assertEquals(LENGTH, result.size());
            assertEquals(LENGTH, Files.size(dest));
            assertEquals(3, fake.requests.size());
        }
    }
}
