package dev.fileshare;

/**
 * What {@link FilesResource#downloadArchive(java.util.List, java.nio.file.Path)} did.
 *
 * @param size bytes of the ZIP written
 * @param filename the name the server suggests ({@code files-YYYYMMDD-HHMMSS.zip}, from {@code Content-Disposition}), or null
 */
public record ArchiveResult(long size, String filename) {}
