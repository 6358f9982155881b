package dev.fileshare;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.http.HttpHeaders;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * Base class of every exception the SDK throws. Unchecked, like the rest of the SDK's errors.
 *
 * <p>Carries what the server said, when it said something: {@link #status()}, {@link #code()}
 * (the body's {@code error.code}), {@link #requestId()} ({@code X-Request-Id}: quote it when
 * reporting a problem; it also ends the message, as {@code (request id …)}), {@link #retryAfter()},
 * the answer's {@link #headers()} and its parsed {@link #body()}. The API key never appears in a message.
 */
public class FileshareException extends RuntimeException {
    private static final long serialVersionUID = 2L;
    private static final HttpHeaders NO_HEADERS = HttpHeaders.of(Map.of(), (a, b) -> true);

    /** What a response said about an error; every field may be null. */
    record ErrorDetails(Integer status, String code, String requestId, Long retryAfter, RateLimitInfo rateLimit,
                        HttpHeaders headers, JsonNode body) {
        static final ErrorDetails NONE = new ErrorDetails(null, null, null, null, null);

        ErrorDetails(Integer status, String code, String requestId, Long retryAfter, RateLimitInfo rateLimit) {
            this(status, code, requestId, retryAfter, rateLimit, null, null);
        }
    }

    /** The HTTP status, or null. */
    private final Integer status;
    /** The body's error code, or null. */
    private final String code;
    /** The X-Request-Id, or null. */
    private final String requestId;
    /** Retry-After in seconds, or null. */
    private final Long retryAfter;
    /** The answer's headers (not serialized). */
    private final transient HttpHeaders headers;
    /** The answer's body as JSON, or null (not serialized). */
    private final transient JsonNode body;

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
        super(withRequestId(message, details), cause);
        ErrorDetails d = details == null ? ErrorDetails.NONE : details;
        this.status = d.status();
        this.code = d.code();
        this.requestId = d.requestId();
        this.retryAfter = d.retryAfter();
        this.headers = d.headers() == null ? NO_HEADERS : d.headers();
        this.body = d.body();
    }

    /** Every message of an answer that carried an {@code X-Request-Id} ends with it: one rule for every error. */
    private static String withRequestId(String message, ErrorDetails details) {
        if (details == null || details.requestId() == null || message == null || message.contains(details.requestId())) return message;
        return message + " (request id " + details.requestId() + ")";
    }

    /** @return the HTTP status, or empty when there was no response */
    public OptionalInt status() {
        return status == null ? OptionalInt.empty() : OptionalInt.of(status);
    }

    /**
     * The HTTP status as an {@code Integer}: what {@code status()} returned before 0.2.0.
     *
     * @return the HTTP status, or null when there was no response
     * @deprecated use {@link #status()}, an {@link OptionalInt}
     */
    @Deprecated(since = "0.2.0")
    public Integer statusCode() {
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

    /** @return how long the server asked to wait ({@code Retry-After}), or empty */
    public Optional<Duration> retryAfter() {
        return retryAfter == null ? Optional.empty() : Optional.of(Duration.ofSeconds(retryAfter));
    }

    /**
     * {@code Retry-After} in seconds: what {@code retryAfter()} returned before 0.2.0.
     *
     * @return the seconds the server asked to wait, or null
     * @deprecated use {@link #retryAfter()}, an {@code Optional<Duration>}
     */
    @Deprecated(since = "0.2.0")
    public Long retryAfterSeconds() {
        return retryAfter;
    }

    /** The seconds of {@code Retry-After}, or null (for the SDK's retry rules). */
    Long retryAfterSecondsOrNull() {
        return retryAfter;
    }

    /** The status, or null (for the SDK itself). */
    Integer statusOrNull() {
        return status;
    }

    /**
     * The headers of the answer behind this error (empty without one, e.g. for an
     * {@link APIConnectionException}); names are case-insensitive.
     *
     * @return the answer's headers, never null
     */
    public HttpHeaders headers() {
        return headers == null ? NO_HEADERS : headers;
    }

    /**
     * The answer's body parsed as JSON ({@code {"error": {"code": …, "message": …}}} for the API's
     * errors), or empty when there was no answer or its body was not JSON (a proxy's HTML page).
     *
     * @return the parsed body, or empty
     */
    public Optional<JsonNode> body() {
        return Optional.ofNullable(body);
    }
}
