package dev.fileshare;

/**
 * What {@link FileshareClient#download(FileInfo, java.nio.file.Path)} did.
 *
 * @param size bytes in the finished file
 * @param sha256 hex SHA-256 of the finished file, equal to the link's {@code ETag}
 * @param resumedFrom bytes that were already there and were kept (0 when the download started at the beginning)
 */
public record DownloadResult(long size, String sha256, long resumedFrom) {}
