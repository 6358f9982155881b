package dev.fileshare;

/**
 * Where a page of {@link FilesResource#list(int, int)} stands.
 *
 * @param page the page number used (from 1)
 * @param limit the page size used
 * @param total the number of files the account has now
 * @param pages {@code ceil(total / limit)}; 0 when there are no files
 */
public record Pagination(long page, long limit, long total, long pages) {}
