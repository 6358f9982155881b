package dev.fileshare;

/**
 * The fields a link's creation and update share: label, expiry, download limit, password.
 *
 * @param <B> the builder's own type
 */
abstract class LinkFieldsBuilder<B extends LinkFieldsBuilder<B>> extends FieldsBuilder<B> {
    LinkFieldsBuilder() {}

    /**
     * @param label a note for the owner, shown in the dashboard (0 to 100 characters, one line)
     * @return this builder
     */
    public B label(String label) {
        return put("label", "label", label);
    }

    /**
     * @param maxDownloads how many downloads the link allows (1 to 1,000,000; on an update, not
     *     below the downloads already counted). A download counts once, however it is resumed
     * @return this builder
     */
    public B maxDownloads(long maxDownloads) {
        return put("max_downloads", "maxDownloads", maxDownloads);
    }

    /**
     * @param password the password a download must give (8 to 1024 characters). The server keeps
     *     only a slow hash of it; it never shows in {@code toString()}
     * @return this builder
     */
    public B password(String password) {
        return put("password", "password", password);
    }
}
