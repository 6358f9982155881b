package dev.fileshare;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fileshare.FileshareException.ErrorDetails;
import java.net.http.HttpHeaders;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Maps a response that is not a success to the exception to throw. */
final class Errors {
    /** The 403 codes of a limit the account reached (the rest of 403 is a permission). */
    static final Set<String> LIMIT_CODES = Set.of("file_too_large", "daily_upload_limit_exceeded",
            "storage_quota_exceeded", "link_limit_exceeded", "webhook_limit_exceeded", "upload_request_full",
            "file_not_scannable");

    /** A {@code scope} parameter of a {@code WWW-Authenticate} challenge: quoted, or a bare token. */
    private static final Pattern SCOPE_PARAM = Pattern.compile("(?i)(?:^|[\\s,])scope\\s*=\\s*(?:\"([^\"]*)\"|([^\\s,\"]+))");
    /** {@code error="insufficient_scope"} in a {@code WWW-Authenticate} challenge (RFC 6750). */
    private static final Pattern INSUFFICIENT_SCOPE = Pattern.compile("(?i)(?:^|[\\s,])error\\s*=\\s*\"?insufficient_scope\"?");

    private Errors() {}

    /**
     * The scope a 403 names: the body's {@code error.required_scope}, else the {@code scope="…"} of
     * a {@code WWW-Authenticate} header; null when neither names one.
     */
    static String requiredScope(ErrorDetails details) {
        if (details == null) return null;
        JsonNode body = details.body();
        if (body != null) {
            JsonNode scope = body.path("error").path("required_scope");
            if (scope.isTextual() && !scope.asText().isBlank()) return scope.asText();
        }
        if (details.headers() == null) return null;
        for (String challenge : details.headers().allValues("www-authenticate")) {
            Matcher m = SCOPE_PARAM.matcher(challenge);
            if (m.find()) {
                String scope = m.group(1) != null ? m.group(1) : m.group(2);
                if (!scope.isBlank()) return scope;
            }
        }
        return null;
    }

    /** Whether a {@code WWW-Authenticate} header says {@code error="insufficient_scope"}. */
    private static boolean challengeSaysInsufficientScope(HttpHeaders headers) {
        for (String challenge : headers.allValues("www-authenticate")) {
            if (INSUFFICIENT_SCOPE.matcher(challenge).find()) return true;
        }
        return false;
    }

    static Long headerNumber(HttpHeaders headers, String name) {
        String raw = headers.firstValue(name).orElse(null);
        if (raw == null || !raw.trim().matches("\\d{1,18}")) return null;
        return Long.parseLong(raw.trim());
    }

    /** {@code Retry-After} in seconds (delta-seconds or an HTTP date), or null. */
    static Long parseRetryAfter(String value, long nowMillis) {
        if (value == null) return null;
        String trimmed = value.trim();
        if (trimmed.matches("\\d{1,18}")) return Long.parseLong(trimmed);
        try {
            ZonedDateTime date = ZonedDateTime.parse(trimmed, DateTimeFormatter.RFC_1123_DATE_TIME);
            long millis = date.toInstant().toEpochMilli() - nowMillis;
            return Math.max(0, (millis + 999) / 1000);
        } catch (DateTimeParseException e) {
            return null;
        }
    }

    static FileshareException fromResponse(int status, HttpHeaders headers, String bodyText) {
        String code = null;
        String serverMessage = null;
        JsonNode body = null;
        try {
            body = Json.MAPPER.readTree(bodyText == null ? "" : bodyText);
            JsonNode error = body == null ? null : body.get("error");
            if (error != null && error.isObject()) {
                if (error.path("code").isTextual()) code = error.get("code").asText();
                if (error.path("message").isTextual()) serverMessage = error.get("message").asText();
            }
        } catch (Exception notJson) {
            body = null; // a proxy's page, an empty body
        }
        if (body != null && body.isMissingNode()) body = null;
        String requestId = headers.firstValue("x-request-id").orElse(null);
        Long retryAfter = parseRetryAfter(headers.firstValue("retry-after").orElse(null), System.currentTimeMillis());
        String text = serverMessage;
        if (text == null) {
            String trimmed = bodyText == null ? "" : bodyText.trim();
            text = trimmed.isEmpty() ? "no message" : trimmed.substring(0, Math.min(200, trimmed.length()));
        }
        String message = status + (code != null ? " " + code : "") + ": " + text;
        if (status == 429) {
            RateLimitInfo info = new RateLimitInfo(
                    headerNumber(headers, "ratelimit-limit"),
                    headerNumber(headers, "ratelimit-remaining"),
                    headerNumber(headers, "ratelimit-reset"));
            return new RateLimitException(message, new ErrorDetails(status, code, requestId, retryAfter, info, headers, body), null);
        }
        ErrorDetails details = new ErrorDetails(status, code, requestId, retryAfter, null, headers, body);
        if (status == 401) return new AuthenticationException(message, details, null);
        if (status == 403) {
            if (code != null && LIMIT_CODES.contains(code)) return new LimitExceededException(message, details, null);
            if ("insufficient_scope".equals(code) || (code == null && challengeSaysInsufficientScope(headers))) {
                return new InsufficientScopeException(message, details, null);
            }
            if ("ip_not_allowed".equals(code)) return new IpNotAllowedException(message, details, null);
            return new PermissionDeniedException(message, details, null);
        }
        if (status == 413 && (code == null || LIMIT_CODES.contains(code))) {
            return new LimitExceededException(message, details, null);
        }
        if (status == 404) return new NotFoundException(message, details, null);
        if (status == 409 && "scan_pending".equals(code)) return new ScanPendingException(message, details, null);
        if (status >= 500) return new ServerException(message, details, null);
        return new BadRequestException(message, details, null);
    }

    static APIConnectionException connection(String message, Throwable cause) {
        return new APIConnectionException(message, ErrorDetails.NONE, cause);
    }

    static APIConnectionException idle(Duration timeout) {
        return new APITimeoutException("no data moved for " + timeout.toMillis() + " ms (timeout)", null);
    }

    static APIConnectionException connectTimeout(Duration timeout, Throwable cause) {
        return new APITimeoutException("could not connect within " + timeout.toMillis() + " ms (timeout)", cause);
    }
}
