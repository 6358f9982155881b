package dev.fileshare;

/**
 * Any other 4xx ({@code invalid_parameter}, {@code upload_expired}, ...): the request was refused as
 * it is; retrying it unchanged will not help. Two 409s are the exceptions, retried by the SDK itself:
 * {@code idempotency_in_progress} (the same idempotency key still at work) and {@code scan_pending}
 * (a link's file not scanned for malware yet: {@link ScanPendingException}).
 */
public class BadRequestException extends FileshareException {
    private static final long serialVersionUID = 1L;

    BadRequestException(String message, ErrorDetails details, Throwable cause) {
        super(message, details, cause);
    }
}
