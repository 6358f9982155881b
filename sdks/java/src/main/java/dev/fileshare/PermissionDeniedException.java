package dev.fileshare;

/** 403 {@code plan_not_supported}: the account's plan has no API access. */
public class PermissionDeniedException extends FileshareException {
    private static final long serialVersionUID = 1L;

    PermissionDeniedException(String message, ErrorDetails details, Throwable cause) {
        super(message, details, cause);
    }
}
