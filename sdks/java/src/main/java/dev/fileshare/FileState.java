package dev.fileshare;

/**
 * What a file list can be filtered by ({@code state}): {@link FileListParams.Builder#state(FileState...)}.
 * Several states list the files in any of them.
 */
public enum FileState {
    /** The file has an expiry. */
    EXPIRING("expiring"),
    /** One of the file's links expired or used up its downloads (revoked links do not count). */
    EXPIRED_LINKS("expired_links"),
    /** A guest brought the file through an upload request. */
    FROM_UPLOAD_REQUEST("from_upload_request");

    private final String value;

    FileState(String value) {
        this.value = value;
    }

    /** @return the API's name of the state, as sent ({@code expiring}, {@code expired_links}, ...) */
    public String value() {
        return value;
    }
}
