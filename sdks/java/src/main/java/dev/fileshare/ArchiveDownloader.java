package dev.fileshare;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Several files as one ZIP ({@code POST /files/archive}), streamed to a path or a stream. The
 * server makes the archive as it sends it, so there is no {@code Range} to continue one: a
 * connection lost before the first byte is retried, one lost later starts the archive again where
 * the destination can be rewritten (a path), and a path that did not get the whole archive is
 * removed, so that a broken ZIP is never left where a finished one is expected.
 */
final class ArchiveDownloader {
    /** The most files one archive may hold (the server's limit). */
    static final int MAX_FILES = 1000;
    private static final Pattern FILENAME = Pattern.compile("filename=\"([^\"]*)\"");
    private static final int BUFFER = 64 * 1024;

    private final Transport transport;
    private final String body;
    private final ProgressListener progress;
    private long received;
    private long total = -1;

    ArchiveDownloader(Transport transport, List<Long> fileIds, ProgressListener progress) {
        this.transport = transport;
        this.body = Json.write(Map.of("ids", ids(fileIds)));
        this.progress = progress;
    }

    static List<Long> ids(List<Long> fileIds) {
        if (fileIds == null || fileIds.isEmpty()) throw new ConfigurationException("downloadArchive needs at least one file id");
        if (fileIds.size() > MAX_FILES) throw new ConfigurationException("downloadArchive takes at most " + MAX_FILES + " file ids");
        List<Long> ids = new ArrayList<>(fileIds.size());
        for (Long id : fileIds) {
            if (id == null || id < 1) throw new ConfigurationException("not a file id: " + id);
            ids.add(id);
        }
        return ids;
    }

    /** Where the bytes go: a file (which can start over) or a stream (which cannot). */
    private interface Sink {
        void write(byte[] bytes, int length) throws IOException;

        /** Whether the archive can be taken again from its first byte. */
        boolean canRestart();

        void restart() throws IOException;
    }

    ArchiveResult to(Path destination) {
        if (destination == null) throw new ConfigurationException("downloadArchive needs a destination path");
        Path parent = destination.toAbsolutePath().getParent();
        // Opened (and truncated) at the first byte: a refused call leaves what was there; one that
        // wrote and then failed removes the file, which no longer holds what was there.
        FileChannel[] channel = {null};
        boolean finished = false;
        try {
            if (parent != null) Files.createDirectories(parent);
            ArchiveResult result = loop(new Sink() {
                @Override
                public void write(byte[] bytes, int length) throws IOException {
                    if (channel[0] == null) {
                        channel[0] = FileChannel.open(destination, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                                StandardOpenOption.TRUNCATE_EXISTING);
                    }
                    ByteBuffer buffer = ByteBuffer.wrap(bytes, 0, length);
                    while (buffer.hasRemaining()) channel[0].write(buffer);
                }

                @Override
                public boolean canRestart() {
                    return true;
                }

                @Override
                public void restart() throws IOException {
                    if (channel[0] == null) return;
                    channel[0].truncate(0);
                    channel[0].position(0);
                }
            });
            if (channel[0] == null) Files.write(destination, new byte[0]);
            finished = true;
            return result;
        } catch (IOException e) {
            throw new FileshareException("cannot write " + destination + ": " + e.getMessage(), e);
        } finally {
            if (channel[0] != null) {
                try {
                    channel[0].close();
                } catch (IOException ignored) {
                    // the result or the error being thrown says more
                }
                if (!finished) {
                    try {
                        Files.deleteIfExists(destination);
                    } catch (IOException ignored) {
                        // the error being thrown says more
                    }
                }
            }
        }
    }

    ArchiveResult to(OutputStream out) {
        if (out == null) throw new ConfigurationException("downloadArchive needs a destination stream");
        try {
            ArchiveResult result = loop(new Sink() {
                @Override
                public void write(byte[] bytes, int length) throws IOException {
                    out.write(bytes, 0, length);
                }

                @Override
                public boolean canRestart() {
                    return false;
                }

                @Override
                public void restart() {}
            });
            out.flush();
            return result;
        } catch (IOException e) {
            throw new FileshareException("cannot write to the destination stream: " + e.getMessage(), e);
        }
    }

    private ArchiveResult loop(Sink sink) throws IOException {
        int failures = 0;
        while (true) {
            try {
                return attempt(sink);
            } catch (FileshareException error) {
                // The budget is never given back: an archive does not resume, so every attempt downloads it from
                // its first byte, and a store that cuts each attempt near the same offset must not buy more of them.
                boolean canRetry = received == 0 || sink.canRestart();
                if (!Retry.isRetryable(error) || failures >= transport.retry.maxRetries || !canRetry
                        || Thread.currentThread().isInterrupted()) {
                    throw error;
                }
                transport.retry.pause(failures, error);
                failures++;
            }
        }
    }

    private ArchiveResult attempt(Sink sink) throws IOException {
        HttpRequest request = transport.request(transport.url("/files/archive"), true)
                .header("Accept", "application/zip, application/json")
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build();
        HttpResponse<InputStream> response = transport.send(request, null);
        int status = response.statusCode();
        try (InputStream in = response.body()) {
            if (status != 200) throw Errors.fromResponse(status, response.headers(), transport.readText(response));
            if (received > 0) {
                // A second attempt after bytes were written: only a path can take the archive again.
                sink.restart();
                received = 0;
            }
            Long length = Errors.headerNumber(response.headers(), "content-length");
            total = length == null ? -1 : length;
            report();
            byte[] buffer = new byte[BUFFER];
            while (true) {
                int n;
                try {
                    n = in.read(buffer);
                } catch (IOException e) {
                    throw transport.translate(e);
                }
                if (n < 0) break;
                if (n == 0) continue;
                sink.write(buffer, n);
                received += n;
                report();
            }
            // The server cuts the connection when a stored file fails mid-archive: never a short ZIP taken as whole.
            if (total >= 0 && received != total) {
                throw Errors.connection("the connection ended after " + received + " of " + total + " bytes", null);
            }
            Matcher m = FILENAME.matcher(response.headers().firstValue("content-disposition").orElse(""));
            return new ArchiveResult(received, m.find() ? m.group(1) : null);
        }
    }

    private void report() {
        if (progress != null) progress.onProgress(received, total);
    }
}
