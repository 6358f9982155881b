package dev.fileshare;

import java.util.Arrays;
import java.util.List;

/**
 * A change to a webhook endpoint: {@link WebhooksResource#update(long, WebhookUpdateParams)}. Each
 * field is set to a value, cleared ({@link Builder#clearDescription()}) or left as it is (not called).
 *
 * <pre>{@code
 * client.webhooks().update(id, WebhookUpdateParams.builder().enabled(true).build());   // after "failing"
 * }</pre>
 */
public final class WebhookUpdateParams extends RequestFields {
    private WebhookUpdateParams(Builder b) {
        super(b.fields);
    }

    /** @return a new builder (nothing changed) */
    public static Builder builder() {
        return new Builder();
    }

    /** Builds {@link WebhookUpdateParams}. */
    public static final class Builder {
        private final java.util.Map<String, Object> fields = new java.util.LinkedHashMap<>();

        private Builder() {}

        private Builder put(String field, Object value) {
            if (value == null) throw new ConfigurationException(field + " must not be null (to remove the description, use clearDescription())");
            fields.put(field, value);
            return this;
        }

        /**
         * @param url where the events go from now on (the rules of {@link WebhookCreateParams.Builder#url(String)})
         * @return this builder
         */
        public Builder url(String url) {
            return put("url", url);
        }

        /**
         * @param events the event types to send from now on, or {@code "*"} alone: all
         * @return this builder
         */
        public Builder events(List<String> events) {
            if (events != null && events.stream().anyMatch(java.util.Objects::isNull)) throw new ConfigurationException("events must not hold null");
            return put("events", events == null ? null : List.copyOf(events));
        }

        /**
         * @param events the event types to send from now on, or {@code "*"} alone: all
         * @return this builder
         */
        public Builder events(String... events) {
            return events(events == null ? null : Arrays.asList(events));
        }

        /** @return this builder: every event type, today's and later ones ({@code ["*"]}) */
        public Builder allEvents() {
            return events(Webhook.ALL_EVENTS);
        }

        /**
         * @param description a note for the owner (at most 500 characters)
         * @return this builder
         */
        public Builder description(String description) {
            return put("description", description);
        }

        /** @return this builder: the description is removed ({@code description: null}) */
        public Builder clearDescription() {
            fields.put("description", null);
            return this;
        }

        /**
         * @param enabled false: no more events are sent ({@code disabledReason} {@code owner}); true:
         *     sent again, whatever disabled it ({@code gone}, {@code failing} or {@code owner})
         * @return this builder
         */
        public Builder enabled(boolean enabled) {
            return put("enabled", enabled);
        }

        /** @return the change */
        public WebhookUpdateParams build() {
            return new WebhookUpdateParams(this);
        }
    }
}
