package dev.fileshare;

/**
 * Where a page of an upload request's files stands.
 *
 * @param limit the page size used
 * @param nextBeforeId the {@code before_id} of the next (older) page when more files follow, else
 *     null: pass it to {@link UploadRequestFileListParams.Builder#beforeId(long)}
 */
public record UploadRequestFilePagination(long limit, Long nextBeforeId) {}
