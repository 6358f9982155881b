package dev.fileshare;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.net.http.HttpHeaders;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Verifies the webhook messages the server sends, signed per the Standard Webhooks specification
 * (standardwebhooks.com). Static and standalone: no client, no server, no network.
 *
 * <pre>{@code
 * // the raw body exactly as received, the request's headers, the endpoint's whsec_ secret
 * WebhookEvent event = Webhooks.verify(body, headers, System.getenv("FILESHARE_WEBHOOK_SECRET"));
 * if (event.type().equals(WebhookEvent.FILE_UPLOADED)) System.out.println(event.file().filename());
 * }</pre>
 *
 * <p>A message carries three headers: {@code webhook-id} ({@code msg_...}, the same on every retry of
 * one message), {@code webhook-timestamp} (unix seconds of this attempt) and {@code webhook-signature}
 * ({@code v1,<base64>} entries separated by spaces; two during a secret rotation). The signature is
 * HMAC-SHA256 over {@code <webhook-id>.<webhook-timestamp>.<body>}, keyed with the base64-decoded part
 * of the secret after {@code whsec_}. {@code verify} accepts a message when any {@code v1} entry
 * matches (compared in constant time with {@link MessageDigest#isEqual}; other versions are ignored)
 * and its timestamp is within the tolerance (5 minutes) of now, either way; it then returns the parsed
 * body as a {@link WebhookEvent}. Anything else throws a {@link WebhookVerificationException} that
 * says what is wrong ({@link WebhookVerificationException#reason()}): answer it with a 400 and do
 * not act on the message.
 *
 * <p>The same message may come more than once (delivery is at least once): deduplicate by
 * {@link WebhookEvent#messageId()}. The endpoints themselves are managed with
 * {@code client.webhooks()}.
 */
public final class Webhooks {
    /** How far {@code webhook-timestamp} may be from now, either way: 5 minutes. */
    public static final Duration DEFAULT_TOLERANCE = Duration.ofSeconds(300);
    /** The prefix of a webhook secret: {@code whsec_<base64 of 24 to 64 random bytes>}. */
    public static final String SECRET_PREFIX = "whsec_";
    /** The header of the message's id ({@code msg_...}). */
    public static final String HEADER_ID = "webhook-id";
    /** The header of the attempt's time, unix seconds. */
    public static final String HEADER_TIMESTAMP = "webhook-timestamp";
    /** The header of the signatures: {@code v1,<base64>} entries separated by spaces. */
    public static final String HEADER_SIGNATURE = "webhook-signature";

    private static final String HMAC = "HmacSHA256";

    private Webhooks() {}

    /**
     * Verifies a message with the raw body's bytes (the surest form: the bytes the server signed).
     *
     * <pre>{@code
     * // com.sun.net.httpserver: exchange.getRequestHeaders() is a Map<String, List<String>>
     * WebhookEvent event = Webhooks.verify(exchange.getRequestBody().readAllBytes(), exchange.getRequestHeaders(), secret);
     * }</pre>
     *
     * @param body the raw body, exactly as received (never parsed and written again)
     * @param headers the request's headers, names in any letter case; each value a {@code String}
     *     or a list of them ({@code Map<String, String>}, {@code Map<String, List<String>>}, the JDK
     *     HttpServer's {@code Headers}, Spring's {@code MultiValueMap}, ...)
     * @param secret the endpoint's {@code whsec_...} secret, as {@code create} or {@code rotateSecret} gave it
     * @return the event
     * @throws WebhookVerificationException if the message is not one the secret signed within the
     *     last 5 minutes, or its body is not a JSON object
     */
    public static WebhookEvent verify(byte[] body, Map<String, ?> headers, String secret) {
        return verify(body, headers, secret, null, null);
    }

    /**
     * Verifies a message whose body is text (its UTF-8 bytes are checked). Pass the text exactly as
     * received; {@link #verify(byte[], Map, String)} with the bytes is surer where you have them.
     *
     * @param body the raw body as text, exactly as received
     * @param headers the request's headers, names in any letter case (values a {@code String} or a list)
     * @param secret the endpoint's {@code whsec_...} secret
     * @return the event
     * @throws WebhookVerificationException if the message is not one the secret signed within the
     *     last 5 minutes, or its body is not a JSON object
     */
    public static WebhookEvent verify(String body, Map<String, ?> headers, String secret) {
        return verify(body, headers, secret, null, null);
    }

    /**
     * Verifies a message with headers of {@code java.net.http} (names are case-insensitive there).
     *
     * @param body the raw body, exactly as received
     * @param headers the request's headers
     * @param secret the endpoint's {@code whsec_...} secret
     * @return the event
     * @throws WebhookVerificationException if the message is not one the secret signed within the
     *     last 5 minutes, or its body is not a JSON object
     */
    public static WebhookEvent verify(byte[] body, HttpHeaders headers, String secret) {
        return verify(body, headers, secret, null, null);
    }

    /**
     * Verifies a message whose body is text, with headers of {@code java.net.http}.
     *
     * @param body the raw body as text, exactly as received
     * @param headers the request's headers
     * @param secret the endpoint's {@code whsec_...} secret
     * @return the event
     * @throws WebhookVerificationException if the message is not one the secret signed within the
     *     last 5 minutes, or its body is not a JSON object
     */
    public static WebhookEvent verify(String body, HttpHeaders headers, String secret) {
        return verify(body, headers, secret, null, null);
    }

    /**
     * {@link #verify(byte[], Map, String)} with another tolerance or another clock (for tests).
     *
     * @param body the raw body, exactly as received
     * @param headers the request's headers, names in any letter case (values a {@code String} or a list)
     * @param secret the endpoint's {@code whsec_...} secret
     * @param tolerance how far {@code webhook-timestamp} may be from {@code now}, either way (null: 5 minutes)
     * @param now the time to check against (null: the clock)
     * @return the event
     * @throws WebhookVerificationException if the message is refused
     * @throws ConfigurationException for a negative tolerance
     */
    public static WebhookEvent verify(byte[] body, Map<String, ?> headers, String secret, Duration tolerance, Instant now) {
        return check(body, headers == null ? null : name -> fromMap(headers, name), secret, tolerance, now);
    }

    /**
     * {@link #verify(String, Map, String)} with another tolerance or another clock (for tests).
     *
     * @param body the raw body as text, exactly as received
     * @param headers the request's headers, names in any letter case (values a {@code String} or a list)
     * @param secret the endpoint's {@code whsec_...} secret
     * @param tolerance how far {@code webhook-timestamp} may be from {@code now}, either way (null: 5 minutes)
     * @param now the time to check against (null: the clock)
     * @return the event
     * @throws WebhookVerificationException if the message is refused
     * @throws ConfigurationException for a negative tolerance
     */
    public static WebhookEvent verify(String body, Map<String, ?> headers, String secret, Duration tolerance, Instant now) {
        return verify(utf8(body), headers, secret, tolerance, now);
    }

    /**
     * {@link #verify(byte[], HttpHeaders, String)} with another tolerance or another clock (for tests).
     *
     * @param body the raw body, exactly as received
     * @param headers the request's headers
     * @param secret the endpoint's {@code whsec_...} secret
     * @param tolerance how far {@code webhook-timestamp} may be from {@code now}, either way (null: 5 minutes)
     * @param now the time to check against (null: the clock)
     * @return the event
     * @throws WebhookVerificationException if the message is refused
     * @throws ConfigurationException for a negative tolerance
     */
    public static WebhookEvent verify(byte[] body, HttpHeaders headers, String secret, Duration tolerance, Instant now) {
        return check(body, headers == null ? null : headers::allValues, secret, tolerance, now);
    }

    /**
     * {@link #verify(String, HttpHeaders, String)} with another tolerance or another clock (for tests).
     *
     * @param body the raw body as text, exactly as received
     * @param headers the request's headers
     * @param secret the endpoint's {@code whsec_...} secret
     * @param tolerance how far {@code webhook-timestamp} may be from {@code now}, either way (null: 5 minutes)
     * @param now the time to check against (null: the clock)
     * @return the event
     * @throws WebhookVerificationException if the message is refused
     * @throws ConfigurationException for a negative tolerance
     */
    public static WebhookEvent verify(String body, HttpHeaders headers, String secret, Duration tolerance, Instant now) {
        return verify(utf8(body), headers, secret, tolerance, now);
    }

    /**
     * The {@code webhook-signature} value of a message ({@code v1,<base64>}), as the server signs it:
     * for tests of your own receiver.
     *
     * <pre>{@code
     * long now = Instant.now().getEpochSecond();
     * Map<String, String> headers = Map.of("webhook-id", "msg_1", "webhook-timestamp", Long.toString(now),
     *         "webhook-signature", Webhooks.sign(secret, "msg_1", now, body));
     * }</pre>
     *
     * @param secret the endpoint's {@code whsec_...} secret
     * @param messageId the {@code webhook-id}
     * @param timestamp the {@code webhook-timestamp}, unix seconds
     * @param body the body's bytes
     * @return {@code v1,<base64 of the HMAC-SHA256>}
     * @throws WebhookVerificationException if the secret is not a {@code whsec_} secret
     */
    public static String sign(String secret, String messageId, long timestamp, byte[] body) {
        Objects.requireNonNull(messageId, "messageId");
        Objects.requireNonNull(body, "body");
        return "v1," + Base64.getEncoder().encodeToString(hmac(key(secret), messageId, Long.toString(timestamp), body));
    }

    /**
     * {@link #sign(String, String, long, byte[])} of a text body (its UTF-8 bytes).
     *
     * @param secret the endpoint's {@code whsec_...} secret
     * @param messageId the {@code webhook-id}
     * @param timestamp the {@code webhook-timestamp}, unix seconds
     * @param body the body
     * @return {@code v1,<base64 of the HMAC-SHA256>}
     * @throws WebhookVerificationException if the secret is not a {@code whsec_} secret
     */
    public static String sign(String secret, String messageId, long timestamp, String body) {
        return sign(secret, messageId, timestamp, Objects.requireNonNull(body, "body").getBytes(StandardCharsets.UTF_8));
    }

    private static byte[] utf8(String body) {
        return body == null ? null : body.getBytes(StandardCharsets.UTF_8);
    }

    /** Every value of a header in a map whose names may be in any letter case, each value a string or a list. */
    private static List<String> fromMap(Map<String, ?> headers, String name) {
        List<String> values = new ArrayList<>();
        for (Map.Entry<String, ?> e : headers.entrySet()) {
            if (e.getKey() == null || !e.getKey().trim().equalsIgnoreCase(name)) continue;
            Object value = e.getValue();
            if (value instanceof Collection<?> many) {
                for (Object one : many) if (one != null) values.add(one.toString());
            } else if (value instanceof Object[] many) {
                for (Object one : many) if (one != null) values.add(one.toString());
            } else if (value != null) {
                values.add(value.toString());
            }
        }
        return values;
    }

    private static WebhookEvent check(byte[] body, Function<String, List<String>> headers, String secret, Duration tolerance,
                                      Instant now) {
        Duration allowed = tolerance == null ? DEFAULT_TOLERANCE : tolerance;
        if (allowed.isNegative()) throw new ConfigurationException("tolerance must not be negative");
        byte[] key = key(secret);
        if (headers == null) {
            throw new WebhookVerificationException("no headers: pass the request's headers", WebhookVerificationException.Reason.MISSING_HEADER);
        }
        String id = single(headers, HEADER_ID);
        String timestamp = single(headers, HEADER_TIMESTAMP);
        String signatures = String.join(" ", headers.apply(HEADER_SIGNATURE)).trim();
        if (signatures.isEmpty()) {
            throw new WebhookVerificationException("no webhook-signature header", WebhookVerificationException.Reason.MISSING_HEADER);
        }
        if (!timestamp.matches("\\d{1,15}")) {
            throw new WebhookVerificationException("webhook-timestamp is not unix seconds: " + shown(timestamp),
                    WebhookVerificationException.Reason.INVALID_HEADER);
        }
        long sent = Long.parseLong(timestamp);
        long seconds = (now == null ? Instant.now() : now).getEpochSecond();
        long limit = allowed.getSeconds();
        long ahead = sent - seconds;
        if (ahead < -limit) {
            throw new WebhookVerificationException("webhook-timestamp " + sent + " is " + -ahead + " s before now (tolerance " + limit
                    + " s): a replayed message, or a clock that is off", WebhookVerificationException.Reason.TIMESTAMP_TOO_OLD);
        }
        if (ahead > limit) {
            throw new WebhookVerificationException("webhook-timestamp " + sent + " is " + ahead + " s after now (tolerance " + limit
                    + " s): a clock that is off", WebhookVerificationException.Reason.TIMESTAMP_TOO_NEW);
        }
        if (body == null) {
            throw new WebhookVerificationException("no body: pass the raw body exactly as received",
                    WebhookVerificationException.Reason.INVALID_BODY);
        }

        byte[] expected = hmac(key, id, timestamp, body);
        int checked = 0;
        boolean matched = false;
        for (String entry : signatures.split("\\s+")) {
            int comma = entry.indexOf(',');
            if (comma < 0 || !entry.substring(0, comma).equals("v1")) continue; // another version (v1a, v2, ...): not ours to check
            checked++;
            byte[] given;
            try {
                given = Base64.getDecoder().decode(entry.substring(comma + 1));
            } catch (IllegalArgumentException notBase64) {
                continue;
            }
            // Every entry is compared, also after a match: the time taken does not say which matched.
            if (MessageDigest.isEqual(expected, given)) matched = true;
        }
        if (checked == 0) {
            throw new WebhookVerificationException("webhook-signature holds no v1 signature",
                    WebhookVerificationException.Reason.NO_MATCHING_SIGNATURE);
        }
        if (!matched) {
            throw new WebhookVerificationException("no signature matches (" + checked + " v1 signature" + (checked == 1 ? "" : "s")
                    + " checked): another secret (this endpoint's current or previous one is needed), or a body or header changed "
                    + "on the way (pass the raw body exactly as received)", WebhookVerificationException.Reason.NO_MATCHING_SIGNATURE);
        }

        JsonNode parsed;
        try {
            parsed = Json.MAPPER.reader().with(DeserializationFeature.FAIL_ON_TRAILING_TOKENS).readTree(body);
        } catch (IOException e) {
            String why = e instanceof JsonProcessingException j ? j.getOriginalMessage() : e.getMessage();
            throw new WebhookVerificationException("the body is signed but is not JSON: " + why,
                    WebhookVerificationException.Reason.INVALID_BODY, e);
        }
        if (parsed == null || !parsed.isObject()) {
            throw new WebhookVerificationException("the body is signed but is not a JSON object", WebhookVerificationException.Reason.INVALID_BODY);
        }
        return Json.webhookEvent(parsed, id);
    }

    /** The one value of a header (the same value twice counts once). */
    private static String single(Function<String, List<String>> headers, String name) {
        Set<String> values = new LinkedHashSet<>();
        for (String value : headers.apply(name)) {
            if (value != null && !value.trim().isEmpty()) values.add(value.trim());
        }
        if (values.isEmpty()) {
            throw new WebhookVerificationException("no " + name + " header: is this a webhook message?",
                    WebhookVerificationException.Reason.MISSING_HEADER);
        }
        if (values.size() > 1) {
            throw new WebhookVerificationException("more than one " + name + " header, with different values",
                    WebhookVerificationException.Reason.INVALID_HEADER);
        }
        return values.iterator().next();
    }

    /** The HMAC key of a secret: the base64 after {@code whsec_} (a secret without the prefix is taken whole). */
    private static byte[] key(String secret) {
        if (secret == null || secret.isBlank()) {
            throw new WebhookVerificationException("no webhook secret: pass the whsec_ secret the endpoint was created with",
                    WebhookVerificationException.Reason.INVALID_SECRET);
        }
        String text = secret.trim();
        String encoded = text.startsWith(SECRET_PREFIX) ? text.substring(SECRET_PREFIX.length()) : text;
        byte[] key;
        try {
            key = Base64.getDecoder().decode(encoded);
        } catch (IllegalArgumentException e) {
            key = new byte[0];
        }
        if (key.length == 0) {
            throw new WebhookVerificationException("the secret is not a webhook secret (whsec_ followed by base64, as create() and "
                    + "rotateSecret() give it)", WebhookVerificationException.Reason.INVALID_SECRET);
        }
        return key;
    }

    private static byte[] hmac(byte[] key, String id, String timestamp, byte[] body) {
        try {
            Mac mac = Mac.getInstance(HMAC);
            mac.init(new SecretKeySpec(key, HMAC));
            mac.update((id + "." + timestamp + ".").getBytes(StandardCharsets.UTF_8));
            return mac.doFinal(body);
        } catch (GeneralSecurityException e) {
            throw new FileshareException("HMAC-SHA256 is not available: " + e.getMessage(), e);
        }
    }

    /** A header's value for a message: quoted, cut to 40 characters. */
    private static String shown(String value) {
        String cut = value.length() > 40 ? value.substring(0, 40) + "..." : value;
        return "\"" + cut.replaceAll("[^\\x20-\\x7e]", "?") + "\"";
    }
}
