package dev.fileshare;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;

/** What an upload reads: a path or bytes (read again for each attempt), or a one-shot stream. */
final class UploadSource {
    final String name;
    /** Bytes, or -1 when unknown. */
    final long size;
    /** Whether the bytes can be read again from the start (a path or bytes). */
    final boolean replayable;
    private final Path path;
    private final byte[] bytes;
    private final InputStream stream;
    private boolean streamTaken;

    private UploadSource(String name, long size, Path path, byte[] bytes, InputStream stream) {
        this.name = name;
        this.size = size;
        this.path = path;
        this.bytes = bytes;
        this.stream = stream;
        this.replayable = stream == null;
    }

    static UploadSource of(Path path) {
        if (path == null) throw new ConfigurationException("the upload source is null");
        if (!Files.isRegularFile(path)) throw new ConfigurationException("not a readable file: " + path);
        long size;
        try {
            size = Files.size(path);
        } catch (IOException e) {
            throw new ConfigurationException("cannot read the size of " + path + ": " + e.getMessage());
        }
        Path fileName = path.getFileName();
        return new UploadSource(fileName == null ? null : fileName.toString(), size, path, null, null);
    }

    static UploadSource of(byte[] bytes) {
        if (bytes == null) throw new ConfigurationException("the upload source is null");
        return new UploadSource(null, bytes.length, null, bytes, null);
    }

    static UploadSource of(InputStream stream, long size) {
        if (stream == null) throw new ConfigurationException("the upload source is null");
        return new UploadSource(null, size, null, null, stream);
    }

    /** The bytes from the start; a one-shot stream can be opened once only. */
    synchronized InputStream open() throws IOException {
        if (path != null) return Files.newInputStream(path);
        if (bytes != null) return new ByteArrayInputStream(bytes);
        if (streamTaken) throw new IOException("the upload stream was already read and cannot be sent again");
        streamTaken = true;
        return new InputStream() {
            // The caller's stream: read it, but leave closing it to the caller.
            @Override
            public int read() throws IOException {
                return stream.read();
            }

            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                return stream.read(b, off, len);
            }
        };
    }
}
