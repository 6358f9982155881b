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

    private LinkOptions(Builder b) {
        super(b.fields());
    }

    /** @return a new builder (nothing set) */
    public static Builder builder() {
        return new Builder();
    }

    /** @return no options: a link without a policy */
    public static LinkOptions none() {
        return NONE;
    }

    /** Builds {@link LinkOptions}. */
    public static final class Builder extends LinkFieldsBuilder<Builder> {
        private Builder() {}

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
