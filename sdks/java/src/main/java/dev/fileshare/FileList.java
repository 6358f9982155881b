package dev.fileshare;

import java.util.List;

/**
 * One page of the account's files, newest first.
 *
 * @param files the files of this page (unmodifiable)
 * @param pagination where this page stands
 */
public record FileList(List<FileInfo> files, Pagination pagination) {
    /**
     * Keeps {@code files} unmodifiable.
     *
     * @param files the files of this page (unmodifiable)
     * @param pagination where this page stands
     */
    public FileList {
        files = List.copyOf(files);
    }
}
