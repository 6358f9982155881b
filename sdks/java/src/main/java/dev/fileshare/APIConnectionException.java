package dev.fileshare;

/** No response: the connection was refused or dropped, or nothing moved for longer than the client's timeout. */
public class APIConnectionException extends FileshareException {
    private static final long serialVersionUID = 1L;

    APIConnectionException(String message, ErrorDetails details, Throwable cause) {
        super(message, details, cause);
    }
}
