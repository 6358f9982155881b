package dev.fileshare;

import java.util.Map;

/**
 * A new upload request: {@link UploadRequestsResource#create(UploadRequestCreateParams)}. A
 * {@code label} and an expiry ({@code expiresIn} or {@code expiresAt}, exactly one) are required;
 * the rest is optional (what is not set is not sent).
 *
 * <pre>{@code
 * UploadRequestCreateParams params = UploadRequestCreateParams.builder()
 *         .label("Invoices for March")
 *         .message("Please send the signed PDFs.")
 *         .expiresIn(Duration.ofDays(7))
 *         .maxFiles(10)
 *         .maxFileSize(20L << 20)
 *         .build();
 * }</pre>
 */
public final class UploadRequestCreateParams extends RequestFields {
    private final String idempotencyKey;

    private UploadRequestCreateParams(Map<String, Object> fields, String idempotencyKey) {
        super(fields);
        this.idempotencyKey = idempotencyKey;
    }

    /** @return a new builder (nothing set) */
    public static Builder builder() {
        return new Builder();
    }

    /** @return the label */
    public String label() {
        return (String) body().get("label");
    }

    /** @return the {@code Idempotency-Key} of the creation, or null: a new one generated for each call */
    public String idempotencyKey() {
        return idempotencyKey;
    }

    /** Builds {@link UploadRequestCreateParams}. */
    public static final class Builder extends UploadRequestFieldsBuilder<Builder> {
        private String idempotencyKey;

        private Builder() {}

        @Override
        Builder self() {
            return this;
        }

        /**
         * @param idempotencyKey the {@code Idempotency-Key} of the creation (1 to 255 printable ASCII
         *     characters), instead of the one the SDK generates for each call. The server answers a
         *     later creation with the same key and the same fields with the first request (no second
         *     one); with other fields, 422 {@code idempotency_key_reused}. Not part of the body
         * @return this builder
         * @throws ConfigurationException for an empty, longer or non-printable key
         */
        public Builder idempotencyKey(String idempotencyKey) {
            this.idempotencyKey = IdempotencyKey.check(idempotencyKey);
            return this;
        }

        /**
         * @return the parameters
         * @throws ConfigurationException without a label, without an expiry, or with both
         *     {@code expiresIn} and {@code expiresAt}
         */
        public UploadRequestCreateParams build() {
            Map<String, Object> fields = checkedFields();
            if (!fields.containsKey("label")) throw new ConfigurationException("an upload request needs a label");
            if (!fields.containsKey("expires_in") && !fields.containsKey("expires_at")) {
                throw new ConfigurationException("an upload request needs an expiry: expiresIn(Duration) or expiresAt(Instant)");
            }
            return new UploadRequestCreateParams(fields, idempotencyKey);
        }
    }
}
