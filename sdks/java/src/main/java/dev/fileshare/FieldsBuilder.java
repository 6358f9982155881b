package dev.fileshare;

import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The builders of {@link LinkOptions}, {@link LinkUpdate} and {@link FileUpdate}: each call sets one
 * field; what is never called is left out of the request.
 *
 * @param <B> the builder's own type
 */
abstract class FieldsBuilder<B extends FieldsBuilder<B>> {
    private final Map<String, Object> fields = new LinkedHashMap<>();

    FieldsBuilder() {}

    abstract B self();

    final B put(String field, String method, Object value) {
        if (value == null) throw new ConfigurationException(method + " must not be null (to remove a value, use the builder's clear method)");
        fields.put(field, value);
        return self();
    }

    final B clear(String field) {
        fields.put(field, null);
        return self();
    }

    /**
     * @param expiresIn how long from now until it expires; whole seconds, a fraction rounded up
     *     (the server takes 1 s to 10 years). Not together with {@code expiresAt}
     * @return this builder
     */
    public B expiresIn(Duration expiresIn) {
        return put("expires_in", "expiresIn", expiresIn == null ? null : ApiTime.seconds(expiresIn));
    }

    /**
     * @param expiresAt when it expires (must be in the future; sent to the second, in UTC). Not
     *     together with {@code expiresIn}
     * @return this builder
     */
    public B expiresAt(Instant expiresAt) {
        return put("expires_at", "expiresAt", expiresAt == null ? null : ApiTime.format(expiresAt));
    }

    /** The fields, once checked: an expiry is either relative or absolute. */
    final Map<String, Object> fields() {
        if (fields.containsKey("expires_in") && fields.containsKey("expires_at")) {
            throw new ConfigurationException("expiresIn cannot go together with expiresAt or clearExpiry: choose one");
        }
        return fields;
    }
}
