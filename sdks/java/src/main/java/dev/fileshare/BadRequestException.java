package dev.fileshare;

/** Any other 4xx ({@code invalid_parameter}, {@code upload_expired}, ...): the request was refused as it is; retrying it unchanged will not help. */
public class BadRequestException extends FileshareException {
    private static final long serialVersionUID = 1L;

    BadRequestException(String message, ErrorDetails details, Throwable cause) {
        super(message, details, cause);
    }
}
