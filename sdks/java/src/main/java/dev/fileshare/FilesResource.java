package dev.fileshare;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.http.HttpRequest;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * The account's files: {@link #upload upload}, {@link #list list}, {@link #iterate iterate},
 * {@link #get get}, {@link #update update}, {@link #delete delete}. Obtain it with {@link FileshareClient#files()}.
 * Thread-safe.
 */
public final class FilesResource {
    private final FileshareClient client;
    private final Transport transport;

    FilesResource(FileshareClient client, Transport transport) {
        this.client = client;
        this.transport = transport;
    }

    /**
     * Uploads a file from disk, streaming it (memory stays flat whatever the size).
     *
     * @param path the file to upload; its name is the stored name unless {@code filename} is set
     * @return the stored file's record
     * @throws IntegrityException if the server's SHA-256 differs from the bytes sent
     * @throws LimitExceededException if the file is too large or the daily uploads are spent
     * @see #upload(Path, UploadOptions)
     */
    public FileInfo upload(Path path) {
        return upload(path, UploadOptions.defaults());
    }

    /**
     * Uploads a file from disk with options. Files of at least the client's
     * {@code resumableThreshold} (64 MiB) go through resumable uploads when the server offers them.
     * A failed attempt is retried (429, 500, 502, 503, 504, no connection) since a path can be read
     * again, with the same {@code Idempotency-Key}: an upload whose answer was lost is answered with
     * the file it stored, never stored twice.
     *
     * @param path the file to upload
     * @param options filename, content type, progress listener, resumable
     * @return the stored file's record
     */
    public FileInfo upload(Path path, UploadOptions options) {
        return upload(UploadSource.of(path), options);
    }

    /**
     * Uploads bytes held in memory, stored as {@code file}.
     *
     * @param bytes the content
     * @return the stored file's record
     */
    public FileInfo upload(byte[] bytes) {
        return upload(bytes, UploadOptions.defaults());
    }

    /**
     * Uploads bytes held in memory.
     *
     * @param bytes the content
     * @param options filename (default {@code file}), content type, progress listener, resumable
     * @return the stored file's record
     */
    public FileInfo upload(byte[] bytes, UploadOptions options) {
        return upload(UploadSource.of(bytes), options);
    }

    /**
     * Uploads what a stream holds, read as it is sent (the stream is not closed). Its length is
     * {@link UploadOptions.Builder#size(long) size} when given; otherwise the body is sent chunked
     * (or, resumable, with a deferred length). A one-shot stream is never sent twice: a multipart
     * upload of a stream is not retried, while resumable uploads resume from the buffered chunk.
     *
     * @param stream the content
     * @return the stored file's record
     */
    public FileInfo upload(InputStream stream) {
        return upload(stream, UploadOptions.defaults());
    }

    /**
     * Uploads what a stream holds, with options; see {@link #upload(InputStream)}.
     *
     * @param stream the content
     * @param options filename (default {@code file}), size, content type, progress listener, resumable
     * @return the stored file's record
     */
    public FileInfo upload(InputStream stream, UploadOptions options) {
        UploadOptions o = options == null ? UploadOptions.defaults() : options;
        return upload(UploadSource.of(stream, o.size()), o);
    }

    /**
     * {@link #upload(Path, UploadOptions)} on the client's executor.
     *
     * @param path the file to upload
     * @param options the options (may be null)
     * @return the stored file's record, or a failed future with the {@link FileshareException}
     */
    public CompletableFuture<FileInfo> uploadAsync(Path path, UploadOptions options) {
        return client.async(() -> upload(path, options));
    }

    /**
     * {@link #upload(InputStream, UploadOptions)} on the client's executor.
     *
     * @param stream the content
     * @param options the options (may be null)
     * @return the stored file's record, or a failed future with the {@link FileshareException}
     */
    public CompletableFuture<FileInfo> uploadAsync(InputStream stream, UploadOptions options) {
        return client.async(() -> upload(stream, options));
    }

    /**
     * {@link #upload(Path)} on the client's executor.
     *
     * @param path the file to upload
     * @return the stored file's record, or a failed future; cancelling it stops the upload
     */
    public CompletableFuture<FileInfo> uploadAsync(Path path) {
        return uploadAsync(path, null);
    }

    /**
     * {@link #upload(InputStream)} on the client's executor.
     *
     * @param stream the content
     * @return the stored file's record, or a failed future; cancelling it stops the upload
     */
    public CompletableFuture<FileInfo> uploadAsync(InputStream stream) {
        return uploadAsync(stream, null);
    }

    /**
     * {@link #upload(byte[], UploadOptions)} on the client's executor.
     *
     * @param bytes the content
     * @param options the options (may be null)
     * @return the stored file's record, or a failed future; cancelling it stops the upload
     */
    public CompletableFuture<FileInfo> uploadAsync(byte[] bytes, UploadOptions options) {
        return client.async(() -> upload(bytes, options));
    }

    /**
     * {@link #upload(byte[])} on the client's executor.
     *
     * @param bytes the content
     * @return the stored file's record, or a failed future; cancelling it stops the upload
     */
    public CompletableFuture<FileInfo> uploadAsync(byte[] bytes) {
        return uploadAsync(bytes, null);
    }

    /**
     * {@link #upload(Path, UploadOptions)} with options for this call (timeout, retries, extra
     * headers; its idempotency key unless {@code options} has one).
     *
     * @param path the file to upload
     * @param options the upload's options (may be null)
     * @param request the call's options
     * @return the stored file's record
     */
    public FileInfo upload(Path path, UploadOptions options, RequestOptions request) {
        return client.withOptions(request).files().upload(path, options);
    }

    /**
     * {@link #upload(byte[], UploadOptions)} with options for this call.
     *
     * @param bytes the content
     * @param options the upload's options (may be null)
     * @param request the call's options
     * @return the stored file's record
     */
    public FileInfo upload(byte[] bytes, UploadOptions options, RequestOptions request) {
        return client.withOptions(request).files().upload(bytes, options);
    }

    /**
     * {@link #upload(InputStream, UploadOptions)} with options for this call.
     *
     * @param stream the content
     * @param options the upload's options (may be null)
     * @param request the call's options
     * @return the stored file's record
     */
    public FileInfo upload(InputStream stream, UploadOptions options, RequestOptions request) {
        return client.withOptions(request).files().upload(stream, options);
    }

    /**
     * {@link #list(int, int)} with options for this call.
     *
     * @param page the page, from 1
     * @param limit files per page, 1 to 100
     * @param request the call's options
     * @return the files and the pagination
     */
    public FileList list(int page, int limit, RequestOptions request) {
        return client.withOptions(request).files().list(page, limit);
    }

    /**
     * {@link #list(FileListParams)} with options for this call.
     *
     * @param params the search, order and page (null: none)
     * @param request the call's options
     * @return the files and the pagination
     */
    public FileList list(FileListParams params, RequestOptions request) {
        return client.withOptions(request).files().list(params);
    }

    /**
     * {@link #get(long)} with options for this call.
     *
     * <pre>{@code client.files().get(id, RequestOptions.builder().timeout(Duration.ofSeconds(5)).build());}</pre>
     *
     * @param fileId the file's id
     * @param request the call's options
     * @return its record
     */
    public FileInfo get(long fileId, RequestOptions request) {
        return client.withOptions(request).files().get(fileId);
    }

    /**
     * {@link #update(long, FileUpdate)} with options for this call.
     *
     * @param fileId the file's id
     * @param update the change
     * @param request the call's options
     * @return the file's record as it is now
     */
    public FileInfo update(long fileId, FileUpdate update, RequestOptions request) {
        return client.withOptions(request).files().update(fileId, update);
    }

    /**
     * {@link #delete(long)} with options for this call.
     *
     * @param fileId the file's id
     * @param request the call's options
     */
    public void delete(long fileId, RequestOptions request) {
        client.withOptions(request).files().delete(fileId);
    }

    /**
     * The calls of this resource that return their HTTP answer too (status, headers such as
     * {@code RateLimit-Remaining}) in a {@link RawResponse}.
     *
     * <pre>{@code
     * RawResponse<FileInfo> raw = client.files().withRawResponse().get(id);
     * raw.rateLimitRemaining().ifPresent(left -> System.out.println(left + " requests left"));
     * }</pre>
     *
     * @return the raw variants; for any other call see {@link FileshareClient#withRawResponse(java.util.function.Function)}
     */
    public Raw withRawResponse() {
        return new Raw(this);
    }

    /** The calls of {@link FilesResource} with their HTTP answer; see {@link FilesResource#withRawResponse()}. */
    public static final class Raw {
        private final FilesResource files;

        private Raw(FilesResource files) {
            this.files = files;
        }

        /**
         * @param fileId the file's id
         * @return {@link FilesResource#get(long)}'s record and answer
         */
        public RawResponse<FileInfo> get(long fileId) {
            return Transport.capturing(() -> files.get(fileId));
        }

        /**
         * @param page the page, from 1
         * @param limit files per page, 1 to 100
         * @return {@link FilesResource#list(int, int)}'s page and answer
         */
        public RawResponse<FileList> list(int page, int limit) {
            return Transport.capturing(() -> files.list(page, limit));
        }

        /**
         * @param beforeId a file id; the files listed have lower ids
         * @param limit files per page, 1 to 100
         * @return {@link FilesResource#listBefore(long, int)}'s page and answer
         */
        public RawResponse<FileList> listBefore(long beforeId, int limit) {
            return Transport.capturing(() -> files.listBefore(beforeId, limit));
        }

        /**
         * @param params the search, order and page (null: none)
         * @return {@link FilesResource#list(FileListParams)}'s page and answer
         */
        public RawResponse<FileList> list(FileListParams params) {
            return Transport.capturing(() -> files.list(params));
        }

        /**
         * @param path the file to upload
         * @param options the options (may be null)
         * @return {@link FilesResource#upload(Path, UploadOptions)}'s record and its last answer
         */
        public RawResponse<FileInfo> upload(Path path, UploadOptions options) {
            return Transport.capturing(() -> files.upload(path, options));
        }

        /**
         * @param bytes the content
         * @param options the options (may be null)
         * @return {@link FilesResource#upload(byte[], UploadOptions)}'s record and its last answer
         */
        public RawResponse<FileInfo> upload(byte[] bytes, UploadOptions options) {
            return Transport.capturing(() -> files.upload(bytes, options));
        }

        /**
         * @param fileId the file's id
         * @param update the change
         * @return {@link FilesResource#update(long, FileUpdate)}'s record and answer
         */
        public RawResponse<FileInfo> update(long fileId, FileUpdate update) {
            return Transport.capturing(() -> files.update(fileId, update));
        }

        /**
         * @param fileId the file's id
         * @return {@link FilesResource#delete(long)}'s answer (its data is null)
         */
        public RawResponse<Void> delete(long fileId) {
            return Transport.capturing(() -> {
                files.delete(fileId);
                return null;
            });
        }
    }

    private FileInfo upload(UploadSource source, UploadOptions options) {
        UploadOptions o = options == null ? UploadOptions.defaults() : options;
        String filename = o.filename() != null ? o.filename() : source.name != null ? source.name : "file";
        boolean useTus = Boolean.TRUE.equals(o.resumable()) || o.uploadUrl() != null;
        if (o.resumable() == null && source.size >= client.resumableThreshold()) {
            useTus = client.resumableUploads().available();
        }
        if (useTus) {
            TusCapabilities capabilities = client.resumableUploads();
            if (!capabilities.available()) {
                throw new ConfigurationException("the server does not offer resumable uploads (OPTIONS /uploads)");
            }
            int chunkSize = o.chunkSize() > 0 ? o.chunkSize() : client.chunkSize();
            return TusUploader.upload(transport, source, filename, o, chunkSize, capabilities.checksumSha256());
        }
        return uploadMultipart(source, filename, o);
    }

    private FileInfo uploadMultipart(UploadSource source, String filename, UploadOptions options) {
        ProgressListener progress = options.onProgress();
        long total = source.size;
        String key = transport.idempotencyKeyFor(options.idempotencyKey());
        Transport.Activity[] activity = new Transport.Activity[1];
        // One body for every attempt: each subscription reads the source from its start, hashing it.
        MultipartBodyPublisher body = new MultipartBodyPublisher(filename, options.contentType(), source, sent -> {
            activity[0].touch();
            if (progress != null) progress.onProgress(sent, total);
        });
        Transport.Result result = transport.retry.run(attempt -> {
            activity[0] = new Transport.Activity();
            HttpRequest.Builder request = transport.request(transport.url("/files/upload"), true)
                    .header("Content-Type", body.contentType())
                    .header(IdempotencyKey.HEADER, key)
                    .POST(body);
            if (options.expiresInHeader() != null) request.header("Fileshare-Expires-In", options.expiresInHeader());
            // No Expect: 100-continue: JDK 17's client stalls reading the body of a final answer that
            // comes instead of 100. A refusal still reaches us: the server reads and discards up to
            // 64 MiB of a refused body, and larger files go through resumable uploads, refused at creation.
            if (progress != null) progress.onProgress(0, total);
            return transport.exchangeJson(request.build(), activity[0]);
        }, error -> source.replayable);
        FileInfo file = Json.fileInfo(result.body());
        String actual = body.sha256();
        if (actual == null && IdempotencyKey.replayed(result)) {
            // The answer of an earlier request with this key, given before this body was all sent:
            // check the stored file against the source itself when it can be read again.
            if (!source.replayable) return file;
            actual = Sha256.hex(source);
        }
        if (actual == null || !actual.equalsIgnoreCase(file.sha256())) {
            String replay = IdempotencyKey.replayed(result) ? " (the answer of an earlier upload with the idempotency key " + key + ")" : "";
            throw new IntegrityException("the server stored file " + file.fileId() + replay + " with SHA-256 " + file.sha256()
                    + ", but the bytes sent hash to " + actual, file.sha256(), actual);
        }
        if (progress != null) progress.onProgress(file.size(), total < 0 ? file.size() : total);
        return file;
    }

    /**
     * One page of the account's files, newest first.
     *
     * @param page the page, from 1
     * @param limit files per page, 1 to 100
     * @return the files and the pagination
     * @throws BadRequestException for a page or limit out of range
     * @see #list(FileListParams)
     */
    public FileList list(int page, int limit) {
        return list(FileListParams.builder().page(page).limit(limit).build());
    }

    /**
     * The first page of 20 files.
     *
     * @return the files and the pagination
     */
    public FileList list() {
        return list(1, 20);
    }

    /**
     * One page of the account's files, newest first unless {@link FileListParams#sort()} and
     * {@link FileListParams#order()} say otherwise, only those whose name contains
     * {@link FileListParams#q()} (ignoring case), of one of {@link FileListParams#types()} and in one
     * of {@link FileListParams#states()} when set: a page by number, or the files after
     * {@link FileListParams#beforeId()} (in upload order only).
     *
     * <pre>{@code
     * FileList big = client.files().list(FileListParams.builder().q(".mp4").sort(FileSort.SIZE).limit(10).build());
     * }</pre>
     *
     * @param params the search, order and page (null: none)
     * @return the files and the pagination
     * @throws BadRequestException for a value out of range, a page with a before id, or a before id
     *     with an order other than upload date
     */
    public FileList list(FileListParams params) {
        FileListParams p = params == null ? FileListParams.none() : params;
        return Json.fileList(listAnswer(p.query(null, null, null)));
    }

    /**
     * The files whose id is lower than {@code beforeId}, newest first: the page after the one whose
     * {@link Pagination#nextBeforeId()} it is. Unlike page numbers, such a page does not shift when
     * files are uploaded or deleted meanwhile. Its {@link Pagination#page()} is null.
     *
     * <pre>{@code
     * FileList page = client.files().list(1, 100);
     * while (page.pagination().nextBeforeId() != null) {
     *     page = client.files().listBefore(page.pagination().nextBeforeId(), 100);
     * }
     * }</pre>
     *
     * @param beforeId a file id (1 to 2^53-1); the files listed have lower ids
     * @param limit files per page, 1 to 100
     * @return the files and the pagination
     * @throws BadRequestException for an id or limit out of range
     * @see #list(FileListParams)
     */
    public FileList listBefore(long beforeId, int limit) {
        return list(FileListParams.builder().beforeId(beforeId).limit(limit).build());
    }

    /**
     * {@link #list(int, int)} on the client's executor.
     *
     * @param page the page, from 1
     * @param limit files per page, 1 to 100
     * @return the page, or a failed future with the {@link FileshareException}
     */
    public CompletableFuture<FileList> listAsync(int page, int limit) {
        return client.async(() -> list(page, limit));
    }

    /**
     * {@link #list()} on the client's executor.
     *
     * @return the first page of 20, or a failed future with the {@link FileshareException}
     */
    public CompletableFuture<FileList> listAsync() {
        return listAsync(1, 20);
    }

    /**
     * {@link #list(FileListParams)} on the client's executor.
     *
     * @param params the search, order and page (null: none)
     * @return the page, or a failed future with the {@link FileshareException}
     */
    public CompletableFuture<FileList> listAsync(FileListParams params) {
        return client.async(() -> list(params));
    }

    /** {@code GET /files} with the parameters that are not null. */
    private JsonNode listAnswer(Map<String, Object> query) {
        return transport.requestJson(() -> transport.request(transport.url("/files", query), true).GET().build()).body();
    }

    /**
     * Every file of the account, newest first, fetched lazily {@code limit} at a time: the first
     * page, then each next one by {@code before_id} (the last id seen), until
     * {@link Pagination#nextBeforeId()} is null. So no file is skipped or yielded twice, even when
     * files are deleted or uploaded during the iteration (deleting each file as it comes is safe;
     * files uploaded meanwhile are newer and not yielded). Each call of {@link Iterable#iterator()}
     * starts again from the newest file.
     *
     * <pre>{@code for (FileInfo f : client.files().iterate(100)) System.out.println(f.filename());}</pre>
     *
     * <p>A server without {@code before_id} paging (its pages carry no {@code next_before_id}) is
     * iterated by page numbers, skipping files already yielded.
     *
     * <p>Since 0.2.0 it is an {@link AutoPagingIterable}: {@code iterate(100).stream()} gives a
     * {@code Stream<FileInfo>} (code that assigns it to an {@code Iterable<FileInfo>} still compiles).
     *
     * @param limit files per request, 1 to 100
     * @return the files, newest first
     * @see #iterate(FileListParams)
     */
    public AutoPagingIterable<FileInfo> iterate(int limit) {
        return iterate(FileListParams.builder().limit(limit).build());
    }

    /**
     * Every file of the account (only those whose name contains {@link FileListParams#q()}, of one
     * of {@link FileListParams#types()} and in one of {@link FileListParams#states()}, when set) in
     * the order of {@link FileListParams#sort()} and {@link FileListParams#order()} (newest first by
     * default), {@link FileListParams#limit()} per request (default 100), the same search, filters
     * and order on every page, fetched lazily. In upload order (either direction) each page is asked
     * by the {@code next_before_id} of the one before: no file is skipped or yielded twice, even when
     * files are deleted or uploaded during the iteration. The other orders go by page number: no
     * file twice, but one deleted or renamed meanwhile can shift another out of view. Each call of
     * {@link Iterable#iterator()} starts again from the first file.
     *
     * <pre>{@code
     * FileListParams pdfs = FileListParams.builder().q(".pdf").sort(FileSort.FILENAME).order(SortOrder.ASC).build();
     * client.files().iterate(pdfs).stream().map(FileInfo::filename).forEach(System.out::println);
     * }</pre>
     *
     * @param params the search, order and page size (null: every file, newest first); an iteration
     *     starts at the first file, so no page or before id
     * @return the files, in the order asked
     * @throws ConfigurationException if {@code params} sets a page or a before id
     */
    public AutoPagingIterable<FileInfo> iterate(FileListParams params) {
        FileListParams p = params == null ? FileListParams.none() : params;
        if (p.page() != null || p.beforeId() != null) {
            throw new ConfigurationException("iterate starts at the first file: give no page or beforeId");
        }
        int limit = p.limit() != null ? p.limit() : 100;
        boolean ascending = p.order() == SortOrder.ASC;
        return () -> new Iterator<>() {
            private List<FileInfo> current = List.of();
            private int index;
            private boolean more = true;
            /** The next request's {@code before_id} (null for the first page). */
            private Long beforeId;
            /** Only when paging by number: the last page number fetched, and the ids seen. */
            private int page;
            private final Set<Long> seen = new HashSet<>();
            private FileInfo next;

            @Override
            public boolean hasNext() {
                while (next == null) {
                    if (index < current.size()) {
                        FileInfo candidate = current.get(index++);
                        if (page == 0 || seen.add(candidate.fileId())) next = candidate;
                        continue;
                    }
                    if (!more) return false;
                    fetch();
                }
                return true;
            }

            private void fetch() {
                JsonNode answer = page > 0 ? listAnswer(p.query(page + 1, null, limit)) : listAnswer(p.query(null, beforeId, limit));
                FileList list = Json.fileList(answer);
                boolean byNumber = !p.byUploadDate() || !answer.path("pagination").has("next_before_id");
                if (page > 0 || (beforeId == null && byNumber)) {
                    page++;
                    more = list.files().size() >= limit && page < list.pagination().pages();
                } else {
                    Long after = list.pagination().nextBeforeId();
                    if (after != null && beforeId != null && (ascending ? after <= beforeId : after >= beforeId)) {
                        throw new FileshareException("the server's next_before_id " + after + " does not go " + (ascending ? "above " : "below ") + beforeId);
                    }
                    beforeId = after;
                    more = after != null;
                }
                current = list.files();
                index = 0;
            }

            @Override
            public FileInfo next() {
                if (!hasNext()) throw new NoSuchElementException();
                FileInfo result = next;
                next = null;
                return result;
            }
        };
    }

    /**
     * {@link #iterate(int)} with 100 files per request.
     *
     * @return the files, newest first
     */
    public AutoPagingIterable<FileInfo> iterate() {
        return iterate(100);
    }

    /**
     * One file's record.
     *
     * @param fileId the file's id
     * @return its record
     * @throws NotFoundException if the account has no such file
     */
    public FileInfo get(long fileId) {
        var body = transport.requestJson(() -> transport.request(transport.url("/files/" + fileId), true).GET().build()).body();
        return Json.fileInfo(body == null ? null : body.get("file"));
    }

    /**
     * {@link #get(long)} on the client's executor.
     *
     * @param fileId the file's id
     * @return its record, or a failed future with the {@link FileshareException}
     */
    public CompletableFuture<FileInfo> getAsync(long fileId) {
        return client.async(() -> get(fileId));
    }

    /**
     * Changes a file's expiry or name.
     *
     * <pre>{@code client.files().update(id, FileUpdate.builder().expiresIn(Duration.ofDays(7)).build());}</pre>
     *
     * @param fileId the file's id
     * @param update the change: {@code expiresIn}, {@code expiresAt} or {@code clearExpiry}; {@code filename}
     * @return the file's record as it is now
     * @throws BadRequestException 400 {@code invalid_parameter} for a value out of its range
     * @throws NotFoundException if the account has no such file (also once it expired)
     */
    public FileInfo update(long fileId, FileUpdate update) {
        if (update == null) throw new ConfigurationException("update needs a FileUpdate");
        var body = transport.callJson("PATCH", transport.url("/files/" + fileId), update.body(), e -> true).body();
        return Json.fileInfo(body == null ? null : body.get("file"));
    }

    /**
     * {@link #update(long, FileUpdate)} on the client's executor.
     *
     * @param fileId the file's id
     * @param update the change
     * @return the file's record, or a failed future with the {@link FileshareException}
     */
    public CompletableFuture<FileInfo> updateAsync(long fileId, FileUpdate update) {
        return client.async(() -> update(fileId, update));
    }

    /**
     * Deletes a file; its public link stops working at once.
     *
     * @param fileId the file's id
     * @throws NotFoundException if the account has no such file (also when deleted already)
     */
    public void delete(long fileId) {
        transport.requestJson(() -> transport.request(transport.url("/files/" + fileId), true).DELETE().build());
    }

    /** The most files one {@link #deleteMany(List)} takes (the server's limit). */
    public static final int MAX_BULK_DELETE = 100;

    /**
     * Deletes several files in one call ({@code POST /files/delete}, scope {@code files:delete}):
     * each deleted as {@link #delete(long)} deletes one (wholly or not at all, with its audit row and
     * webhook event). The call carries a generated {@code Idempotency-Key}, the same on every
     * attempt, so a retry after a lost answer gets the first answer back.
     *
     * @param fileIds 1 to 100 distinct file ids
     * @return the ids deleted and those that name none of your files, each in the order given
     * @throws ConfigurationException if {@code fileIds} is empty, too long or holds a non-positive id
     */
    public BulkDeleteResult deleteMany(List<Long> fileIds) {
        return deleteMany(fileIds, null);
    }

    /**
     * {@link #deleteMany(List)} with the call's own {@code Idempotency-Key}: a later call with the
     * same key and ids (another process, after a crash) gets the first answer within 24 hours.
     *
     * @param fileIds 1 to 100 distinct file ids
     * @param idempotencyKey 1 to 255 printable ASCII characters, or null for a generated one
     * @return the ids deleted and those that name none of your files, each in the order given
     */
    public BulkDeleteResult deleteMany(List<Long> fileIds, String idempotencyKey) {
        if (fileIds == null || fileIds.isEmpty() || fileIds.size() > MAX_BULK_DELETE) {
            throw new ConfigurationException("deleteMany takes 1 to " + MAX_BULK_DELETE + " file ids");
        }
        List<Long> ids = ArchiveDownloader.ids(fileIds);
        String key = transport.idempotencyKeyFor(idempotencyKey);
        JsonNode body = transport.callJson("POST", transport.url("/files/delete"), Map.of("ids", ids), key, error -> true).body();
        if (body == null || !body.path("deleted").isArray() || !body.path("not_found").isArray()) {
            throw new FileshareException("the answer holds no deleted and not_found lists");
        }
        List<Long> deleted = new java.util.ArrayList<>();
        body.get("deleted").forEach(n -> deleted.add(n.asLong()));
        List<Long> notFound = new java.util.ArrayList<>();
        body.get("not_found").forEach(n -> notFound.add(n.asLong()));
        return new BulkDeleteResult(deleted, notFound);
    }

    /**
     * Downloads several files as one ZIP ({@code POST /files/archive}) to a path: one entry per id,
     * in the order given, stored uncompressed, names made safe and unique ({@code a.txt},
     * {@code a (2).txt}). Nothing counts as a download. A connection lost mid-archive starts it again
     * from its first byte, at most {@code maxRetries} times in all (nothing resumes, so the budget is
     * never given back); a file this call wrote that did not get the whole archive is removed. The
     * key needs both {@code files:read} and {@code links:write} (a key that can list files and make
     * public links can fetch their bytes anyway).
     *
     * @param fileIds 1 to 1000 distinct file ids
     * @param destination the ZIP file to write (its folder is created)
     * @return the bytes written and the name the server suggests
     * @throws NotFoundException if an id is not this account's file (before any byte)
     * @throws InsufficientScopeException if the key lacks {@code links:write} or {@code files:read} (it names which)
     * @throws ConfigurationException if {@code fileIds} is empty, too long or holds a non-positive id
     */
    public ArchiveResult downloadArchive(List<Long> fileIds, Path destination) {
        return downloadArchive(fileIds, destination, null);
    }

    /**
     * {@link #downloadArchive(List, Path)} with a progress listener.
     *
     * @param fileIds 1 to 1000 distinct file ids
     * @param destination the ZIP file to write
     * @param onProgress told {@code (bytesReceived, archiveBytes)} as bytes arrive, or null
     * @return the bytes written and the name the server suggests
     */
    public ArchiveResult downloadArchive(List<Long> fileIds, Path destination, ProgressListener onProgress) {
        return new ArchiveDownloader(transport, fileIds, onProgress).to(destination);
    }

    /**
     * {@link #downloadArchive(List, Path)} to a stream (not closed). A connection lost after bytes
     * were written cannot be taken again: it throws {@link APIConnectionException}.
     *
     * @param fileIds 1 to 1000 distinct file ids
     * @param destination where the ZIP's bytes go
     * @param onProgress told {@code (bytesReceived, archiveBytes)} as bytes arrive, or null
     * @return the bytes written and the name the server suggests
     */
    public ArchiveResult downloadArchive(List<Long> fileIds, OutputStream destination, ProgressListener onProgress) {
        return new ArchiveDownloader(transport, fileIds, onProgress).to(destination);
    }

    /**
     * {@link #delete(long)} on the client's executor.
     *
     * @param fileId the file's id
     * @return a future that completes when the file is gone
     */
    public CompletableFuture<Void> deleteAsync(long fileId) {
        return client.async(() -> {
            delete(fileId);
            return null;
        });
    }
}
