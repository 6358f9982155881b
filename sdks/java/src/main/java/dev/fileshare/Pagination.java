package dev.fileshare;

/**
 * Where a page of {@link FilesResource#list(int, int)} or {@link FilesResource#listBefore(long, int)} stands.
 *
 * @param page the page number used (from 1), or null for a page asked for by {@code before_id}
 * @param limit the page size used
 * @param total the number of files the account has now
 * @param pages {@code ceil(total / limit)}; 0 when there are no files
 * @param nextBeforeId the {@code before_id} of the next page (this page's last file id) when more
 *     files follow, else null
 */
public record Pagination(Long page, long limit, long total, long pages, Long nextBeforeId) {
    /**
     * A page by number without {@code nextBeforeId}: the constructor of SDK versions before
     * {@code before_id} paging, kept so that code that builds a {@code Pagination} still compiles.
     *
     * @param page the page number used (from 1)
     * @param limit the page size used
     * @param total the number of files the account has now
     * @param pages {@code ceil(total / limit)}
     */
    public Pagination(long page, long limit, long total, long pages) {
        this(page, limit, total, pages, null);
    }
}
