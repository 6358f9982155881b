package dev.fileshare;

/** 403 {@code file_too_large} or {@code daily_upload_limit_exceeded}, and the 413 {@code file_too_large} of resumable uploads: an account limit, which waiting does not lift (except the daily limit at 00:00 UTC). */
public class LimitExceededException extends FileshareException {
    private static final long serialVersionUID = 1L;

    LimitExceededException(String message, ErrorDetails details, Throwable cause) {
        super(message, details, cause);
    }
}
