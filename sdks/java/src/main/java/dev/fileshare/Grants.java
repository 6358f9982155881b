package dev.fileshare;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Download grants. A {@code POST} to a link checks its password, counts one download and answers
 * {@code 303 See Other} to a grant URL that serves the file (Range, If-Range, ETag) for an hour
 * without counting again. The client remembers each grant by link and destination until shortly
 * before it ends, so that continuing a partial file through the same client is never counted twice.
 */
final class Grants {
    /** A grant is used until this long before the end the server gave it. */
    static final Duration MARGIN = Duration.ofMinutes(1);
    /** Without an end in the answer, a grant is taken to last this long (the server gives 1 hour). */
    static final Duration DEFAULT_LIFETIME = Duration.ofMinutes(55);
    /** Redirects of the link itself (301, 302, 307, 308: e.g. http to https) followed with a POST again. */
    private static final int MAX_MOVES = 5;
    private static final int MAX_REMEMBERED = 256;

    /** A grant URL and when it ends. */
    record Grant(URI url, Instant expiresAt) {}

    /** What one POST answered: a grant, or the link moved elsewhere. */
    private record Answer(Grant grant, URI movedTo) {}

    private final Map<String, Grant> remembered = new LinkedHashMap<>();
    private final Clock clock;

    Grants(Clock clock) {
        this.clock = clock;
    }

    private static String key(String link, Path destination) {
        return link + "\n" + destination.toAbsolutePath().normalize();
    }

    /** The grant still valid for this link and destination, or null. */
    synchronized URI remembered(String link, Path destination) {
        String key = key(link, destination);
        Grant grant = remembered.get(key);
        if (grant == null) return null;
        if (clock.instant().isBefore(grant.expiresAt().minus(MARGIN))) return grant.url();
        remembered.remove(key);
        return null;
    }

    synchronized void remember(String link, Path destination, Grant grant) {
        remembered.remove(key(link, destination));
        remembered.put(key(link, destination), grant);
        Instant now = clock.instant();
        remembered.values().removeIf(g -> !now.isBefore(g.expiresAt().minus(MARGIN)));
        for (Iterator<String> oldest = remembered.keySet().iterator(); remembered.size() > MAX_REMEMBERED; ) {
            oldest.next();
            oldest.remove();
        }
    }

    synchronized void forget(String link, Path destination) {
        remembered.remove(key(link, destination));
    }

    /**
     * POSTs to the link (with the password, if any, in a JSON body) and returns the grant of the
     * 303. Never let the HTTP library follow the 303: the SDK GETs the grant itself. Sent again only
     * when the server answered 429 or 503 (nothing counted), never after a lost connection.
     */
    Grant obtain(Transport transport, URI link, String password) {
        URI target = link;
        for (int moves = 0; ; moves++) {
            URI to = target;
            Answer answer = transport.retry.run(attempt -> post(transport, to, password), Retry::nothingWasDone);
            if (answer.grant() != null) return answer.grant();
            if (moves >= MAX_MOVES) throw new FileshareException("the link " + link + " redirected more than " + MAX_MOVES + " times");
            target = answer.movedTo();
        }
    }

    private Answer post(Transport transport, URI link, String password) {
        HttpRequest.Builder b = transport.request(link, false);
        HttpRequest.BodyPublisher body = HttpRequest.BodyPublishers.noBody();
        if (password != null) {
            b.header("Content-Type", "application/json");
            body = HttpRequest.BodyPublishers.ofString(Json.write(Map.of("password", password)), StandardCharsets.UTF_8);
        }
        HttpResponse<InputStream> response = transport.send(transport.withoutRedirects(), b.POST(body).build(), null);
        String text = transport.readText(response);
        int status = response.statusCode();
        if (status < 200 || status >= 400) throw Errors.fromResponse(status, response.headers(), text);
        String location = response.headers().firstValue("location").map(String::trim).orElse(null);
        if (location != null && status != 303 && status >= 300) return new Answer(null, resolve(link, location, status, response));
        JsonNode json = null;
        try {
            json = text.isBlank() ? null : Json.MAPPER.readTree(text);
        } catch (IOException notJson) {
            // the Location is enough
        }
        if (location == null && json != null && json.path("download_url").isTextual()) location = json.get("download_url").asText();
        if (location == null) {
            throw new FileshareException(status + ": the link answered the download's POST without a grant URL (Location)",
                    details(status, response), null);
        }
        OffsetDateTime end = json == null ? null : ApiTime.parse(json.path("expires_at").textValue());
        Instant expiresAt = end != null ? end.toInstant() : clock.instant().plus(DEFAULT_LIFETIME);
        return new Answer(new Grant(resolve(link, location, status, response), expiresAt), null);
    }

    /** The answer's Location, resolved against the link; an http(s) URL or an exception. */
    private static URI resolve(URI link, String location, int status, HttpResponse<InputStream> response) {
        URI url;
        try {
            url = link.resolve(location);
        } catch (IllegalArgumentException e) {
            throw new FileshareException(status + ": the link answered with a Location that is not a URL", details(status, response), e);
        }
        String scheme = url.getScheme();
        if (!"http".equalsIgnoreCase(scheme) && !"https".equalsIgnoreCase(scheme)) {
            throw new FileshareException(status + ": the link sent the download to " + scheme + ":, not to an http(s) URL",
                    details(status, response), null);
        }
        return url;
    }

    private static FileshareException.ErrorDetails details(int status, HttpResponse<InputStream> response) {
        return new FileshareException.ErrorDetails(status, null, response.headers().firstValue("x-request-id").orElse(null), null, null,
                response.headers(), null);
    }
}
