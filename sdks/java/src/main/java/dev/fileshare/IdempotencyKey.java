package dev.fileshare;

import java.util.UUID;

/**
 * The {@code Idempotency-Key} of a creating call (an upload, a link): one per call, sent on every
 * attempt of it, so that a request sent again after a lost answer is answered with the first
 * answer ({@code Idempotent-Replayed: true}) instead of creating a second file or link.
 */
final class IdempotencyKey {
    static final String HEADER = "Idempotency-Key";
    static final String REPLAYED_HEADER = "idempotent-replayed";
    static final int MAX_LENGTH = 255;

    private IdempotencyKey() {}

    /** The caller's key (checked by the options' builder), or a new random one (a UUID v4) when the caller gave none. */
    static String forCall(String given) {
        return given == null ? UUID.randomUUID().toString() : given;
    }

    /**
     * @return {@code key}, when it is 1 to 255 printable ASCII characters (what the server takes)
     * @throws ConfigurationException otherwise
     */
    static String check(String key) {
        if (key == null) throw new ConfigurationException("idempotencyKey must not be null (leave it unset for a generated one)");
        if (key.isEmpty() || key.length() > MAX_LENGTH || key.chars().anyMatch(c -> c < 0x20 || c > 0x7e)) {
            throw new ConfigurationException("idempotencyKey must be 1 to " + MAX_LENGTH + " printable ASCII characters");
        }
        return key;
    }

    /** Whether an answer is the stored answer of an earlier request with the same key. */
    static boolean replayed(Transport.Result result) {
        return "true".equalsIgnoreCase(result.header(REPLAYED_HEADER));
    }
}
