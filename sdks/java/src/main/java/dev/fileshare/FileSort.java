package dev.fileshare;

/**
 * What a file list is ordered by ({@code sort}): {@link FileListParams.Builder#sort(FileSort)}.
 * Ties are ordered by file id in the same direction.
 */
public enum FileSort {
    /** Upload time (the default): the order that pages by {@code before_id}. */
    UPLOAD_DATE("upload_date"),
    /** The file's name, ignoring case. */
    FILENAME("filename"),
    /** The size in bytes. */
    SIZE("size"),
    /** How many times the file was downloaded. */
    DOWNLOAD_COUNT("download_count");

    private final String value;

    FileSort(String value) {
        this.value = value;
    }

    /** @return the API's name of the sort, as sent ({@code upload_date}, {@code filename}, ...) */
    public String value() {
        return value;
    }
}
