package dev.fileshare;

import java.net.URI;
import java.net.http.HttpHeaders;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * A call's result together with the HTTP answer it came from: the status and headers of the last
 * response of the call (for a call of several requests, such as a resumable upload or a download,
 * the last one). Get one with {@link FileshareClient#withRawResponse(java.util.function.Function)}
 * or {@link FilesResource#withRawResponse()}.
 *
 * <pre>{@code
 * RawResponse<FileInfo> raw = client.files().withRawResponse().get(id);
 * System.out.println(raw.statusCode() + " " + raw.rateLimitRemaining() + " " + raw.data().filename());
 * }</pre>
 *
 * @param <T> the call's result
 */
public final class RawResponse<T> {
    private final int statusCode;
    private final HttpHeaders headers;
    private final String method;
    private final URI uri;
    private final T data;

    RawResponse(int statusCode, HttpHeaders headers, String method, URI uri, T data) {
        this.statusCode = statusCode;
        this.headers = headers;
        this.method = method;
        this.uri = uri;
        this.data = data;
    }

    /** @return the HTTP status of the last answer */
    public int statusCode() {
        return statusCode;
    }

    /** @return the headers of the last answer (names are case-insensitive) */
    public HttpHeaders headers() {
        return headers;
    }

    /**
     * @param name a header name, in any case
     * @return its first value, or empty
     */
    public Optional<String> header(String name) {
        return headers.firstValue(name);
    }

    /** @return the answer's {@code X-Request-Id}, or empty */
    public Optional<String> requestId() {
        return headers.firstValue("x-request-id");
    }

    /** @return {@code RateLimit-Limit}, {@code RateLimit-Remaining} and {@code RateLimit-Reset} (fields null where not sent) */
    public RateLimitInfo rateLimit() {
        return new RateLimitInfo(Errors.headerNumber(headers, "ratelimit-limit"),
                Errors.headerNumber(headers, "ratelimit-remaining"), Errors.headerNumber(headers, "ratelimit-reset"));
    }

    /** @return {@code RateLimit-Remaining}: the requests left in the current window, or empty */
    public OptionalLong rateLimitRemaining() {
        Long remaining = Errors.headerNumber(headers, "ratelimit-remaining");
        return remaining == null ? OptionalLong.empty() : OptionalLong.of(remaining);
    }

    /** @return the method of the last request ({@code GET}, {@code POST}, ...) */
    public String method() {
        return method;
    }

    /** @return the URL of the last request */
    public URI uri() {
        return uri;
    }

    /** @return what the call returned (null for a call that returns nothing, such as a delete) */
    public T data() {
        return data;
    }

    /** @return the status, the URL and the request id */
    @Override
    public String toString() {
        return "RawResponse{" + statusCode + " " + method + " " + Log.safe(uri) + requestId().map(id -> ", request id " + id).orElse("") + "}";
    }
}
