package dev.fileshare;

/**
 * Base class of every exception the SDK throws. Unchecked, like the rest of the SDK's errors.
 *
 * <p>Carries what the server said, when it said something: {@link #status()}, {@link #code()}
 * (the body's {@code error.code}), {@link #requestId()} ({@code X-Request-Id}: quote it when
 * reporting a problem) and {@link #retryAfter()}. The API key never appears in a message.
 */
public class FileshareException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** What a response said about an error; every field may be null. */
    record ErrorDetails(Integer status, String code, String requestId, Long retryAfter, RateLimitInfo rateLimit) {
        static final ErrorDetails NONE = new ErrorDetails(null, null, null, null, null);
    }

    /** The HTTP status, or null. */
    private final Integer status;
    /** The body's error code, or null. */
    private final String code;
    /** The X-Request-Id, or null. */
    private final String requestId;
    /** Retry-After in seconds, or null. */
    private final Long retryAfter;

    /**
     * An error without a response behind it.
     *
     * @param message what went wrong
     */
    public FileshareException(String message) {
        this(message, ErrorDetails.NONE, null);
    }

    /**
     * An error without a response behind it, with its cause.
     *
     * @param message what went wrong
     * @param cause the underlying failure
     */
    public FileshareException(String message, Throwable cause) {
        this(message, ErrorDetails.NONE, cause);
    }

    FileshareException(String message, ErrorDetails details, Throwable cause) {
        super(message, cause);
        ErrorDetails d = details == null ? ErrorDetails.NONE : details;
        this.status = d.status();
        this.code = d.code();
        this.requestId = d.requestId();
        this.retryAfter = d.retryAfter();
    }

    /** @return the HTTP status, or null when there was no response */
    public Integer status() {
        return status;
    }

    /** @return the body's {@code error.code} (snake_case, e.g. {@code not_found}), or null */
    public String code() {
        return code;
    }

    /** @return the response's {@code X-Request-Id}, or null */
    public String requestId() {
        return requestId;
    }

    /** @return the seconds the server asked to wait ({@code Retry-After}), or null */
    public Long retryAfter() {
        return retryAfter;
    }
}
