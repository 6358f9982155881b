package dev.fileshare;

/** 5xx: the server failed. A 500, 502, 503 or 504 is retried (see {@link FileshareClient.Builder#maxRetries(int)}). */
public class ServerException extends FileshareException {
    private static final long serialVersionUID = 1L;

    ServerException(String message, ErrorDetails details, Throwable cause) {
        super(message, details, cause);
    }
}
