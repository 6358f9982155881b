package dev.fileshare;

import java.util.List;

/**
 * One page of the files an upload request received, newest first:
 * {@link UploadRequestsResource#files(long, UploadRequestFileListParams)}.
 *
 * @param files the files of this page (unmodifiable)
 * @param pagination where this page stands
 */
public record UploadRequestFileList(List<FileInfo> files, UploadRequestFilePagination pagination) {
    /**
     * Keeps {@code files} unmodifiable.
     *
     * @param files the files of this page
     * @param pagination where this page stands
     */
    public UploadRequestFileList {
        files = List.copyOf(files);
    }
}
