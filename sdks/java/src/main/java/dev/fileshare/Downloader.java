package dev.fileshare;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Streams a link to a path through a download grant: a {@code POST} to the link counts one download
 * and answers with a grant URL ({@link Grants}), which serves the bytes without counting again.
 * Continues a partial file with {@code Range} + {@code If-Range}, and a dropped connection within
 * the retry budget, always from the same grant; checks the result against the {@code ETag} (the
 * file's SHA-256).
 */
final class Downloader {
    private static final Pattern ETAG = Pattern.compile("^(?:W/)?\"([0-9a-fA-F]{64})\"$");
    private static final Pattern CONTENT_RANGE = Pattern.compile("^bytes (\\d+)-(\\d+)/(\\d+)$");
    private static final int BUFFER = 64 * 1024;

    private final Transport transport;
    private final Grants grants;
    private final String linkText;
    private final URI link;
    private final Path destination;
    /** The stream written instead of a path, or null. */
    private final OutputStream stream;
    private final ProgressListener progress;
    private final boolean resume;
    private final String password;
    /** The grant URL the bytes come from, once known. */
    private URI grant;
    /** Whether {@link #grant} is one an earlier call obtained (it may have ended since). */
    private boolean remembered;
    private String expected;
    private long total;

    private MessageDigest hasher = Sha256.newDigest();
    private long offset;
    private long resumedFrom;

    Downloader(Transport transport, Grants grants, String link, String sha256, long size, Path destination, DownloadOptions options) {
        this(transport, grants, link, sha256, size, destination, null, options);
        if (destination == null) throw new ConfigurationException("download needs a destination path");
    }

    Downloader(Transport transport, Grants grants, String link, String sha256, long size, OutputStream stream, DownloadOptions options) {
        this(transport, grants, link, sha256, size, null, stream, options);
        if (stream == null) throw new ConfigurationException("download needs a destination stream");
    }

    /** {@code options} null: the defaults. */
    private Downloader(Transport transport, Grants grants, String link, String sha256, long size, Path destination,
                       OutputStream stream, DownloadOptions given) {
        DownloadOptions options = given == null ? DownloadOptions.defaults() : given;
        this.stream = stream;
        this.transport = transport;
        this.grants = grants;
        this.linkText = link;
        this.link = parse(link);
        this.expected = sha256 == null ? null : sha256.toLowerCase();
        this.total = size;
        this.destination = destination;
        this.progress = options.onProgress();
        this.resume = options.resume() && stream == null;
        this.password = options.password();
    }

    private static URI parse(String link) {
        try {
            if (link != null && link.matches("(?i)^https?://.+")) return URI.create(link);
        } catch (IllegalArgumentException e) {
            // the message below
        }
        throw new ConfigurationException("download needs a file record or a link's URL (an http(s) URL)");
    }

    /**
     * The grant URL: the one this client remembers for the link and destination, else a new one
     * (a POST: one download counted). Errors of the POST (404, 401 {@code invalid_password}, 429) are thrown.
     */
    private URI grant() {
        if (grant == null) {
            grant = destination == null ? null : grants.remembered(linkText, destination);
            remembered = grant != null;
            if (grant == null) {
                Grants.Grant fresh = grants.obtain(transport, link, password);
                if (destination != null) grants.remember(linkText, destination, fresh);
                grant = fresh.url();
            }
        }
        return grant;
    }

    static String etagSha256(String etag) {
        if (etag == null) return null;
        Matcher m = ETAG.matcher(etag.trim());
        return m.matches() ? m.group(1).toLowerCase() : null;
    }

    private void report() {
        if (progress != null) progress.onProgress(offset, total);
    }

    /** Where the bytes go: a file (which can start over) or a stream (which cannot). */
    interface Sink {
        void write(ByteBuffer bytes) throws IOException;

        void restart() throws IOException;
    }

    private static Sink sink(FileChannel channel) {
        return new Sink() {
            @Override
            public void write(ByteBuffer bytes) throws IOException {
                while (bytes.hasRemaining()) channel.write(bytes);
            }

            @Override
            public void restart() throws IOException {
                channel.truncate(0);
                channel.position(0);
            }
        };
    }

    private Sink sink(OutputStream out) {
        return new Sink() {
            @Override
            public void write(ByteBuffer bytes) throws IOException {
                out.write(bytes.array(), bytes.arrayOffset() + bytes.position(), bytes.remaining());
                bytes.position(bytes.limit());
            }

            @Override
            public void restart() {
                if (offset > 0) {
                    throw new FileshareException("the file behind the link changed after " + offset
                            + " bytes were written to the stream; download it again");
                }
            }
        };
    }

    private void restart(Sink sink) throws IOException {
        sink.restart();
        offset = 0;
        resumedFrom = 0;
        hasher = Sha256.newDigest();
    }

    /** A HEAD on the grant, for a resumed download of a bare link: its ETag and length. */
    private void learnFromHead() {
        URI source = grant();
        try {
            HttpRequest request = transport.request(source, false).header("Accept", "*/*")
                    .method("HEAD", HttpRequest.BodyPublishers.noBody()).build();
            HttpResponse<InputStream> response = transport.retry.run(n -> transport.send(request, null));
            Transport.discard(response);
            if (response.statusCode() == 200) {
                expected = etagSha256(response.headers().firstValue("etag").orElse(null));
                Long length = Errors.headerNumber(response.headers(), "content-length");
                if (length != null) total = length;
            }
        } catch (FileshareException e) {
            // the GET will tell
        }
    }

    DownloadResult run() {
        if (stream != null) {
            try {
                DownloadResult result = loop(sink(stream));
                stream.flush();
                return result;
            } catch (CloneNotSupportedException e) {
                throw new IllegalStateException(e);
            } catch (IOException e) {
                throw new FileshareException("cannot write to the destination stream: " + e.getMessage(), e);
            }
        }
        long existing = 0;
        if (resume && Files.isRegularFile(destination)) {
            try {
                existing = Files.size(destination);
            } catch (IOException e) {
                existing = 0;
            }
        }
        if (existing > 0 && (expected == null || total < 0)) learnFromHead();
        Path parent = destination.toAbsolutePath().getParent();
        try {
            if (parent != null) Files.createDirectories(parent);
        } catch (IOException e) {
            throw new FileshareException("cannot create the folder of " + destination + ": " + e.getMessage(), e);
        }
        try (FileChannel channel = FileChannel.open(destination, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.READ)) {
            if (existing > 0 && expected != null && total >= 0 && existing <= total) {
                hashExisting(channel, existing);
                offset = resumedFrom = existing;
                if (offset == total) {
                    String actual = Sha256.hex(((MessageDigest) hasher.clone()).digest());
                    if (actual.equals(expected)) {
                        channel.truncate(offset);
                        report();
                        return new DownloadResult(offset, actual, resumedFrom);
                    }
                    restart(sink(channel)); // the complete length, but other bytes: start again
                }
            }
            if (offset == 0) restart(sink(channel));
            channel.position(offset);
            channel.truncate(offset);
            return loop(sink(channel));
        } catch (CloneNotSupportedException e) {
            throw new IllegalStateException(e);
        } catch (IOException e) {
            throw new FileshareException("cannot write " + destination + ": " + e.getMessage(), e);
        }
    }

    private void hashExisting(FileChannel channel, long length) throws IOException {
        ByteBuffer buffer = ByteBuffer.allocate(BUFFER);
        long at = 0;
        while (at < length) {
            buffer.clear();
            buffer.limit((int) Math.min(BUFFER, length - at));
            int n = channel.read(buffer, at);
            if (n < 0) break;
            buffer.flip();
            hasher.update(buffer);
            at += n;
        }
    }

    private DownloadResult loop(Sink channel) throws IOException, CloneNotSupportedException {
        int failures = 0;
        while (true) {
            long before = offset;
            grant(); // outside the retries below: a POST that may have counted is never sent again
            try {
                if (attempt(channel)) break;
            } catch (NotFoundException gone) {
                if (!remembered) throw gone;
                // A remembered grant that ended (revoked, rotated, its hour up): ask the link for a new one.
                grants.forget(linkText, destination);
                grant = null;
                remembered = false;
            } catch (FileshareException error) {
                if (offset > before) failures = 0; // progress was made: the budget starts again
                if (!Retry.isRetryable(error) || failures >= transport.retry.maxRetries || Thread.currentThread().isInterrupted()) {
                    throw error;
                }
                transport.retry.pause(failures, error);
                failures++;
            }
        }
        String actual = Sha256.hex(hasher.digest());
        if (expected != null && !actual.equals(expected)) {
            throw new IntegrityException("the downloaded bytes hash to " + actual + ", not to the ETag's " + expected
                    + (resumedFrom > 0 ? " (the download continued a partial file of " + resumedFrom
                            + " bytes: download again with resume(false))" : ""), expected, actual);
        }
        return new DownloadResult(offset, actual, resumedFrom);
    }

    /** One GET from {@code offset} on, written to the channel; false when it must start over at once. */
    private boolean attempt(Sink channel) throws IOException {
        HttpRequest.Builder b = transport.request(grant(), false).header("Accept", "*/*");
        if (offset > 0) {
            b.header("Range", "bytes=" + offset + "-");
            if (expected != null) b.header("If-Range", "\"" + expected + "\"");
        }
        HttpResponse<InputStream> response = transport.send(b.GET().build(), null);
        int status = response.statusCode();
        try (InputStream body = response.body()) {
            if (status == 416 && offset > 0) {
                transport.readText(response);
                restart(channel); // the partial file is longer than the file now behind the link
                return false;
            }
            if (status != 200 && status != 206) {
                String text = transport.readText(response);
                throw Errors.fromResponse(status, response.headers(), text);
            }
            String etag = etagSha256(response.headers().firstValue("etag").orElse(null));
            // A whole file (200) is checked against the ETag it came with; a range, against the one asked for.
            if (etag != null && (status == 200 || expected == null)) expected = etag;
            if (status == 200) {
                Long length = Errors.headerNumber(response.headers(), "content-length");
                if (length != null) total = length;
                if (offset > 0) restart(channel); // the server sent the whole file (If-Range did not match)
            } else {
                Matcher m = CONTENT_RANGE.matcher(response.headers().firstValue("content-range").orElse(""));
                if (!m.matches() || Long.parseLong(m.group(1)) != offset) {
                    throw new FileshareException("unexpected Content-Range " + response.headers().firstValue("content-range").orElse(null)
                            + " for a download from byte " + offset);
                }
                total = Long.parseLong(m.group(3));
            }
            report();
            byte[] buffer = new byte[BUFFER];
            while (true) {
                int n;
                try {
                    n = body.read(buffer);
                } catch (IOException e) {
                    throw transport.translate(e);
                }
                if (n < 0) break;
                if (n == 0) continue;
                hasher.update(buffer, 0, n);
                channel.write(ByteBuffer.wrap(buffer, 0, n));
                offset += n;
                report();
            }
            if (total >= 0 && offset < total) {
                throw Errors.connection("the connection ended after " + offset + " of " + total + " bytes", null);
            }
            return true;
        }
    }
}
