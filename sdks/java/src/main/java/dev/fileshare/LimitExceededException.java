package dev.fileshare;

/**
 * 403 {@code file_too_large}, {@code daily_upload_limit_exceeded}, {@code storage_quota_exceeded},
 * {@code link_limit_exceeded}, {@code webhook_limit_exceeded}, {@code upload_request_full} (an
 * upload request has no room left for the file) or {@code file_not_scannable} (a server that serves
 * only scanned files refuses an upload larger than its virus scanner can scan, and a download of a
 * file the scanner could not scan: {@link FileScan#STATUS_ERROR}), and the 413 {@code file_too_large}
 * of resumable uploads: a limit reached, which waiting does not lift (except the daily limit at 00:00 UTC).
 */
public class LimitExceededException extends FileshareException {
    private static final long serialVersionUID = 1L;

    LimitExceededException(String message, ErrorDetails details, Throwable cause) {
        super(message, details, cause);
    }
}
