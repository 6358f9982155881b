package dev.fileshare;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A new webhook endpoint: {@link WebhooksResource#create(WebhookCreateParams)}. {@code url} and
 * {@code events} are required; {@code description} and {@code idempotencyKey} are optional.
 *
 * <pre>{@code
 * WebhookCreateParams params = WebhookCreateParams.builder()
 *         .url("https://example.com/hooks/fileshare")
 *         .events(WebhookEvent.FILE_UPLOADED, WebhookEvent.FILE_DELETED)   // or .allEvents()
 *         .description("indexer")
 *         .build();
 * }</pre>
 */
public final class WebhookCreateParams extends RequestFields {
    private final String idempotencyKey;

    private WebhookCreateParams(Map<String, Object> fields, String idempotencyKey) {
        super(fields);
        this.idempotencyKey = idempotencyKey;
    }

    /** @return a new builder (nothing set) */
    public static Builder builder() {
        return new Builder();
    }

    /** @return the endpoint's URL */
    public String url() {
        return (String) body().get("url");
    }

    /** @return the event types it receives, or {@code ["*"]} (unmodifiable) */
    @SuppressWarnings("unchecked")
    public List<String> events() {
        return (List<String>) body().get("events");
    }

    /** @return the description, or null: none */
    public String description() {
        return (String) body().get("description");
    }

    /** @return the {@code Idempotency-Key} of the creation, or null: a new one generated for each call */
    public String idempotencyKey() {
        return idempotencyKey;
    }

    /** Builds {@link WebhookCreateParams}. */
    public static final class Builder {
        private String url;
        private List<String> events;
        private String description;
        private String idempotencyKey;

        private Builder() {}

        /**
         * @param url where the events go: an absolute https URL (http only where the operator allows it),
         *     at most 2,048 characters, no credentials in it, a host with public addresses. The server
         *     refuses another with {@link BadRequestException} 400 {@code webhook_url_not_allowed}
         * @return this builder
         */
        public Builder url(String url) {
            this.url = url;
            return this;
        }

        /**
         * @param events the event types to send ({@link WebhookEvent#TYPES}), or {@code "*"} alone: all
         * @return this builder
         */
        public Builder events(List<String> events) {
            if (events == null || events.stream().anyMatch(java.util.Objects::isNull)) {
                throw new ConfigurationException("events must be a list of event types, without null");
            }
            this.events = List.copyOf(events);
            return this;
        }

        /**
         * @param events the event types to send ({@link WebhookEvent#FILE_UPLOADED}, ...), or {@code "*"} alone: all
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
         * @param description a note for the owner, shown in the dashboard (at most 500 characters); null: none
         * @return this builder
         */
        public Builder description(String description) {
            this.description = description;
            return this;
        }

        /**
         * @param idempotencyKey the {@code Idempotency-Key} of the creation (1 to 255 printable ASCII
         *     characters), instead of the one the SDK generates for each call. The server answers a
         *     later creation with the same key and the same fields with the first endpoint, its secret
         *     included; with other fields, 422 {@code idempotency_key_reused}. Not part of the body
         * @return this builder
         * @throws ConfigurationException for an empty, longer or non-printable key
         */
        public Builder idempotencyKey(String idempotencyKey) {
            this.idempotencyKey = IdempotencyKey.check(idempotencyKey);
            return this;
        }

        /**
         * @return the parameters
         * @throws ConfigurationException without a url or events
         */
        public WebhookCreateParams build() {
            if (url == null || url.isBlank()) throw new ConfigurationException("a webhook needs a url");
            if (events == null) throw new ConfigurationException("a webhook needs events: event types, or allEvents()");
            Map<String, Object> fields = new LinkedHashMap<>();
            fields.put("url", url);
            fields.put("events", events);
            if (description != null) fields.put("description", description);
            return new WebhookCreateParams(fields, idempotencyKey);
        }
    }
}
