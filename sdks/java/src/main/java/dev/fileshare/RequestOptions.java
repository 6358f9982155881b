package dev.fileshare;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Options of one call (the overloads that take a {@code RequestOptions}) or of a client copy
 * ({@link FileshareClient#withOptions(RequestOptions)}): the timeout, the retries, extra headers
 * and, for a creating call, its {@code Idempotency-Key}. What is not set keeps the client's value.
 *
 * <pre>{@code
 * client.files().get(id, RequestOptions.builder().timeout(Duration.ofSeconds(5)).maxRetries(0).build());
 * }</pre>
 */
public final class RequestOptions {
    private static final RequestOptions NONE = builder().build();
    /** Headers the SDK owns: an extra header cannot replace them. */
    private static final Set<String> RESERVED = Set.of("authorization", "content-length", "host", "connection",
            "expect", "upgrade", "content-type", "tus-resumable", "upload-offset", "upload-length", "upload-checksum",
            "upload-metadata", "upload-defer-length", "idempotency-key", "range", "if-range");

    private final Duration timeout;
    private final Integer maxRetries;
    private final Map<String, String> headers;
    private final String idempotencyKey;

    private RequestOptions(Builder b) {
        this.timeout = b.timeout;
        this.maxRetries = b.maxRetries;
        this.headers = Map.copyOf(b.headers);
        this.idempotencyKey = b.idempotencyKey;
    }

    static Duration checkTimeout(Duration timeout) {
        if (timeout == null || timeout.isNegative()) throw new ConfigurationException("timeout must not be negative");
        return timeout;
    }

    static int checkRetries(int maxRetries) {
        if (maxRetries < 0) throw new ConfigurationException("maxRetries must not be negative");
        return maxRetries;
    }

    /** @return a new builder, nothing set */
    public static Builder builder() {
        return new Builder();
    }

    /** @return options that change nothing */
    public static RequestOptions none() {
        return NONE;
    }

    /** @return the idle timeout, or null: the client's */
    public Duration timeout() {
        return timeout;
    }

    /** @return the retries, or null: the client's */
    public Integer maxRetries() {
        return maxRetries;
    }

    /** @return the extra headers (never null) */
    public Map<String, String> headers() {
        return headers;
    }

    /** @return the {@code Idempotency-Key} of the creating call, or null: one generated per call */
    public String idempotencyKey() {
        return idempotencyKey;
    }

    /** @return the options with the header values left out (they may be secrets) */
    @Override
    public String toString() {
        return "RequestOptions{timeout=" + timeout + ", maxRetries=" + maxRetries + ", headers=" + headers.keySet()
                + ", idempotencyKey=" + idempotencyKey + "}";
    }

    /** Builds {@link RequestOptions}. */
    public static final class Builder {
        private Duration timeout;
        private Integer maxRetries;
        private final Map<String, String> headers = new LinkedHashMap<>();
        private String idempotencyKey;

        private Builder() {}

        /**
         * @param timeout the idle timeout of the call (each stretch without a byte moving; never a
         *     deadline for a whole transfer). {@link Duration#ZERO}: none. Connecting keeps the
         *     client's connect timeout (it belongs to its {@code HttpClient})
         * @return this builder
         */
        public Builder timeout(Duration timeout) {
            this.timeout = checkTimeout(timeout);
            return this;
        }

        /**
         * @param maxRetries retries of the call (see {@link FileshareClient.Builder#maxRetries(int)})
         * @return this builder
         */
        public Builder maxRetries(int maxRetries) {
            this.maxRetries = checkRetries(maxRetries);
            return this;
        }

        /**
         * @param name an extra header sent with every request of the call (not one the SDK owns:
         *     {@code Authorization}, {@code Content-Type}, the tus headers, {@code Idempotency-Key},
         *     {@code Range} ...)
         * @param value its value; never logged
         * @return this builder
         * @throws ConfigurationException for a header the SDK owns, or a name or value a header cannot carry
         */
        public Builder header(String name, String value) {
            if (name == null || !name.matches("[!#$%&'*+.^_`|~0-9A-Za-z-]+")) throw new ConfigurationException("invalid header name: " + name);
            if (RESERVED.contains(name.toLowerCase(Locale.ROOT))) {
                throw new ConfigurationException("the SDK sets " + name + " itself" + ("idempotency-key".equalsIgnoreCase(name) ? ": use idempotencyKey(..)" : ""));
            }
            if (value == null || value.chars().anyMatch(c -> c < 0x20 && c != '\t' || c == 0x7f)) {
                throw new ConfigurationException("the value of " + name + " holds characters a header cannot carry");
            }
            headers.put(name, value);
            return this;
        }

        /**
         * @param headers extra headers, as {@link #header(String, String)}
         * @return this builder
         */
        public Builder headers(Map<String, String> headers) {
            headers.forEach(this::header);
            return this;
        }

        /**
         * @param idempotencyKey the {@code Idempotency-Key} of a creating call (an upload, a link
         *     creation), 1 to 255 printable ASCII characters; other calls ignore it. An upload's own
         *     {@link UploadOptions.Builder#idempotencyKey(String)} wins over it
         * @return this builder
         */
        public Builder idempotencyKey(String idempotencyKey) {
            this.idempotencyKey = IdempotencyKey.check(idempotencyKey);
            return this;
        }

        /** @return the options */
        public RequestOptions build() {
            return new RequestOptions(this);
        }
    }
}
