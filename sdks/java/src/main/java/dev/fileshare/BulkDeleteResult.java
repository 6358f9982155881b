package dev.fileshare;

import java.util.List;

/**
 * What {@link FilesResource#deleteMany(List)} did: the API's {@code deleted} and {@code not_found},
 * each in the order given.
 *
 * @param deleted the ids deleted by this call
 * @param notFound the ids that name none of your files (never one, another account's, deleted already or expired)
 */
public record BulkDeleteResult(List<Long> deleted, List<Long> notFound) {
    /**
     * Unmodifiable copies.
     *
     * @param deleted the ids deleted by this call
     * @param notFound the ids that name none of your files
     */
    public BulkDeleteResult {
        deleted = List.copyOf(deleted);
        notFound = List.copyOf(notFound);
    }
}
