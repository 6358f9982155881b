package dev.fileshare;

/** 401: a missing, malformed, unknown, revoked or expired API key. */
public class AuthenticationException extends FileshareException {
    private static final long serialVersionUID = 1L;

    AuthenticationException(String message, ErrorDetails details, Throwable cause) {
        super(message, details, cause);
    }
}
