package dev.fileshare;

/** 404: no such file (or not this account's), no such upload, no file behind a link. */
public class NotFoundException extends FileshareException {
    private static final long serialVersionUID = 1L;

    NotFoundException(String message, ErrorDetails details, Throwable cause) {
        super(message, details, cause);
    }
}
