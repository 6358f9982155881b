package dev.fileshare;

/**
 * A change to an upload request: {@link UploadRequestsResource#update(long, UploadRequestUpdateParams)}.
 * Each field is set to a value, cleared (sent as {@code null}: the limit or the password is removed)
 * or left as it is (not called). The label and the expiry can be changed, not cleared.
 *
 * <pre>{@code
 * client.uploadRequests().update(id, UploadRequestUpdateParams.builder()
 *         .expiresIn(Duration.ofDays(3))        // re-opens an expired request (a closed one stays closed)
 *         .clearMaxFiles()
 *         .build());
 * }</pre>
 */
public final class UploadRequestUpdateParams extends RequestFields {
    private UploadRequestUpdateParams(Builder b) {
        super(b.checkedFields());
    }

    /** @return a new builder (nothing changed) */
    public static Builder builder() {
        return new Builder();
    }

    /** Builds {@link UploadRequestUpdateParams}. */
    public static final class Builder extends UploadRequestFieldsBuilder<Builder> {
        private Builder() {}

        @Override
        Builder self() {
            return this;
        }

        /** @return this builder: the message is removed */
        public Builder clearMessage() {
            return clear("message");
        }

        /** @return this builder: the request no longer has a file count limit of its own */
        public Builder clearMaxFiles() {
            return clear("max_files");
        }

        /** @return this builder: the largest file is the plan's again */
        public Builder clearMaxFileSize() {
            return clear("max_file_size");
        }

        /** @return this builder: the request no longer has a total size limit of its own */
        public Builder clearMaxTotalSize() {
            return clear("max_total_size");
        }

        /** @return this builder: guests no longer need a password */
        public Builder clearPassword() {
            return clear("password");
        }

        /** @return this builder: files received from now on do not expire */
        public Builder clearFileExpiresIn() {
            return clear("file_expires_in");
        }

        /**
         * @return the change
         * @throws ConfigurationException if both {@code expiresIn} and {@code expiresAt} are set
         */
        public UploadRequestUpdateParams build() {
            return new UploadRequestUpdateParams(this);
        }
    }
}
