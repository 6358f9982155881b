package dev.fileshare;

import static org.junit.jupiter.api.Assertions.*;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.Flow;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The framing, hashing, replay and back-pressure of the streaming multipart body. */
class MultipartBodyPublisherTest {
    @TempDir
    Path dir;

    /** Subscribes, asking {@code batch} buffers at a time; collects the bytes or the error. */
    static final class Collector implements Flow.Subscriber<ByteBuffer> {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        final List<Integer> sizes = new ArrayList<>();
        Flow.Subscription subscription;
        Throwable error;
        boolean complete;
        private final long batch;

        Collector(long batch) {
            this.batch = batch;
        }

        @Override
        public void onSubscribe(Flow.Subscription s) {
            subscription = s;
            if (batch > 0) s.request(batch);
        }

        @Override
        public void onNext(ByteBuffer item) {
            sizes.add(item.remaining());
            byte[] b = new byte[item.remaining()];
            item.get(b);
            bytes.write(b, 0, b.length);
            if (batch > 0 && sizes.size() % batch == 0) subscription.request(batch);
        }

        @Override
        public void onError(Throwable t) {
            error = t;
        }

        @Override
        public void onComplete() {
            complete = true;
        }
    }

    static Collector collect(MultipartBodyPublisher publisher) {
        Collector c = new Collector(1);
        publisher.subscribe(c);
        return c;
    }

    @Test
    void framesOneFilePartExactly() throws Exception {
        byte[] content = "a,b\r\n--not-a-boundary\r\n".getBytes(StandardCharsets.UTF_8);
        MultipartBodyPublisher p = new MultipartBodyPublisher("XyZ", "report.csv", "text/csv", UploadSource.of(content), null);
        Collector c = collect(p);
        assertNull(c.error);
        assertTrue(c.complete);
        String expected = "--XyZ\r\n"
                + "Content-Disposition: form-data; name=\"file\"; filename=\"report.csv\"\r\n"
                + "Content-Type: text/csv\r\n"
                + "\r\n"
                + "a,b\r\n--not-a-boundary\r\n"
                + "\r\n--XyZ--\r\n";
        assertEquals(expected, c.bytes.toString(StandardCharsets.UTF_8));
        assertEquals(expected.length(), p.contentLength());
        assertEquals("multipart/form-data; boundary=XyZ", p.contentType());
        assertEquals(Sha256.hex(MessageDigest.getInstance("SHA-256").digest(content)), p.sha256());
        assertEquals(content.length, p.bytesSent());
    }

    @Test
    void quotesFileNamesLikeBrowsersAndCleansTheType() {
        MultipartBodyPublisher p = new MultipartBodyPublisher("b", "quo\"te\r\n.txt", "text/plain\r\nX-Evil: 1", UploadSource.of(new byte[0]), null);
        String body = collect(p).bytes.toString(StandardCharsets.UTF_8);
        assertTrue(body.contains("filename=\"quo%22te%0D%0A.txt\"\r\n"), body);
        assertTrue(body.contains("Content-Type: text/plainX-Evil: 1\r\n\r\n"), body);
        assertEquals("--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"quo%22te%0D%0A.txt\"\r\n"
                + "Content-Type: text/plainX-Evil: 1\r\n\r\n\r\n--b--\r\n", body);
        String utf8 = collect(new MultipartBodyPublisher("b", "résumé.pdf", null, UploadSource.of(new byte[0]), null))
                .bytes.toString(StandardCharsets.UTF_8);
        assertTrue(utf8.contains("filename=\"résumé.pdf\"\r\nContent-Type: application/octet-stream\r\n"), utf8);
    }

    @Test
    void randomBoundariesFollowRfc2046() {
        String a = MultipartBodyPublisher.randomBoundary();
        assertNotEquals(a, MultipartBodyPublisher.randomBoundary());
        assertTrue(a.length() <= 70 && a.matches("[-0-9a-z]+"), a);
        assertThrows(IllegalArgumentException.class, () -> new MultipartBodyPublisher("", "f", null, UploadSource.of(new byte[0]), null));
    }

    @Test
    void streamsAPathIn64KiBBuffersWithProgressAndReplaysIt() throws Exception {
        byte[] content = new byte[200_000];
        new Random(1).nextBytes(content);
        Path path = dir.resolve("data.bin");
        Files.write(path, content);
        List<Long> progress = new ArrayList<>();
        MultipartBodyPublisher p = new MultipartBodyPublisher("B", "data.bin", null, UploadSource.of(path), progress::add);
        Collector first = collect(p);
        Collector second = collect(p);
        assertArrayEquals(first.bytes.toByteArray(), second.bytes.toByteArray());
        byte[] body = first.bytes.toByteArray();
        assertEquals(p.contentLength(), body.length);
        // head, 64 KiB, 64 KiB, 64 KiB, the rest, tail
        assertEquals(List.of(65536, 65536, 65536, 200_000 - 3 * 65536), first.sizes.subList(1, 5));
        assertEquals(List.of(65536L, 131072L, 196608L, 200000L), progress.subList(0, 4));
        byte[] middle = java.util.Arrays.copyOfRange(body, p.headLength(), body.length - p.tailLength());
        assertArrayEquals(content, middle);
    }

    @Test
    void honoursDemandOneBufferAtATime() {
        MultipartBodyPublisher p = new MultipartBodyPublisher("B", "x", null, UploadSource.of(new byte[300_000]), null);
        Collector c = new Collector(0);
        p.subscribe(c);
        assertEquals(0, c.sizes.size(), "nothing before a request");
        c.subscription.request(1);
        assertEquals(1, c.sizes.size());
        c.subscription.request(2);
        assertEquals(3, c.sizes.size());
        c.subscription.request(Long.MAX_VALUE);
        assertTrue(c.complete);
        assertEquals(1 + 5 + 1, c.sizes.size()); // head, 5 buffers (300,000 B), tail
    }

    @Test
    void aOneShotStreamCannotBeSentTwiceAndIsNotClosed() {
        AtomicBoolean closed = new AtomicBoolean();
        InputStream in = new ByteArrayInputStream(new byte[1000]) {
            @Override
            public void close() throws IOException {
                closed.set(true);
            }
        };
        MultipartBodyPublisher p = new MultipartBodyPublisher("B", "x", null, UploadSource.of(in, -1), null);
        assertEquals(-1, p.contentLength(), "unknown length: sent chunked");
        Collector first = collect(p);
        assertTrue(first.complete);
        assertFalse(closed.get(), "the caller's stream is left open");
        Collector second = collect(p);
        assertNotNull(second.error);
        assertInstanceOf(PullPublisher.SourceException.class, second.error);
    }

    @Test
    void aSourceShorterOrLongerThanDeclaredFails() {
        Collector shorter = collect(new MultipartBodyPublisher("B", "x", null, UploadSource.of(new ByteArrayInputStream(new byte[10]), 20), null));
        assertInstanceOf(PullPublisher.SourceException.class, shorter.error);
        assertTrue(shorter.error.getMessage().contains("10 of its 20"), shorter.error.getMessage());
        Collector longer = collect(new MultipartBodyPublisher("B", "x", null, UploadSource.of(new ByteArrayInputStream(new byte[30]), 20), null));
        assertInstanceOf(PullPublisher.SourceException.class, longer.error);
    }

    @Test
    void cancelClosesTheSource() throws Exception {
        Path path = dir.resolve("big.bin");
        Files.write(path, new byte[500_000]);
        MultipartBodyPublisher p = new MultipartBodyPublisher("B", "x", null, UploadSource.of(path), null);
        Collector c = new Collector(0);
        p.subscribe(c);
        c.subscription.request(2);
        c.subscription.cancel();
        c.subscription.request(5);
        assertEquals(2, c.sizes.size());
        assertFalse(c.complete);
        assertNull(p.sha256(), "an incomplete attempt leaves no hash");
    }

    @Test
    void theJdkClientSendsItAsIsChunkedOrWithALength() throws Exception {
        byte[] content = new byte[150_000];
        new Random(3).nextBytes(content);
        try (FakeServer fake = new FakeServer((ex, n) -> FakeServer.json(ex, 200, "{}"))) {
            java.net.http.HttpClient http = java.net.http.HttpClient.newBuilder().version(java.net.http.HttpClient.Version.HTTP_1_1).build();
            for (UploadSource source : List.of(UploadSource.of(content), UploadSource.of(new ByteArrayInputStream(content), -1))) {
                MultipartBodyPublisher p = new MultipartBodyPublisher("BOUND", "f.bin", null, source, null);
                http.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create(fake.baseUrl() + "/files/upload"))
                        .header("Content-Type", p.contentType()).POST(p).build(), java.net.http.HttpResponse.BodyHandlers.discarding());
            }
            assertEquals(2, fake.requests.size());
            assertEquals(String.valueOf(collect(new MultipartBodyPublisher("BOUND", "f.bin", null, UploadSource.of(content), null)).bytes.size()),
                    fake.requests.get(0).header("Content-Length"));
            assertEquals("chunked", fake.requests.get(1).header("Transfer-Encoding"));
            assertArrayEquals(fake.requests.get(0).body(), fake.requests.get(1).body());
        }
    }
}
