package dev.fileshare;

import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.function.Predicate;

/**
 * The account's upload requests: links that let someone without an account (a guest) send files
 * into this account. {@link #create create}, {@link #list list}, {@link #get get}, {@link #update update},
 * {@link #close close}, {@link #delete delete}, {@link #files files}, {@link #iterateFiles iterateFiles}.
 * Obtain it with {@link FileshareClient#uploadRequests()}. Needs a key with the scope
 * {@code requests:manage} (else {@link InsufficientScopeException}). Thread-safe.
 *
 * <pre>{@code
 * UploadRequest request = client.uploadRequests().create(UploadRequestCreateParams.builder()
 *         .label("Invoices for March").expiresIn(Duration.ofDays(7)).maxFiles(10).build());
 * send(customer, request.url());                 // the guest's page
 * for (FileInfo f : client.uploadRequests().iterateFiles(request.requestId())) {
 *     System.out.println(f.filename() + " " + f.size());
 * }
 * }</pre>
 *
 * <p>Files a guest sends land in this account like any other, with
 * {@link FileInfo#source()} {@code {type: "upload_request", request_id}}; they stay when the
 * request is closed or deleted.
 */
public final class UploadRequestsResource {
    /** Files per request of {@link #iterateFiles(long)} and of an iteration without a limit. */
    static final int ITERATE_LIMIT = 100;
    private static final Predicate<FileshareException> ALWAYS = e -> true;

    private final Transport transport;

    UploadRequestsResource(Transport transport) {
        this.transport = transport;
    }

    private static String path(long requestId) {
        return "/upload-requests/" + requestId;
    }

    private Transport.Result call(String method, String path, Object body) {
        return transport.callJson(method, transport.url(path), body, ALWAYS);
    }

    private static UploadRequest uploadRequest(Transport.Result result) {
        return Json.uploadRequest(result.body() == null ? null : result.body().get("upload_request"));
    }

    /**
     * A new upload request; send its {@link UploadRequest#url() url} to the guest. The call carries an
     * {@code Idempotency-Key} (generated, or the params' own), the same on every attempt, so it is
     * retried as every other call (a lost connection too): a creation that reached the server is
     * answered with the same request, never a second one.
     *
     * @param params label, expiry, message, limits, password, the files' expiry, idempotency key
     * @return the new request (status {@code active})
     * @throws BadRequestException 400 {@code invalid_parameter} for a bad field (the message names
     *     it: a label over 200 characters, an expiry past the operator's maximum, ...); 422
     *     {@code idempotency_key_reused}
     * @throws InsufficientScopeException 403 {@code insufficient_scope}: the key lacks {@code requests:manage}
     */
    public UploadRequest create(UploadRequestCreateParams params) {
        if (params == null) throw new ConfigurationException("create needs UploadRequestCreateParams (label and expiry)");
        String key = transport.idempotencyKeyFor(params.idempotencyKey());
        return uploadRequest(transport.callJson("POST", transport.url("/upload-requests"), params.body(), key, ALWAYS));
    }

    /**
     * Every upload request of the account, newest first, whatever its status.
     *
     * @return the requests (unmodifiable)
     */
    public List<UploadRequest> list() {
        return Json.uploadRequests(call("GET", "/upload-requests", null).body());
    }

    /**
     * One upload request, with its counters and status as they are now.
     *
     * @param requestId the request's id
     * @return the request
     * @throws NotFoundException if the account has no such request
     */
    public UploadRequest get(long requestId) {
        return uploadRequest(call("GET", path(requestId), null));
    }

    /**
     * Changes an upload request: what the update sets is changed, what it clears is removed, the
     * rest is kept. A later expiry opens an expired request again; a closed one stays closed.
     *
     * @param requestId the request's id
     * @param update the change
     * @return the request as it is now
     * @throws BadRequestException 400 {@code invalid_parameter} for a bad field
     * @throws NotFoundException if the account has no such request
     */
    public UploadRequest update(long requestId, UploadRequestUpdateParams update) {
        if (update == null) throw new ConfigurationException("update needs an UploadRequestUpdateParams");
        return uploadRequest(call("PATCH", path(requestId), update.body()));
    }

    /**
     * Closes an upload request for good: guests can no longer send (its URL answers as an unknown
     * one). The files it received stay. Closing a closed request changes nothing, so the call is
     * retried as a read is.
     *
     * @param requestId the request's id
     * @return the request, status {@code closed}
     * @throws NotFoundException if the account has no such request
     */
    public UploadRequest close(long requestId) {
        return uploadRequest(call("POST", path(requestId) + "/close", null));
    }

    /**
     * Deletes an upload request: it is closed and no longer listed. The files it received stay in
     * the account.
     *
     * @param requestId the request's id
     * @return the request as it was, status {@code closed}
     * @throws NotFoundException if the account has no such request
     */
    public UploadRequest delete(long requestId) {
        return uploadRequest(call("DELETE", path(requestId), null));
    }

    /**
     * One page of the files a request received, newest first.
     *
     * <pre>{@code
     * UploadRequestFileList page = client.uploadRequests().files(id, UploadRequestFileListParams.builder().limit(50).build());
     * }</pre>
     *
     * @param requestId the request's id
     * @param params limit, beforeId (null: none)
     * @return the files and the pagination
     * @throws NotFoundException if the account has no such request
     * @throws BadRequestException 400 {@code invalid_parameter} for a value out of range
     */
    public UploadRequestFileList files(long requestId, UploadRequestFileListParams params) {
        UploadRequestFileListParams p = params == null ? UploadRequestFileListParams.none() : params;
        return page(requestId, p, null, null);
    }

    /**
     * The newest page of the files a request received, of the server's default size (20).
     *
     * @param requestId the request's id
     * @return the files and the pagination
     */
    public UploadRequestFileList files(long requestId) {
        return files(requestId, UploadRequestFileListParams.none());
    }

    private UploadRequestFileList page(long requestId, UploadRequestFileListParams params, Long beforeId, Integer limit) {
        var query = params.query(beforeId, limit);
        return Json.uploadRequestFileList(transport.requestJson(
                () -> transport.request(transport.url(path(requestId) + "/files", query), true).GET().build()).body());
    }

    /**
     * Every file a request received, newest first, fetched lazily a page at a time: the first page,
     * then each next one by {@code before_id} (the server's {@code next_before_id}) until it is null.
     * No file is yielded twice; files received during the iteration are newer than where it stands
     * and are not yielded. Each call of {@link Iterable#iterator()} starts again.
     *
     * @param requestId the request's id
     * @param params the page size (default 100 here); a {@code beforeId} starts below that id (null: every file)
     * @return the files, newest first
     */
    public AutoPagingIterable<FileInfo> iterateFiles(long requestId, UploadRequestFileListParams params) {
        UploadRequestFileListParams p = params == null ? UploadRequestFileListParams.none() : params;
        Integer limit = p.limit() != null ? p.limit() : ITERATE_LIMIT;
        return () -> new Iterator<>() {
            private List<FileInfo> current = List.of();
            private int index;
            private boolean more = true;
            /** The next request's {@code before_id} (null: the params' own, for the first page). */
            private Long beforeId;

            @Override
            public boolean hasNext() {
                while (index >= current.size()) {
                    if (!more) return false;
                    fetch();
                }
                return true;
            }

            private void fetch() {
                UploadRequestFileList page = page(requestId, p, beforeId, limit);
                Long after = page.pagination().nextBeforeId();
                Long asked = beforeId != null ? beforeId : p.beforeId();
                if (after != null && asked != null && after >= asked) {
                    throw new FileshareException("the server's next_before_id " + after + " does not go below " + asked);
                }
                beforeId = after;
                more = after != null;
                current = page.files();
                index = 0;
            }

            @Override
            public FileInfo next() {
                if (!hasNext()) throw new NoSuchElementException();
                return current.get(index++);
            }
        };
    }

    /**
     * {@link #iterateFiles(long, UploadRequestFileListParams)} of every file, 100 a request.
     *
     * @param requestId the request's id
     * @return the files, newest first
     */
    public AutoPagingIterable<FileInfo> iterateFiles(long requestId) {
        return iterateFiles(requestId, UploadRequestFileListParams.none());
    }
}
