package dev.fileshare;

/**
 * Options of {@link FileshareClient#download(FileInfo, java.nio.file.Path, DownloadOptions)}; build
 * with {@link #builder()}.
 */
public final class DownloadOptions {
    private static final DownloadOptions DEFAULTS = builder().build();

    private final ProgressListener onProgress;
    private final boolean resume;

    private DownloadOptions(Builder b) {
        this.onProgress = b.onProgress;
        this.resume = b.resume;
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

    /** Builds {@link DownloadOptions}. */
    public static final class Builder {
        private ProgressListener onProgress;
        private boolean resume = true;

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

        /** @return the options */
        public DownloadOptions build() {
            return new DownloadOptions(this);
        }
    }
}
