package dev.fileshare;

/**
 * 403 {@code file_too_large}, {@code daily_upload_limit_exceeded}, {@code storage_quota_exceeded},
 * {@code link_limit_exceeded}, {@code webhook_limit_exceeded} or {@code upload_request_full} (an
 * upload request has no room left for the file), and the 413 {@code file_too_large} of resumable
 * uploads: a limit reached, which waiting does not lift (except the daily limit at 00:00 UTC).
 */
public class LimitExceededException extends FileshareException {
    private static final long serialVersionUID = 1L;

    LimitExceededException(String message, ErrorDetails details, Throwable cause) {
        super(message, details, cause);
    }
}
