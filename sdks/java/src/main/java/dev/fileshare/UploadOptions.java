package dev.fileshare;

import java.time.Duration;
import java.util.function.Consumer;

/**
 * Options of {@link FilesResource#upload(java.nio.file.Path, UploadOptions)}; build with {@link #builder()}.
 */
public final class UploadOptions {
    private static final UploadOptions DEFAULTS = builder().build();

    private final String filename;
    private final String contentType;
    private final ProgressListener onProgress;
    private final Boolean resumable;
    private final long size;
    private final int chunkSize;
    private final Duration expiresIn;
    private final String idempotencyKey;
    private final Consumer<String> onUploadCreated;
    private final String uploadUrl;
    private final Boolean keepOnFailure;

    private UploadOptions(Builder b) {
        this.onUploadCreated = b.onUploadCreated;
        this.uploadUrl = b.uploadUrl;
        this.keepOnFailure = b.keepOnFailure;
        this.filename = b.filename;
        this.contentType = b.contentType;
        this.onProgress = b.onProgress;
        this.resumable = b.resumable;
        this.size = b.size;
        this.chunkSize = b.chunkSize;
        this.expiresIn = b.expiresIn;
        this.idempotencyKey = b.idempotencyKey;
    }

    /** @return a new builder (every option unset) */
    public static Builder builder() {
        return new Builder();
    }

    /** @return the options with nothing set */
    public static UploadOptions defaults() {
        return DEFAULTS;
    }

    /** @return the file name to store, or null (the path's name, else {@code file}) */
    public String filename() {
        return filename;
    }

    /** @return the content type sent along, or null */
    public String contentType() {
        return contentType;
    }

    /** @return the progress listener, or null */
    public ProgressListener onProgress() {
        return onProgress;
    }

    /** @return true: always resumable; false: never; null: decided by size */
    public Boolean resumable() {
        return resumable;
    }

    /** @return the declared size of a stream source, or -1 */
    public long size() {
        return size;
    }

    /** @return the chunk size of resumable uploads, or 0 for the client's */
    public int chunkSize() {
        return chunkSize;
    }

    /** @return how long the stored file lives, or null: until it is deleted */
    public Duration expiresIn() {
        return expiresIn;
    }

    /** @return the {@code Idempotency-Key} of this upload, or null: a new one generated for each call */
    public String idempotencyKey() {
        return idempotencyKey;
    }

    /** @return called with a resumable upload's URL as soon as it exists, or null */
    public Consumer<String> onUploadCreated() {
        return onUploadCreated;
    }

    /** @return the URL of an existing resumable upload to continue, or null */
    public String uploadUrl() {
        return uploadUrl;
    }

    /**
     * @return whether a resumable upload that fails is kept for a later call to continue: the
     *     value set, else true with an {@link #uploadUrl()}, else false (deleted, except with your
     *     own idempotency key after a failure that was not a refusal)
     */
    public boolean keepOnFailure() {
        return keepOnFailure != null ? keepOnFailure : uploadUrl != null;
    }

    /** Whether {@code keepOnFailure} was set explicitly. */
    boolean keepOnFailureSet() {
        return keepOnFailure != null;
    }

    /** The {@code Fileshare-Expires-In} header's value (whole seconds), or null. */
    String expiresInHeader() {
        return expiresIn == null ? null : Long.toString(ApiTime.seconds(expiresIn));
    }

    /** Builds {@link UploadOptions}. */
    public static final class Builder {
        private String filename;
        private String contentType;
        private ProgressListener onProgress;
        private Boolean resumable;
        private long size = -1;
        private int chunkSize;
        private Duration expiresIn;
        private String idempotencyKey;
        private Consumer<String> onUploadCreated;
        private String uploadUrl;
        private Boolean keepOnFailure;

        private Builder() {}

        /**
         * @param onUploadCreated called once with the resumable upload's URL as soon as the server
         *     created it (before any byte is sent), on the calling thread. Store it (a file, a
         *     database row) to continue the upload from another process after a crash with
         *     {@link #uploadUrl(String)}. Not called for a multipart upload (small sources, or
         *     {@code resumable(false)}); set {@code resumable(true)} to always get one
         * @return this builder
         */
        public Builder onUploadCreated(Consumer<String> onUploadCreated) {
            this.onUploadCreated = onUploadCreated;
            return this;
        }

        /**
         * @param uploadUrl the URL of a resumable upload made earlier (by this or another process,
         *     as {@link #onUploadCreated(Consumer)} gave it): the SDK asks it where it stands
         *     ({@code HEAD}), reads the source past the bytes the server has (hashing them for the
         *     whole-file check) and sends the rest. The source must be the same bytes. Implies
         *     {@code resumable(true)}; an upload that is gone (expired, deleted, another account's)
         *     throws {@link NotFoundException}, one of another length {@link ConfigurationException}
         * @return this builder
         */
        public Builder uploadUrl(String uploadUrl) {
            if (uploadUrl != null && !uploadUrl.matches("(?i)^https?://\\S+$")) {
                throw new ConfigurationException("uploadUrl must be the http(s) URL of a resumable upload");
            }
            this.uploadUrl = uploadUrl;
            return this;
        }

        /**
         * @param keepOnFailure {@code true}: a resumable upload that fails (a connection lost past
         *     the retries, an interruption, a cancelled future, your source failing, a refusal) is
         *     left on the server for {@link #uploadUrl(String)} to continue; the server expires it if
         *     nobody does, and it holds its daily upload slot and reserved storage until then.
         *     {@code false}: it is deleted (tus termination). Default: kept when continuing an
         *     {@code uploadUrl}, else deleted (except with your own idempotency key after a failure that
         *     was not a refusal). A kill of the process leaves the upload whatever this says
         * @return this builder
         */
        public Builder keepOnFailure(boolean keepOnFailure) {
            this.keepOnFailure = keepOnFailure;
            return this;
        }

        /**
         * @param filename the name to store (default: the path's file name, else {@code file})
         * @return this builder
         */
        public Builder filename(String filename) {
            this.filename = filename;
            return this;
        }

        /**
         * @param contentType sent as the part's type and the tus {@code filetype}; the server derives
         *     the stored {@code content_type} from the file name
         * @return this builder
         */
        public Builder contentType(String contentType) {
            this.contentType = contentType;
            return this;
        }

        /**
         * @param onProgress called as bytes go out: {@code (bytesSent, totalBytes)}
         * @return this builder
         */
        public Builder onProgress(ProgressListener onProgress) {
            this.onProgress = onProgress;
            return this;
        }

        /**
         * @param resumable {@code true}: always use resumable uploads (tus), throwing
         *     {@link ConfigurationException} if the server has none; {@code false}: always the
         *     one-request multipart upload; unset: resumable when the server offers it and the
         *     source has at least the client's {@code resumableThreshold} bytes
         * @return this builder
         */
        public Builder resumable(boolean resumable) {
            this.resumable = resumable;
            return this;
        }

        /**
         * @param size the length of an {@link java.io.InputStream} source, when known (paths know theirs)
         * @return this builder
         */
        public Builder size(long size) {
            if (size < 0) throw new ConfigurationException("size must not be negative");
            this.size = size;
            return this;
        }

        /**
         * @param chunkSize chunk size of resumable uploads (default: the client's, 16 MiB)
         * @return this builder
         */
        public Builder chunkSize(int chunkSize) {
            if (chunkSize <= 0) throw new ConfigurationException("chunkSize must be positive");
            this.chunkSize = chunkSize;
            return this;
        }

        /**
         * @param expiresIn how long the stored file lives: from then on it is gone for everyone
         *     (API, links, stats). Sent as {@code Fileshare-Expires-In} in whole seconds, a fraction
         *     rounded up (the server takes 1 s to 10 years). Change it later with
         *     {@link FilesResource#update(long, FileUpdate)}. Null: the file does not expire
         * @return this builder
         */
        public Builder expiresIn(Duration expiresIn) {
            this.expiresIn = expiresIn;
            return this;
        }

        /**
         * @param idempotencyKey the {@code Idempotency-Key} of the upload (1 to 255 printable ASCII
         *     characters), instead of the one the SDK generates for each call. Every attempt of the
         *     call sends it (the multipart {@code POST}, or the tus creation {@code POST}); the server
         *     keeps the first successful answer for 24 hours and answers any later request with the
         *     same key with it (the same file), so an upload sent again stores one file. The same key
         *     on another request (a multipart body of another length; a resumable upload of another
         *     length, name or type) is refused: {@link BadRequestException} 422 {@code idempotency_key_reused}.
         *     A resumable upload with the caller's own key that fails without being refused for good
         *     (no connection, the server busy) is kept, and the next call with the key continues it
         * @return this builder
         * @throws ConfigurationException for an empty, longer or non-printable key
         */
        public Builder idempotencyKey(String idempotencyKey) {
            this.idempotencyKey = IdempotencyKey.check(idempotencyKey);
            return this;
        }

        /** @return the options */
        public UploadOptions build() {
            return new UploadOptions(this);
        }
    }
}
