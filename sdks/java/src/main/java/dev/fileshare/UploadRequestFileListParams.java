package dev.fileshare;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Which files of an upload request to list: {@link UploadRequestsResource#files(long, UploadRequestFileListParams)}
 * and {@link UploadRequestsResource#iterateFiles(long, UploadRequestFileListParams)}. Both parameters are
 * optional; what is not set is not sent (the server's default page size is 20).
 *
 * <pre>{@code
 * UploadRequestFileListParams params = UploadRequestFileListParams.builder().limit(50).build();
 * }</pre>
 *
 * <p>A limit outside 1 to 100 is refused by the server: {@link BadRequestException} 400
 * {@code invalid_parameter}.
 */
public final class UploadRequestFileListParams {
    private static final UploadRequestFileListParams NONE = builder().build();

    private final Integer limit;
    private final Long beforeId;

    private UploadRequestFileListParams(Builder b) {
        this.limit = b.limit;
        this.beforeId = b.beforeId;
    }

    /** @return a new builder, nothing set */
    public static Builder builder() {
        return new Builder();
    }

    /** @return no parameters: the newest page of the server's default size */
    public static UploadRequestFileListParams none() {
        return NONE;
    }

    /** @return the page size, or null: the server's default (20) */
    public Integer limit() {
        return limit;
    }

    /** @return list the files whose id is lower than this, or null: from the newest */
    public Long beforeId() {
        return beforeId;
    }

    /** The query of {@code GET /upload-requests/{id}/files}: the parameters that are set, {@code before_id} and {@code limit} replaced. */
    Map<String, Object> query(Long beforeIdOverride, Integer limitOverride) {
        Map<String, Object> query = new LinkedHashMap<>();
        query.put("limit", limitOverride != null ? limitOverride : limit);
        query.put("before_id", beforeIdOverride != null ? beforeIdOverride : beforeId);
        return query;
    }

    /** @return the parameters that are set */
    @Override
    public String toString() {
        return "UploadRequestFileListParams{limit=" + limit + ", beforeId=" + beforeId + "}";
    }

    /** Builds {@link UploadRequestFileListParams}. */
    public static final class Builder {
        private Integer limit;
        private Long beforeId;

        private Builder() {}

        /**
         * @param limit files per page, 1 to 100 (default 20)
         * @return this builder
         */
        public Builder limit(int limit) {
            this.limit = limit;
            return this;
        }

        /**
         * @param beforeId list the files whose id is lower than this: the page after the one whose
         *     {@link UploadRequestFilePagination#nextBeforeId()} it is (a positive integer)
         * @return this builder
         */
        public Builder beforeId(long beforeId) {
            this.beforeId = beforeId;
            return this;
        }

        /** @return the parameters */
        public UploadRequestFileListParams build() {
            return new UploadRequestFileListParams(this);
        }
    }
}
