package dev.fileshare;

/**
 * 409 {@code scan_pending}: the file behind a link has not been scanned for malware yet, and the
 * server serves only scanned files. Links answer it (the download's {@code POST} and its grant URL),
 * so {@code download(..)} meets it: it counted no download, and the download waits the server's
 * {@code Retry-After} (10 seconds) and asks again, within the client's {@code maxRetries}; this
 * exception comes when the retries are spent (or the wait is longer than 60 seconds), with
 * {@link #retryAfter()}. Scans take a moment: try again later, or wait until
 * {@code files().get(id).scan()} is no longer pending ({@link FileScan#isPending()}).
 *
 * <p>A {@link BadRequestException} like the other 409s, so code that catches those still catches it.
 */
public class ScanPendingException extends BadRequestException {
    private static final long serialVersionUID = 1L;

    ScanPendingException(String message, ErrorDetails details, Throwable cause) {
        super(message, details, cause);
    }
}
