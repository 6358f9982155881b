package dev.fileshare;

/**
 * What a new link allows: {@link LinksResource#create(long, LinkOptions)}. Build with
 * {@link #builder()}; every option is optional (none: a link with no policy).
 *
 * <pre>{@code
 * LinkOptions options = LinkOptions.builder()
 *         .label("for the auditors")
 *         .expiresIn(Duration.ofDays(7))
 *         .maxDownloads(3)
 *         .password(secret)
 *         .build();
 * }</pre>
 */
public final class LinkOptions extends RequestFields {
    private static final LinkOptions NONE = builder().build();

    private final String idempotencyKey;

    private LinkOptions(Builder b) {
        super(b.fields());
        this.idempotencyKey = b.idempotencyKey;
    }

    /** @return a new builder (nothing set) */
    public static Builder builder() {
        return new Builder();
    }

    /** @return no options: a link without a policy */
    public static LinkOptions none() {
        return NONE;
    }

    /** @return the {@code Idempotency-Key} of the creation, or null: a new one generated for each call */
    public String idempotencyKey() {
        return idempotencyKey;
    }

    /** Builds {@link LinkOptions}. */
    public static final class Builder extends LinkFieldsBuilder<Builder> {
        private String idempotencyKey;

        private Builder() {}

        /**
         * @param idempotencyKey the {@code Idempotency-Key} of the creation (1 to 255 printable ASCII
         *     characters), instead of the one the SDK generates for each call. The server answers a
         *     later creation with the same key and the same options with the first link (no second
         *     link); with other options, 422 {@code idempotency_key_reused}. Not part of the body
         * @return this builder
         * @throws ConfigurationException for an empty, longer or non-printable key
         */
        public Builder idempotencyKey(String idempotencyKey) {
            this.idempotencyKey = IdempotencyKey.check(idempotencyKey);
            return this;
        }

        @Override
        Builder self() {
            return this;
        }

        /**
         * @return the options
         * @throws ConfigurationException if both {@code expiresIn} and {@code expiresAt} are set
         */
        public LinkOptions build() {
            return new LinkOptions(this);
        }
    }
}
