package dev.fileshare;

import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Which files to list (a search and filters), in which order: {@link FilesResource#list(FileListParams)} and
 * {@link FilesResource#iterate(FileListParams)}. Every parameter is optional; what is not set is not
 * sent (the server lists newest first, 20 a page).
 *
 * <pre>{@code
 * FileListParams params = FileListParams.builder()
 *         .q("invoice")                 // names containing "invoice", any case
 *         .type("application/pdf", "image")  // of any of these media types
 *         .state(FileState.EXPIRING)    // with an expiry
 *         .sort(FileSort.SIZE)
 *         .order(SortOrder.ASC)
 *         .limit(50)
 *         .build();
 * }</pre>
 *
 * <p>A page is asked by number ({@link Builder#page(int)}) or, in upload order (either direction),
 * by {@link Builder#beforeId(long)}: the files after that one, a page no upload or deletion shifts.
 * Not both. Several values of {@code type} or {@code state} mean any of them; different
 * parameters must all hold. Values out of range are refused by the server: {@link BadRequestException} 400
 * {@code invalid_parameter}.
 */
public final class FileListParams {
    private static final FileListParams NONE = builder().build();

    private final Integer page;
    private final Integer limit;
    private final Long beforeId;
    private final String q;
    private final FileSort sort;
    private final SortOrder order;
    private final List<String> types;
    private final List<FileState> states;

    private FileListParams(Builder b) {
        this.page = b.page;
        this.limit = b.limit;
        this.beforeId = b.beforeId;
        this.q = b.q;
        this.sort = b.sort;
        this.order = b.order;
        this.types = b.types;
        this.states = b.states;
    }

    /** @return a new builder, nothing set */
    public static Builder builder() {
        return new Builder();
    }

    /** @return no parameters: the first page, newest first, of the server's default size */
    public static FileListParams none() {
        return NONE;
    }

    /** @return the page number, from 1, or null: the first page (or the one after {@link #beforeId()}) */
    public Integer page() {
        return page;
    }

    /** @return files per page, or null: the server's default (20; 100 for {@code iterate}) */
    public Integer limit() {
        return limit;
    }

    /** @return list the files after this one in upload order, or null: from the first */
    public Long beforeId() {
        return beforeId;
    }

    /** @return the case-insensitive substring of the filename the files must contain, or null: every file */
    public String q() {
        return q;
    }

    /** @return the sort, or null: the server's default ({@link FileSort#UPLOAD_DATE}) */
    public FileSort sort() {
        return sort;
    }

    /** @return the direction, or null: the server's default ({@link SortOrder#DESC}) */
    public SortOrder order() {
        return order;
    }

    /** @return the media types or type/subtypes the files must be of (any of them), or null: any type */
    public List<String> types() {
        return types;
    }

    /** @return the states the files must be in (any of them), or null: any state */
    public List<FileState> states() {
        return states;
    }

    /** Whether the list is in upload order (either direction): the orders that page by {@code before_id}. */
    boolean byUploadDate() {
        return sort == null || sort == FileSort.UPLOAD_DATE;
    }

    /**
     * The query of {@code GET /files}: the parameters that are set, with the page, {@code before_id}
     * and limit of one request of an iteration when given.
     */
    Map<String, Object> query(Integer pageOverride, Long beforeIdOverride, Integer limitOverride) {
        Map<String, Object> query = new LinkedHashMap<>();
        query.put("page", pageOverride != null ? pageOverride : page);
        query.put("before_id", beforeIdOverride != null ? beforeIdOverride : beforeId);
        query.put("limit", limitOverride != null ? limitOverride : limit);
        query.put("q", q);
        query.put("sort", sort == null ? null : sort.value());
        query.put("order", order == null ? null : order.value());
        query.put("type", types);
        query.put("state", states == null ? null : states.stream().map(FileState::value).toList());
        return query;
    }

    /** @return the parameters that are set */
    @Override
    public String toString() {
        return "FileListParams{page=" + page + ", limit=" + limit + ", beforeId=" + beforeId + ", q=" + q + ", sort=" + sort
                + ", order=" + order + ", types=" + types + ", states=" + states + "}";
    }

    /** Builds {@link FileListParams}. */
    public static final class Builder {
        private Integer page;
        private Integer limit;
        private Long beforeId;
        private String q;
        private FileSort sort;
        private SortOrder order;
        private List<String> types;
        private List<FileState> states;

        private Builder() {}

        /**
         * @param page the page, from 1 (pages shift when files are added or deleted meanwhile); not with {@link #beforeId(long)}
         * @return this builder
         */
        public Builder page(int page) {
            this.page = page;
            return this;
        }

        /**
         * @param limit files per page, 1 to 100 (default 20)
         * @return this builder
         */
        public Builder limit(int limit) {
            this.limit = limit;
            return this;
        }

        /**
         * @param beforeId list the files after this one in upload order (newest first: lower ids; with
         *     {@link SortOrder#ASC}: higher ids), the page after the one whose
         *     {@link Pagination#nextBeforeId()} it is; only in upload order, not with {@link #page(int)}
         * @return this builder
         */
        public Builder beforeId(long beforeId) {
            this.beforeId = beforeId;
            return this;
        }

        /**
         * @param q list only the files whose name contains this, ignoring case (a plain substring); null: every file
         * @return this builder
         */
        public Builder q(String q) {
            this.q = q;
            return this;
        }

        /**
         * @param sort the order: {@link FileSort#UPLOAD_DATE} (the default), {@link FileSort#FILENAME},
         *     {@link FileSort#SIZE}, {@link FileSort#DOWNLOAD_COUNT}; null: the default
         * @return this builder
         */
        public Builder sort(FileSort sort) {
            this.sort = sort;
            return this;
        }

        /**
         * @param order {@link SortOrder#DESC} (the default) or {@link SortOrder#ASC}; null: the default
         * @return this builder
         */
        public Builder order(SortOrder order) {
            this.order = order;
            return this;
        }

        /**
         * @param types list only the files of these media types (any of them, at most 20): a top-level
         *     type ({@code image}: image/png, image/jpeg, ...) or an exact {@code type/subtype}
         *     ({@code application/pdf}), any case; sent as the {@code type} parameter repeated. Null or
         *     empty: any type
         * @return this builder
         */
        public Builder type(Collection<String> types) {
            this.types = listOf(types, "type");
            return this;
        }

        /**
         * @param types list only the files of these media types (any of them): see {@link #type(Collection)}
         * @return this builder
         */
        public Builder type(String... types) {
            return type(types == null ? null : Arrays.asList(types));
        }

        /**
         * @param states list only the files in these states (any of them, at most 20), sent as the
         *     {@code state} parameter repeated. Null or empty: any state
         * @return this builder
         */
        public Builder state(Collection<FileState> states) {
            this.states = listOf(states, "state");
            return this;
        }

        /**
         * @param states list only the files in these states (any of them): see {@link #state(Collection)}
         * @return this builder
         */
        public Builder state(FileState... states) {
            return state(states == null ? null : Arrays.asList(states));
        }

        /** The values as a list, or null for none; a null value is refused. */
        private static <T> List<T> listOf(Collection<T> values, String name) {
            if (values == null || values.isEmpty()) return null;
            if (values.stream().anyMatch(Objects::isNull)) throw new ConfigurationException(name + " must not hold null");
            return List.copyOf(values);
        }

        /** @return the parameters */
        public FileListParams build() {
            return new FileListParams(this);
        }
    }
}
