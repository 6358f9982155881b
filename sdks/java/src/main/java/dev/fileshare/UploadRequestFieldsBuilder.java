package dev.fileshare;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;

/**
 * The fields an upload request's creation and update share: label, message, expiry, limits,
 * password, the received files' expiry.
 *
 * @param <B> the builder's own type
 */
abstract class UploadRequestFieldsBuilder<B extends UploadRequestFieldsBuilder<B>> extends FieldsBuilder<B> {
    UploadRequestFieldsBuilder() {}

    /**
     * @param label what the request is for, shown to the guest: 1 to 200 characters, one line (no
     *     control characters)
     * @return this builder
     */
    public B label(String label) {
        return put("label", "label", label);
    }

    /**
     * @param message a note shown to the guest: plain text, at most 2,000 characters; new lines and
     *     tabs allowed, other control characters not
     * @return this builder
     */
    public B message(String message) {
        return put("message", "message", message);
    }

    /**
     * @param expiresIn how long from now guests can send; whole seconds, a fraction rounded up (the
     *     server takes 1 s to 90 days, or the operator's {@code FILESHARE_UPLOAD_REQUEST_MAX_DAYS}).
     *     Not together with {@code expiresAt}
     * @return this builder
     */
    @Override
    public B expiresIn(Duration expiresIn) {
        return super.expiresIn(expiresIn);
    }

    /**
     * @param expiresAt when guests can no longer send: in the future and within 90 days (or the
     *     operator's maximum); sent to the second, in UTC. Not together with {@code expiresIn}
     * @return this builder
     */
    @Override
    public B expiresAt(Instant expiresAt) {
        return super.expiresAt(expiresAt);
    }

    /**
     * @param maxFiles how many files the request takes, 1 to 10,000; once reached its status is
     *     {@code full}
     * @return this builder
     */
    public B maxFiles(long maxFiles) {
        return put("max_files", "maxFiles", maxFiles);
    }

    /**
     * @param maxFileSize the largest file a guest may send, in bytes: 1 to the plan's
     *     {@code max_file_size} (unset: the plan's)
     * @return this builder
     */
    public B maxFileSize(long maxFileSize) {
        return put("max_file_size", "maxFileSize", maxFileSize);
    }

    /**
     * @param maxTotalSize the most bytes the request takes in all (at least 1); once reached its
     *     status is {@code full}
     * @return this builder
     */
    public B maxTotalSize(long maxTotalSize) {
        return put("max_total_size", "maxTotalSize", maxTotalSize);
    }

    /**
     * @param password the password a guest must give before sending (8 to 1024 characters). The
     *     server keeps only a slow hash of it; it never shows in {@code toString()}
     * @return this builder
     */
    public B password(String password) {
        return put("password", "password", password);
    }

    /**
     * @param fileExpiresIn how long each received file lives from its upload; whole seconds, a
     *     fraction rounded up (1 s to 10 years). Unset: the files do not expire
     * @return this builder
     */
    public B fileExpiresIn(Duration fileExpiresIn) {
        return put("file_expires_in", "fileExpiresIn", fileExpiresIn == null ? null : ApiTime.seconds(fileExpiresIn));
    }

    /** The fields, once checked: an expiry is either relative or absolute. */
    final Map<String, Object> checkedFields() {
        try {
            return fields();
        } catch (ConfigurationException both) {
            throw new ConfigurationException("expiresIn cannot go together with expiresAt: choose one");
        }
    }
}
