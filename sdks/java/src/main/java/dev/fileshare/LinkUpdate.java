package dev.fileshare;

/**
 * A change to a link: {@link LinksResource#update(long, LinkUpdate)}. Each field is set to a
 * value, cleared (sent as {@code null}) or left as it is (not called).
 *
 * <pre>{@code
 * LinkUpdate change = LinkUpdate.builder().clearPassword().maxDownloads(5).build();
 * }</pre>
 */
public final class LinkUpdate extends RequestFields {
    private LinkUpdate(Builder b) {
        super(b.fields());
    }

    /** @return a new builder (nothing changed) */
    public static Builder builder() {
        return new Builder();
    }

    /** Builds {@link LinkUpdate}. */
    public static final class Builder extends LinkFieldsBuilder<Builder> {
        private Builder() {}

        @Override
        Builder self() {
            return this;
        }

        /** @return this builder: the link's label is removed */
        public Builder clearLabel() {
            return clear("label");
        }

        /** @return this builder: the link no longer expires ({@code expires_at: null}) */
        public Builder clearExpiry() {
            return clear("expires_at");
        }

        /** @return this builder: the link no longer has a download limit */
        public Builder clearMaxDownloads() {
            return clear("max_downloads");
        }

        /** @return this builder: the link no longer needs a password */
        public Builder clearPassword() {
            return clear("password");
        }

        /**
         * @return the change
         * @throws ConfigurationException if {@code expiresIn} goes with {@code expiresAt} or {@code clearExpiry}
         */
        public LinkUpdate build() {
            return new LinkUpdate(this);
        }
    }
}
