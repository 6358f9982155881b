package dev.fileshare;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.InputStream;
import java.io.PushbackInputStream;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.function.LongConsumer;

/** Resumable uploads through {@code /uploads}: tus 1.0.0 with the creation and checksum extensions. */
final class TusUploader {
    static final String TUS_VERSION = "1.0.0";
    private static final int SLICE = 256 * 1024;

    private TusUploader() {}

    private static List<String> list(String header) {
        List<String> values = new ArrayList<>();
        if (header == null) return values;
        for (String v : header.split(",")) values.add(v.trim());
        return values;
    }

    /** Asks the server once; any failure means no resumable uploads. */
    static TusCapabilities detect(Transport transport) {
        try {
            HttpRequest request = transport.request(transport.url("/uploads"), false)
                    .method("OPTIONS", HttpRequest.BodyPublishers.noBody())
                    .build();
            HttpResponse<InputStream> response = transport.send(request, null);
            transport.readText(response);
            var headers = response.headers();
            List<String> versions = list(headers.firstValue("tus-version").orElse(null));
            List<String> extensions = list(headers.firstValue("tus-extension").orElse(null));
            List<String> algorithms = list(headers.firstValue("tus-checksum-algorithm").orElse(null));
            Long maxSize = Errors.headerNumber(headers, "tus-max-size");
            boolean available = response.statusCode() < 300 && versions.contains(TUS_VERSION) && extensions.contains("creation");
            return new TusCapabilities(available, extensions.contains("checksum") && algorithms.contains("sha256"), maxSize);
        } catch (FileshareException e) {
            if (Thread.currentThread().isInterrupted()) throw e;
            return TusCapabilities.NONE;
        }
    }

    private static String metadataValue(String value) {
        return Base64.getEncoder().encodeToString(value.getBytes(StandardCharsets.UTF_8));
    }

    /** Reads a source in order into the chunk buffer; peeks so that a full chunk knows whether it is the last. */
    private static final class ChunkReader implements AutoCloseable {
        private final PushbackInputStream in;
        boolean ended;

        ChunkReader(InputStream in) {
            this.in = new PushbackInputStream(in, 1);
        }

        int fill(byte[] buffer, int from) throws IOException {
            int end = from;
            while (end < buffer.length) {
                int n = in.read(buffer, end, buffer.length - end);
                if (n < 0) {
                    ended = true;
                    break;
                }
                end += n;
            }
            if (end == buffer.length && !ended) {
                int next = in.read();
                if (next < 0) ended = true;
                else in.unread(next);
            }
            return end;
        }

        /** Reads the first {@code count} bytes into {@code digest} only (the server has them). */
        void skip(long count, MessageDigest digest) throws IOException {
            byte[] buffer = new byte[(int) Math.min(SLICE, Math.max(1, count))];
            for (long left = count; left > 0; ) {
                int n = in.read(buffer, 0, (int) Math.min(buffer.length, left));
                if (n < 0) throw new IOException("the source ended before the " + count + " bytes the server already has");
                digest.update(buffer, 0, n);
                left -= n;
            }
        }

        @Override
        public void close() {
            try {
                in.close();
            } catch (IOException ignored) {
                // nothing to do
            }
        }
    }

    /** A chunk of the buffer as a request body, handed out in 256 KiB slices. */
    static final class ChunkPublisher extends PullPublisher {
        private final byte[] data;
        private final int length;
        private final LongConsumer onBytes;

        ChunkPublisher(byte[] data, int length, LongConsumer onBytes) {
            this.data = data;
            this.length = length;
            this.onBytes = onBytes;
        }

        @Override
        public long contentLength() {
            return length;
        }

        @Override
        protected Producer start() {
            return new Producer() {
                int at;

                @Override
                public ByteBuffer next() {
                    if (at >= length) return null;
                    int n = Math.min(SLICE, length - at);
                    ByteBuffer slice = ByteBuffer.wrap(data, at, n).slice().asReadOnlyBuffer();
                    at += n;
                    if (onBytes != null) onBytes.accept(at);
                    return slice;
                }

                @Override
                public void close() {}
            };
        }
    }

    /**
     * Uploads through tus: create, then PATCH chunk after chunk with {@code Upload-Checksum}. A
     * chunk that fails with a retryable error, 409, 423 or 460 is resumed where the server stands
     * (HEAD), up to {@code maxRetries} times in a row; each chunk that gets through resets the count.
     * An upload that fails is deleted, unless the caller gave their own idempotency key (a later call
     * with it is answered with this upload and continues it) and the server did not refuse it for good.
     */
    static FileInfo upload(Transport transport, UploadSource source, String filename, UploadOptions options,
                           int chunkSize, boolean checksum) {
        String contentType = options.contentType();
        String expiresIn = options.expiresInHeader();
        long size = source.size;
        StringBuilder metadata = new StringBuilder("filename ").append(metadataValue(filename));
        if (contentType != null) metadata.append(",filetype ").append(metadataValue(contentType));
        URI createUrl = transport.url("/uploads");

        if (options.uploadUrl() != null) {
            return continueUpload(transport, source, options, URI.create(options.uploadUrl()), chunkSize, checksum);
        }
        String key = transport.idempotencyKeyFor(options.idempotencyKey());
        Transport.Result created = transport.requestJson(() -> {
            HttpRequest.Builder b = transport.request(createUrl, true)
                    .header("Tus-Resumable", TUS_VERSION)
                    .header("Upload-Metadata", metadata.toString())
                    .header(IdempotencyKey.HEADER, key);
            if (expiresIn != null) b.header("Fileshare-Expires-In", expiresIn);
            if (size < 0) b.header("Upload-Defer-Length", "1");
            else b.header("Upload-Length", Long.toString(size));
            return b.POST(HttpRequest.BodyPublishers.noBody()).build();
        });
        String location = created.header("location");
        if (location == null) throw new FileshareException("the server created an upload without a Location");
        URI uploadUrl = createUrl.resolve(location);
        String fileId = created.header("fileshare-file-id");
        long offset = 0;
        boolean ownKey = transport.ownIdempotencyKey(options.idempotencyKey());
        try {
            if (options.onUploadCreated() != null) options.onUploadCreated().accept(uploadUrl.toString());
            if (IdempotencyKey.replayed(created)) {
                // The upload an earlier request with this key created: it may have moved on since.
                Transport.Result head = head(transport, uploadUrl);
                offset = offsetOf(head);
                fileId = head.header("fileshare-file-id");
            }
        } catch (RuntimeException e) {
            if (!options.keepOnFailure() && !(ownKey && !options.keepOnFailureSet() && Retry.isTransient(e))) abandon(transport, uploadUrl);
            throw e;
        }
        return send(transport, source, options, uploadUrl, offset, fileId, chunkSize, checksum, ownKey);
    }

    /** Continues the upload at {@code uploadUrl} (a {@code HEAD} tells where it stands). */
    private static FileInfo continueUpload(Transport transport, UploadSource source, UploadOptions options, URI uploadUrl,
                                           int chunkSize, boolean checksum) {
        Transport.Result head = head(transport, uploadUrl);
        long offset = offsetOf(head);
        Long length = Errors.headerNumber(head.headers(), "upload-length");
        if (length != null && source.size >= 0 && length != source.size) {
            throw new ConfigurationException("the upload at " + Log.safe(uploadUrl) + " is " + length
                    + " bytes long, the source " + source.size + ": not the same file");
        }
        if (source.size >= 0 && offset > source.size) {
            throw new ConfigurationException("the upload at " + Log.safe(uploadUrl) + " holds " + offset
                    + " bytes, more than the source's " + source.size);
        }
        transport.log.info(() -> "continuing the upload " + Log.safe(uploadUrl) + " from byte " + offset);
        return send(transport, source, options, uploadUrl, offset, head.header("fileshare-file-id"), chunkSize, checksum,
                transport.ownIdempotencyKey(options.idempotencyKey()));
    }

    /** Sends the source from {@code offset} on (the bytes before it are read and hashed only), then fetches the file. */
    private static FileInfo send(Transport transport, UploadSource source, UploadOptions options, URI uploadUrl, long startOffset,
                                 String knownFileId, int chunkSize, boolean checksum, boolean ownKey) {
        ProgressListener progress = options.onProgress();
        Retry retry = transport.retry;
        long size = source.size;
        long offset = startOffset;
        String fileId = knownFileId;
        MessageDigest hasher = Sha256.newDigest();
        boolean finished = false;
        boolean keep = options.keepOnFailure();
        if (progress != null) progress.onProgress(offset, size);

        try (ChunkReader reader = new ChunkReader(source.open())) {
            reader.skip(offset, hasher); // the bytes the server has already
            if (fileId == null) {
                byte[] buffer = new byte[(int) Math.max(1, size < 0 ? chunkSize : Math.min(chunkSize, size))];
                int filled = 0;
                int failures = 0;
                boolean needsFill = true;
                while (true) {
                    if (needsFill) filled = reader.fill(buffer, filled);
                    needsFill = false;
                    boolean last = reader.ended;
                    final long chunkStart = offset;
                    final int chunkLength = filled;
                    HttpRequest.Builder b = transport.request(uploadUrl, true)
                            .header("Tus-Resumable", TUS_VERSION)
                            .header("Upload-Offset", Long.toString(chunkStart))
                            .header("Content-Type", "application/offset+octet-stream");
                    if (checksum) b.header("Upload-Checksum", "sha256 " + Sha256.base64(buffer, 0, chunkLength));
                    if (size < 0 && last) b.header("Upload-Length", Long.toString(chunkStart + chunkLength));
                    Transport.Activity activity = new Transport.Activity();
                    LongConsumer onBytes = sent -> {
                        activity.touch();
                        if (progress != null) progress.onProgress(chunkStart + Math.min(sent, chunkLength), size);
                    };
                    HttpRequest patch = b.method("PATCH", new ChunkPublisher(buffer, chunkLength, onBytes)).build();
                    long newOffset;
                    try {
                        Transport.Result answer = transport.exchangeJson(patch, activity);
                        newOffset = offsetOf(answer);
                        fileId = answer.header("fileshare-file-id");
                        failures = 0;
                    } catch (FileshareException error) {
                        Integer status = error.statusOrNull();
                        boolean conflict = error instanceof BadRequestException && status != null
                                && (status == 409 || status == 423 || status == 460);
                        if (!(Retry.isRetryable(error) || conflict) || failures >= retry.maxRetries
                                || Thread.currentThread().isInterrupted()) {
                            throw error;
                        }
                        failures++;
                        if (status == null || status != 409) retry.pause(failures - 1, error);
                        Transport.Result head = head(transport, uploadUrl);
                        newOffset = offsetOf(head);
                        fileId = head.header("fileshare-file-id");
                    }
                    if (newOffset < chunkStart || newOffset > chunkStart + chunkLength) {
                        throw new FileshareException("the upload stands at offset " + newOffset + ", outside the chunk sent ("
                                + chunkStart + "-" + (chunkStart + chunkLength) + "); start a new upload");
                    }
                    // The bytes the server confirmed go into the whole-file SHA-256; the rest is sent again.
                    int kept = (int) (newOffset - chunkStart);
                    hasher.update(buffer, 0, kept);
                    if (kept > 0 && kept < filled) System.arraycopy(buffer, kept, buffer, 0, filled - kept);
                    filled -= kept;
                    offset = newOffset;
                    if (progress != null) progress.onProgress(offset, size);
                    if (fileId != null) break;
                    if (filled == 0 && last) {
                        if (size >= 0 && offset == size) break; // complete, though the answer named no file
                        throw new FileshareException("the source ended at " + offset + " bytes, short of its declared "
                                + (size < 0 ? "?" : Long.toString(size)) + " bytes");
                    }
                    needsFill = kept > 0;
                }
            }
            finished = true;
        } catch (IOException e) {
            if (!options.keepOnFailureSet()) keep |= ownKey; // the caller's source failed: a later call with the key may continue
            throw new FileshareException("could not read the upload source: " + e.getMessage(), e);
        } catch (FileshareException e) {
            // Not refused for good (no connection, the server busy, interrupted): a later call with the key may continue.
            if (!options.keepOnFailureSet()) keep |= ownKey && (Retry.isTransient(e) || Thread.currentThread().isInterrupted());
            throw e;
        } finally {
            if (!finished) {
                if (keep) transport.log.info(() -> "the unfinished upload " + Log.safe(uploadUrl) + " is kept: continue it with uploadUrl");
                else abandon(transport, uploadUrl);
            }
        }

        // The file the upload became, and its checksum.
        Transport.Result status = transport.requestJson(() -> transport.request(uploadUrl, true).GET().build());
        JsonNode raw = status.body() == null ? null : status.body().path("upload").get("file");
        if (raw == null || raw.isNull()) throw new FileshareException("the upload completed but the server names no file");
        FileInfo file = Json.fileInfo(raw);
        String actual = Sha256.hex(hasher.digest());
        if (!actual.equalsIgnoreCase(file.sha256())) {
            throw new IntegrityException("the server stored file " + file.fileId() + " with SHA-256 " + file.sha256()
                    + ", but the bytes sent hash to " + actual, file.sha256(), actual);
        }
        return file;
    }

    /** Where an upload stands: {@code Upload-Offset}, and {@code Fileshare-File-Id} once complete (HEAD, retried on its own). */
    private static Transport.Result head(Transport transport, URI uploadUrl) {
        return transport.requestJson(() -> transport.request(uploadUrl, true)
                .header("Tus-Resumable", TUS_VERSION)
                .method("HEAD", HttpRequest.BodyPublishers.noBody())
                .build());
    }

    private static long offsetOf(Transport.Result result) {
        String raw = result.header("upload-offset");
        try {
            return Long.parseLong(raw == null ? "" : raw.trim());
        } catch (NumberFormatException e) {
            throw new FileshareException("the server answered without a valid Upload-Offset (" + raw + ")");
        }
    }

    /** Gives the daily upload slot back; best effort (the server also expires unfinished uploads). */
    private static void abandon(Transport transport, URI uploadUrl) {
        boolean interrupted = Thread.interrupted();
        try {
            HttpRequest request = transport.request(uploadUrl, true)
                    .header("Tus-Resumable", TUS_VERSION)
                    .timeout(Duration.ofSeconds(5))
                    .DELETE()
                    .build();
            transport.readText(transport.send(request, null));
        } catch (RuntimeException ignored) {
            // best effort
        } finally {
            if (interrupted) Thread.currentThread().interrupt();
        }
    }
}
