package dev.fileshare;

/**
 * 429: a request rate limit (the account's, or a per-address one). {@link #retryAfter()} says how
 * many seconds to wait; {@link #rateLimit()} holds the {@code RateLimit-*} headers.
 */
public class RateLimitException extends FileshareException {
    private static final long serialVersionUID = 1L;

    /** The RateLimit-* values. */
    private final RateLimitInfo rateLimit;

    RateLimitException(String message, ErrorDetails details, Throwable cause) {
        super(message, details, cause);
        RateLimitInfo info = details == null ? null : details.rateLimit();
        this.rateLimit = info == null ? new RateLimitInfo(null, null, null) : info;
    }

    /** @return the {@code RateLimit-*} values of the refusal (fields null where not sent) */
    public RateLimitInfo rateLimit() {
        return rateLimit;
    }
}
