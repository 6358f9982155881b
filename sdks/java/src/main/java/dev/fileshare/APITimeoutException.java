package dev.fileshare;

/**
 * No response in time: connecting, or a stretch without a byte sent or received, took longer than
 * the client's (or the call's) timeout. An {@link APIConnectionException}, retried as one.
 */
public class APITimeoutException extends APIConnectionException {
    private static final long serialVersionUID = 1L;

    APITimeoutException(String message, Throwable cause) {
        super(message, ErrorDetails.NONE, cause);
    }
}
