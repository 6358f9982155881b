package dev.fileshare;

import java.time.Instant;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Which audit events to list: {@link AuditEventsResource#list(AuditEventListParams)} and
 * {@link AuditEventsResource#iterate(AuditEventListParams)}. Every parameter is optional; what is
 * not set is not sent (the server's default page size is 20).
 *
 * <pre>{@code
 * AuditEventListParams params = AuditEventListParams.builder()
 *         .limit(50)
 *         .action("file.*")                                     // one action, or a family
 *         .since(Instant.now().minus(Duration.ofDays(7)))       // sent in UTC
 *         .build();
 * }</pre>
 *
 * <p>Values out of range (a limit outside 1 to 100, an unknown action family) are refused by the
 * server: {@link BadRequestException} 400 {@code invalid_parameter}.
 */
public final class AuditEventListParams {
    private static final AuditEventListParams NONE = builder().build();
    private static final DateTimeFormatter SINCE_INSTANT = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss'Z'");

    private final Integer limit;
    private final Long beforeId;
    private final String action;
    private final String since;

    private AuditEventListParams(Builder b) {
        this.limit = b.limit;
        this.beforeId = b.beforeId;
        this.action = b.action;
        this.since = b.since;
    }

    /** @return a new builder, nothing set */
    public static Builder builder() {
        return new Builder();
    }

    /** @return no parameters: the newest page of the server's default size */
    public static AuditEventListParams none() {
        return NONE;
    }

    /** @return the page size, or null: the server's default (20) */
    public Integer limit() {
        return limit;
    }

    /** @return list the events whose id is lower than this, or null: from the newest */
    public Long beforeId() {
        return beforeId;
    }

    /** @return the action or family ({@code file.*}) to list, or null: every action */
    public String action() {
        return action;
    }

    /**
     * @return the {@code since} parameter as sent, in UTC ({@code YYYY-MM-DD} or
     *     {@code YYYY-MM-DDTHH:MM:SSZ}), or null: no lower bound
     */
    public String since() {
        return since;
    }

    /** The query of {@code GET /audit-events}: the parameters that are set, {@code before_id} replaced. */
    Map<String, Object> query(Long beforeIdOverride, Integer limitOverride) {
        Map<String, Object> query = new LinkedHashMap<>();
        query.put("before_id", beforeIdOverride != null ? beforeIdOverride : beforeId);
        query.put("limit", limitOverride != null ? limitOverride : limit);
        query.put("action", action);
        query.put("since", since);
        return query;
    }

    /** @return the parameters that are set */
    @Override
    public String toString() {
        return "AuditEventListParams{limit=" + limit + ", beforeId=" + beforeId + ", action=" + action + ", since=" + since + "}";
    }

    /** Builds {@link AuditEventListParams}. */
    public static final class Builder {
        private Integer limit;
        private Long beforeId;
        private String action;
        private String since;

        private Builder() {}

        /**
         * @param limit events per page, 1 to 100 (default 20)
         * @return this builder
         */
        public Builder limit(int limit) {
            this.limit = limit;
            return this;
        }

        /**
         * @param beforeId list the events whose id is lower than this: the page after the one whose
         *     {@link AuditEventPagination#nextBeforeId()} it is (a positive integer)
         * @return this builder
         */
        public Builder beforeId(long beforeId) {
            this.beforeId = beforeId;
            return this;
        }

        /**
         * @param action one action ({@code file.deleted}) or a family ({@code file.*}); null: every action
         * @return this builder
         */
        public Builder action(String action) {
            this.action = action;
            return this;
        }

        /**
         * @param since list the events at or after this moment; sent in UTC to the second
         *     ({@code YYYY-MM-DDTHH:MM:SSZ}, a fraction of a second dropped). Null: no lower bound
         * @return this builder
         */
        public Builder since(Instant since) {
            this.since = since == null ? null : SINCE_INSTANT.format(since.truncatedTo(ChronoUnit.SECONDS).atOffset(ZoneOffset.UTC));
            return this;
        }

        /**
         * @param since list the events at or after this moment, whatever its offset; sent in UTC, as
         *     {@link #since(Instant)}. Null: no lower bound
         * @return this builder
         */
        public Builder since(OffsetDateTime since) {
            return since(since == null ? null : since.toInstant());
        }

        /**
         * @param since list the events of this UTC day and later ({@code YYYY-MM-DD}). Null: no lower bound
         * @return this builder
         */
        public Builder since(LocalDate since) {
            this.since = since == null ? null : since.toString();
            return this;
        }

        /** @return the parameters */
        public AuditEventListParams build() {
            return new AuditEventListParams(this);
        }
    }
}
