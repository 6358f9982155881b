package dev.fileshare;

/**
 * A webhook message that {@link Webhooks#verify(byte[], java.util.Map, String) Webhooks.verify}
 * refused: a header missing or malformed, a secret that is not a {@code whsec_} secret, a timestamp
 * more than the tolerance (5 minutes) away from now, no signature that matches, or a body that is
 * not a JSON object. The message says which, and {@link #reason()} gives it as a {@link Reason}.
 * Answer such a request with a 4xx (400 or 401) and do not act on it.
 *
 * <p>There is no response behind it: {@link #status()} is empty and {@link #code()} is null.
 */
public class WebhookVerificationException extends FileshareException {
    private static final long serialVersionUID = 1L;

    /** Why a message was refused. */
    public enum Reason {
        /** A {@code webhook-id}, {@code webhook-timestamp} or {@code webhook-signature} header is absent or empty. */
        MISSING_HEADER,
        /** A header is there but malformed: a timestamp that is not unix seconds, two different ids. */
        INVALID_HEADER,
        /** The secret is not {@code whsec_} followed by base64. */
        INVALID_SECRET,
        /** {@code webhook-timestamp} is older than now minus the tolerance: a replay, or a clock that is off. */
        TIMESTAMP_TOO_OLD,
        /** {@code webhook-timestamp} is later than now plus the tolerance: a clock that is off. */
        TIMESTAMP_TOO_NEW,
        /** No {@code v1} signature matches: another secret, or a body or header changed on the way. */
        NO_MATCHING_SIGNATURE,
        /** The signature matches, but the body is not a JSON object (or there is no body). */
        INVALID_BODY
    }

    /** Why the message was refused. */
    private final Reason reason;

    /**
     * @param message what is wrong with the message (never the secret)
     * @param reason why it was refused
     */
    public WebhookVerificationException(String message, Reason reason) {
        this(message, reason, null);
    }

    /**
     * @param message what is wrong with the message (never the secret)
     * @param reason why it was refused
     * @param cause the underlying failure (a JSON parser's), or null
     */
    public WebhookVerificationException(String message, Reason reason, Throwable cause) {
        super(message, cause);
        this.reason = reason;
    }

    /** @return why the message was refused */
    public Reason reason() {
        return reason;
    }
}
