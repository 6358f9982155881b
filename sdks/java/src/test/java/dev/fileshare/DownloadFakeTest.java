package dev.fileshare;

import static org.junit.jupiter.api.Assertions.*;

import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Downloads against a fake link that gives grants and serves ranges the way the server does. */
class DownloadFakeTest {
    @TempDir
    Path dir;

    private static byte[] content(int size) {
        byte[] b = new byte[size];
        new Random(7).nextBytes(b);
        return b;
    }

    private static String sha(byte[] b) throws Exception {
        return Sha256.hex(MessageDigest.getInstance("SHA-256").digest(b));
    }

    /** Serves {@code data.get()} with an ETag (or {@code etag} if set), honouring Range + If-Range. */
    private static void serve(HttpExchange ex, byte[] data, String etag) throws IOException {
        if (FakeServer.grant(ex)) return;
        ex.getResponseHeaders().set("ETag", "\"" + etag + "\"");
        ex.getResponseHeaders().set("Accept-Ranges", "bytes");
        String range = ex.getRequestHeaders().getFirst("Range");
        String ifRange = ex.getRequestHeaders().getFirst("If-Range");
        if ("HEAD".equals(ex.getRequestMethod())) {
            ex.getResponseHeaders().set("Content-Length", Integer.toString(data.length));
            ex.sendResponseHeaders(200, -1);
            return;
        }
        int start = 0;
        if (range != null && (ifRange == null || ifRange.equals("\"" + etag + "\""))) {
            start = Integer.parseInt(range.replace("bytes=", "").replace("-", ""));
            if (start >= data.length) {
                ex.getResponseHeaders().set("Content-Range", "bytes */" + data.length);
                FakeServer.json(ex, 416, FakeServer.error("range_not_satisfiable", "no"));
                return;
            }
            ex.getResponseHeaders().set("Content-Range", "bytes " + start + "-" + (data.length - 1) + "/" + data.length);
            ex.sendResponseHeaders(206, data.length - start);
        } else {
            ex.sendResponseHeaders(200, data.length == 0 ? -1 : data.length);
        }
        if (data.length - start > 0) {
            try (OutputStream out = ex.getResponseBody()) {
                out.write(data, start, data.length - start);
            }
        }
    }

    @Test
    void resumesAPartialFileWithRangeAndIfRange() throws Exception {
        byte[] data = content(300_000);
        String sha = sha(data);
        try (FakeServer fake = new FakeServer((ex, n) -> serve(ex, data, sha)); FileshareClient client = fake.client().build()) {
            FileInfo file = new FileInfo(1, "a.bin", data.length, "2026-11-22 00:17:19", 0, fake.origin() + "/download/tok", "x", sha, null);
            Path dest = dir.resolve("a.bin");
            Files.write(dest, Arrays.copyOf(data, 100_000));
            long[] last = new long[2];
            DownloadResult result = client.download(file, dest, DownloadOptions.builder()
                    .onProgress((done, total) -> { last[0] = done; last[1] = total; }).build());
            assertEquals(new DownloadResult(300_000, sha, 100_000), result);
            assertArrayEquals(data, Files.readAllBytes(dest));
            assertArrayEquals(new long[] {300_000, 300_000}, last);
            // The link is POSTed (one download counted), then its grant is fetched from byte 100,000.
            FakeServer.Seen post = fake.requests.get(0);
            assertEquals("POST", post.method());
            assertEquals("/download/tok", post.path());
            assertEquals(0, post.body().length, "no password, no body");
            FakeServer.Seen seen = fake.requests.get(1);
            assertEquals("GET", seen.method());
            assertEquals("/download/tok/grant", seen.path());
            assertEquals("bytes=100000-", seen.header("Range"));
            assertEquals("\"" + sha + "\"", seen.header("If-Range"));
            for (FakeServer.Seen r : fake.requests) assertNull(r.header("Authorization"), "no key goes to a public link");

            // Complete already: nothing is fetched, nothing counted.
            fake.requests.clear();
            assertEquals(new DownloadResult(300_000, sha, 300_000), client.download(file, dest));
            assertTrue(fake.requests.isEmpty());

            // resume(false) starts over, from the grant this client holds for the link and destination.
            assertEquals(0, client.download(file, dest, DownloadOptions.builder().resume(false).build()).resumedFrom());
            assertEquals("/download/tok/grant", fake.requests.get(0).path());
            assertNull(fake.requests.get(0).header("Range"));

            // A bare link: a HEAD on the grant tells the ETag and length first.
            Files.write(dest, Arrays.copyOf(data, 5));
            fake.requests.clear();
            assertEquals(5, client.download(file.publicLink(), dest).resumedFrom());
            assertEquals("HEAD", fake.requests.get(0).method());
            assertEquals("/download/tok/grant", fake.requests.get(0).path());
            assertEquals("bytes=5-", fake.requests.get(1).header("Range"));
            assertArrayEquals(data, Files.readAllBytes(dest));
            assertEquals(2, fake.requests.size(), "no second POST: the grant is reused");

            // Another destination is another download: a POST of its own.
            fake.requests.clear();
            client.download(file, dir.resolve("other.bin"));
            assertEquals(List.of("POST", "GET"), fake.requests.stream().map(FakeServer.Seen::method).toList());
        }
    }

    @Test
    void theFileChangedSoTheServerSendsItWholeAndTheSdkStartsOver() throws Exception {
        byte[] data = content(50_000);
        String sha = sha(data);
        try (FakeServer fake = new FakeServer((ex, n) -> serve(ex, data, sha)); FileshareClient client = fake.client().build()) {
            // The caller's record names an older SHA-256: If-Range does not match, 200 comes, the file restarts.
            FileInfo stale = new FileInfo(1, "a", data.length, null, 0, fake.origin() + "/download/t", "x", "1".repeat(64), null);
            Path dest = dir.resolve("b.bin");
            Files.write(dest, new byte[20_000]);
            DownloadResult result = client.download(stale, dest);
            assertEquals(0, result.resumedFrom());
            assertEquals(sha, result.sha256());
            assertArrayEquals(data, Files.readAllBytes(dest));
        }
    }

    @Test
    void aPartialFileLongerThanTheFileGets416AndStartsOver() throws Exception {
        byte[] data = content(1000);
        String sha = sha(data);
        try (FakeServer fake = new FakeServer((ex, n) -> serve(ex, data, sha)); FileshareClient client = fake.client().build()) {
            Path dest = dir.resolve("c.bin");
            Files.write(dest, new byte[5000]);
            FileInfo wrongSize = new FileInfo(1, "a", 6000, null, 0, fake.origin() + "/download/t", "x", sha, null);
            DownloadResult result = client.download(wrongSize, dest);
            assertEquals(1000, result.size());
            assertArrayEquals(data, Files.readAllBytes(dest));
        }
    }

    @Test
    void bytesThatDoNotMatchTheEtagAreAnIntegrityException() throws Exception {
        byte[] data = content(10_000);
        AtomicReference<String> etag = new AtomicReference<>("e".repeat(64));
        try (FakeServer fake = new FakeServer((ex, n) -> serve(ex, data, etag.get())); FileshareClient client = fake.client().build()) {
            IntegrityException e = assertThrows(IntegrityException.class,
                    () -> client.download(fake.origin() + "/download/t", dir.resolve("d.bin")));
            assertEquals("e".repeat(64), e.expected());
            assertEquals(sha(data), e.actual());
        }
    }

    @Test
    void notFoundAndBadLinks() throws Exception {
        try (FakeServer fake = new FakeServer((ex, n) -> FakeServer.json(ex, 404, FakeServer.error("not_found", "No file behind this link.")));
             FileshareClient client = fake.client().build()) {
            assertThrows(NotFoundException.class, () -> client.download(fake.origin() + "/download/gone", dir.resolve("e")));
            assertThrows(ConfigurationException.class, () -> client.download("not a link", dir.resolve("e")));
            assertThrows(ConfigurationException.class, () -> client.download("http://bad host/download/x", dir.resolve("e")));
        }
    }
}
