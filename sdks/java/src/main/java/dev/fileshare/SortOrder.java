package dev.fileshare;

/** The direction of a file list's sort ({@code order}): {@link FileListParams.Builder#order(SortOrder)}. */
public enum SortOrder {
    /** Ascending: oldest, smallest, A first. */
    ASC("asc"),
    /** Descending (the default): newest, largest, Z first. */
    DESC("desc");

    private final String value;

    SortOrder(String value) {
        this.value = value;
    }

    /** @return the API's name of the direction, as sent ({@code asc} or {@code desc}) */
    public String value() {
        return value;
    }
}
