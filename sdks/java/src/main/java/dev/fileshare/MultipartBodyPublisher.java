package dev.fileshare;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.function.LongConsumer;

/**
 * A {@code multipart/form-data} body with one file part named {@code file}, built on the fly: the
 * head, the source's bytes (read 64 KiB at a time as the HTTP client asks for them, hashed with
 * SHA-256 and counted as they go), the tail. Memory stays flat whatever the size. Each
 * subscription (attempt) starts over from the source's first byte and its own hash.
 */
final class MultipartBodyPublisher extends PullPublisher {
    static final int BUFFER_SIZE = 64 * 1024;
    private static final SecureRandom RANDOM = new SecureRandom();

    final String boundary;
    private final byte[] head;
    private final byte[] tail;
    private final UploadSource source;
    private final LongConsumer onBytes;
    private volatile String sha256;
    private volatile long bytesSent;

    /**
     * @param filename the part's file name
     * @param partType the part's content type
     * @param source the bytes
     * @param onBytes told the count of source bytes handed to the HTTP client so far (may be null)
     */
    MultipartBodyPublisher(String boundary, String filename, String partType, UploadSource source, LongConsumer onBytes) {
        if (boundary.isEmpty() || boundary.length() > 70) throw new IllegalArgumentException("a boundary has 1 to 70 characters");
        this.boundary = boundary;
        this.source = source;
        this.onBytes = onBytes;
        String type = partType == null ? "application/octet-stream" : partType.replaceAll("[\r\n]", "");
        this.head = ("--" + boundary + "\r\n"
                        + "Content-Disposition: form-data; name=\"file\"; filename=\"" + formFilename(filename) + "\"\r\n"
                        + "Content-Type: " + type + "\r\n\r\n")
                .getBytes(StandardCharsets.UTF_8);
        this.tail = ("\r\n--" + boundary + "--\r\n").getBytes(StandardCharsets.US_ASCII);
    }

    MultipartBodyPublisher(String filename, String partType, UploadSource source, LongConsumer onBytes) {
        this(randomBoundary(), filename, partType, source, onBytes);
    }

    /** A name quoted the way browsers' form encoding does it (and the server decodes). */
    static String formFilename(String name) {
        return name.replace("\"", "%22").replace("\r", "%0D").replace("\n", "%0A");
    }

    static String randomBoundary() {
        byte[] bytes = new byte[18];
        RANDOM.nextBytes(bytes);
        return "----fileshare-sdk-java-" + HexFormat.of().formatHex(bytes);
    }

    /** @return the request's {@code Content-Type} */
    String contentType() {
        return "multipart/form-data; boundary=" + boundary;
    }

    int headLength() {
        return head.length;
    }

    int tailLength() {
        return tail.length;
    }

    /** @return the hex SHA-256 of the source bytes of the last subscription that completed, or null */
    String sha256() {
        return sha256;
    }

    /** @return the source bytes of the last subscription that completed */
    long bytesSent() {
        return bytesSent;
    }

    @Override
    public long contentLength() {
        return source.size < 0 ? -1 : head.length + source.size + tail.length;
    }

    @Override
    protected Producer start() {
        return new Parts();
    }

    @Override
    protected void completed(Producer producer) {
        Parts parts = (Parts) producer;
        bytesSent = parts.sent;
        sha256 = HexFormat.of().formatHex(parts.digest.digest());
    }

    private final class Parts implements Producer {
        private int stage; // 0 head, 1 body, 2 tail, 3 done
        private InputStream in;
        private final MessageDigest digest = Sha256.newDigest();
        long sent;

        @Override
        public ByteBuffer next() throws IOException {
            switch (stage) {
                case 0:
                    stage = 1;
                    return ByteBuffer.wrap(head);
                case 1:
                    if (in == null) in = source.open();
                    long left = source.size < 0 ? BUFFER_SIZE : Math.min(BUFFER_SIZE, source.size - sent);
                    if (left > 0) {
                        byte[] buffer = new byte[(int) left];
                        int n = in.readNBytes(buffer, 0, buffer.length);
                        if (n > 0) {
                            digest.update(buffer, 0, n);
                            sent += n;
                            if (onBytes != null) onBytes.accept(sent);
                            return ByteBuffer.wrap(buffer, 0, n);
                        }
                    }
                    if (source.size >= 0 && sent != source.size) {
                        throw new SourceException("the upload source ended after " + sent + " of its " + source.size + " bytes", null);
                    }
                    if (source.size >= 0 && in.read() != -1) {
                        throw new SourceException("the upload source holds more than its declared " + source.size + " bytes", null);
                    }
                    stage = 2;
                    return ByteBuffer.wrap(tail);
                default:
                    stage = 3;
                    return null;
            }
        }

        @Override
        public void close() {
            if (in != null) {
                try {
                    in.close();
                } catch (IOException ignored) {
                    // nothing to do
                }
                in = null;
            }
        }
    }
}
