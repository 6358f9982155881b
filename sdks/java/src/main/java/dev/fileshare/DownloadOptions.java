package dev.fileshare;

/**
 * Options of {@link FileshareClient#download(FileInfo, java.nio.file.Path, DownloadOptions)}; build
 * with {@link #builder()}. The password never shows in {@link #toString()}.
 */
public final class DownloadOptions {
    private static final DownloadOptions DEFAULTS = builder().build();

    private final ProgressListener onProgress;
    private final boolean resume;
    private final String password;

    private DownloadOptions(Builder b) {
        this.onProgress = b.onProgress;
        this.resume = b.resume;
        this.password = b.password;
    }

    /** @return a new builder ({@code resume} true, no listener) */
    public static Builder builder() {
        return new Builder();
    }

    /** @return the default options */
    public static DownloadOptions defaults() {
        return DEFAULTS;
    }

    /** @return the progress listener, or null */
    public ProgressListener onProgress() {
        return onProgress;
    }

    /** @return whether a partial destination file is continued */
    public boolean resume() {
        return resume;
    }

    /** The link's password, or null; package-private so that it is read only to be sent. */
    String password() {
        return password;
    }

    /** @return the options, the password redacted */
    @Override
    public String toString() {
        return "DownloadOptions{resume=" + resume + ", onProgress=" + (onProgress != null)
                + ", password=" + (password == null ? "none" : "[redacted]") + "}";
    }

    /** Builds {@link DownloadOptions}. */
    public static final class Builder {
        private ProgressListener onProgress;
        private boolean resume = true;
        private String password;

        private Builder() {}

        /**
         * @param onProgress called as bytes arrive: {@code (bytesInFile, totalBytes)}, counting a resumed part
         * @return this builder
         */
        public Builder onProgress(ProgressListener onProgress) {
            this.onProgress = onProgress;
            return this;
        }

        /**
         * @param resume continue a partial destination file with {@code Range} + {@code If-Range}
         *     (default true); false starts over
         * @return this builder
         */
        public Builder resume(boolean resume) {
            this.resume = resume;
            return this;
        }

        /**
         * @param password the link's password, for a link that has one: sent in the body of the
         *     download's {@code POST} (never in a URL), never shown in {@code toString()}. A wrong
         *     or missing one is an {@link AuthenticationException} with code {@code invalid_password}
         * @return this builder
         */
        public Builder password(String password) {
            this.password = password;
            return this;
        }

        /** @return the options */
        public DownloadOptions build() {
            return new DownloadOptions(this);
        }
    }
}
