package dev.fileshare;

/**
 * What the server offers for resumable uploads, as {@code OPTIONS /uploads} told
 * ({@link FileshareClient#resumableUploads()}); the shape of the other SDKs' capability query.
 *
 * @param available tus 1.0.0 with the creation extension
 * @param checksumSha256 the checksum extension with {@code sha256} ({@code Upload-Checksum} per chunk)
 * @param maxSize {@code Tus-Max-Size}: the largest upload in bytes, or null when not told
 */
public record TusCapabilities(boolean available, boolean checksumSha256, Long maxSize) {
    static final TusCapabilities NONE = new TusCapabilities(false, false, null);
}
