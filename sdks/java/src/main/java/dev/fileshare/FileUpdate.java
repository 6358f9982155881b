package dev.fileshare;

/**
 * A change to a file: {@link FilesResource#update(long, FileUpdate)}. Each field is set, cleared or
 * left as it is (not called).
 *
 * <pre>{@code
 * client.files().update(fileId, FileUpdate.builder().expiresIn(Duration.ofDays(30)).build());
 * client.files().update(fileId, FileUpdate.builder().clearExpiry().filename("final.pdf").build());
 * }</pre>
 */
public final class FileUpdate extends RequestFields {
    private FileUpdate(Builder b) {
        super(b.fields());
    }

    /** @return a new builder (nothing changed) */
    public static Builder builder() {
        return new Builder();
    }

    /** Builds {@link FileUpdate}. */
    public static final class Builder extends FieldsBuilder<Builder> {
        private Builder() {}

        @Override
        Builder self() {
            return this;
        }

        /**
         * @param filename the new name (cleaned up by the server as at upload)
         * @return this builder
         */
        public Builder filename(String filename) {
            return put("filename", "filename", filename);
        }

        /** @return this builder: the file no longer expires ({@code expires_at: null}) */
        public Builder clearExpiry() {
            return clear("expires_at");
        }

        /**
         * @return the change
         * @throws ConfigurationException if {@code expiresIn} goes with {@code expiresAt} or {@code clearExpiry}
         */
        public FileUpdate build() {
            return new FileUpdate(this);
        }
    }
}
