package dev.fileshare;

import static org.junit.jupiter.api.Assertions.*;

import java.net.http.HttpHeaders;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ErrorsTest {
    private static HttpHeaders headers(String... pairs) {
        Map<String, List<String>> map = new java.util.HashMap<>();
        for (int i = 0; i + 1 < pairs.length; i += 2) map.put(pairs[i], List.of(pairs[i + 1]));
        return HttpHeaders.of(map, (a, b) -> true);
    }

    private static FileshareException map(int status, String code) {
        return Errors.fromResponse(status, headers("X-Request-Id", "req-1"), FakeServer.error(code, "Nope."));
    }

    @Test
    void mapsStatusesAndCodesToClasses() {
        assertInstanceOf(AuthenticationException.class, map(401, "unauthorized"));
        assertInstanceOf(PermissionDeniedException.class, map(403, "plan_not_supported"));
        assertInstanceOf(LimitExceededException.class, map(403, "file_too_large"));
        assertInstanceOf(LimitExceededException.class, map(403, "daily_upload_limit_exceeded"));
        assertInstanceOf(LimitExceededException.class, map(413, "file_too_large"));
        assertInstanceOf(LimitExceededException.class, map(403, "link_limit_exceeded"));
        assertInstanceOf(LimitExceededException.class, map(403, "storage_quota_exceeded"));
        assertInstanceOf(LimitExceededException.class, map(403, "upload_request_full"));
        assertFalse(Retry.isRetryable(map(403, "upload_request_full")));
        assertInstanceOf(PermissionDeniedException.class, Errors.fromResponse(403, headers(), "<html>a proxy</html>")); // no code
        assertInstanceOf(BadRequestException.class, map(409, "default_link_required"));
        assertInstanceOf(AuthenticationException.class, map(401, "invalid_password"));
        assertInstanceOf(BadRequestException.class, map(413, "upload_length_exceeded"));
        assertInstanceOf(LimitExceededException.class, map(413, "storage_quota_exceeded"));
        assertInstanceOf(BadRequestException.class, map(409, "idempotency_in_progress"));
        assertInstanceOf(BadRequestException.class, map(422, "idempotency_key_reused"));
        assertInstanceOf(NotFoundException.class, map(404, "not_found"));
        assertInstanceOf(BadRequestException.class, map(400, "invalid_parameter"));
        assertInstanceOf(BadRequestException.class, map(410, "upload_expired"));
        assertInstanceOf(BadRequestException.class, map(460, "checksum_mismatch"));
        assertInstanceOf(RateLimitException.class, map(429, "rate_limited"));
        assertInstanceOf(ServerException.class, map(500, "internal_error"));
        assertInstanceOf(ServerException.class, map(503, "service_unavailable"));
        for (Class<?> c : List.of(AuthenticationException.class, PermissionDeniedException.class, LimitExceededException.class,
                NotFoundException.class, BadRequestException.class, RateLimitException.class, ServerException.class,
                APIConnectionException.class, IntegrityException.class, ConfigurationException.class)) {
            assertTrue(FileshareException.class.isAssignableFrom(c), c.getName());
            assertTrue(RuntimeException.class.isAssignableFrom(c), c.getName());
        }
    }

    @Test
    void carriesStatusCodeRequestIdAndMessage() {
        FileshareException e = map(404, "not_found");
        assertEquals(404, e.status().orElseThrow());
        assertEquals("not_found", e.code());
        assertEquals("req-1", e.requestId());
        assertTrue(e.retryAfter().isEmpty());
        assertEquals("404 not_found: Nope. (request id req-1)", e.getMessage());
    }

    @Test
    void rateLimitCarriesRetryAfterAndHeaders() {
        RateLimitException e = (RateLimitException) Errors.fromResponse(429,
                headers("Retry-After", "42", "RateLimit-Limit", "10", "RateLimit-Remaining", "0", "RateLimit-Reset", "41"),
                FakeServer.error("rate_limited", "Rate limit exceeded."));
        assertEquals(42L, e.retryAfter().orElseThrow().toSeconds());
        assertEquals(new RateLimitInfo(10L, 0L, 41L), e.rateLimit());
    }

    @Test
    void bodiesThatAreNotJson() {
        FileshareException e = Errors.fromResponse(502, headers(), "<html>Bad gateway</html>");
        assertInstanceOf(ServerException.class, e);
        assertNull(e.code());
        assertTrue(e.getMessage().startsWith("502: <html>"), e.getMessage());
        assertEquals("413: no message", Errors.fromResponse(413, headers(), "").getMessage());
        assertInstanceOf(LimitExceededException.class, Errors.fromResponse(413, headers(), ""));
    }

    @Test
    void retryAfterAsSecondsOrDate() {
        assertEquals(5L, Errors.parseRetryAfter(" 5 ", 0));
        assertNull(Errors.parseRetryAfter("soon", 0));
        long now = java.time.ZonedDateTime.parse("Wed, 25 Nov 2026 17:52:32 GMT", java.time.format.DateTimeFormatter.RFC_1123_DATE_TIME)
                .toInstant().toEpochMilli();
        assertEquals(10L, Errors.parseRetryAfter("Wed, 25 Nov 2026 17:52:42 GMT", now));
        assertEquals(0L, Errors.parseRetryAfter("Wed, 25 Nov 2026 17:52:22 GMT", now));
    }

    @Test
    void backoffIsExponentialWithFullJitterAndALongRetryAfterIsThrown() {
        Retry retry = new Retry(5, ms -> {}, () -> 1.0);
        assertEquals(500, retry.delayMillis(0, null));
        assertEquals(1000, retry.delayMillis(1, null));
        assertEquals(2000, retry.delayMillis(2, null));
        assertEquals(8000, retry.delayMillis(6, null));
        assertEquals(8000, retry.delayMillis(40, null));
        assertEquals(0, new Retry(5, ms -> {}, () -> 0.0).delayMillis(3, null));
        FileshareException wait60 = Errors.fromResponse(429, headers("Retry-After", "60"), "");
        assertEquals(60_000, retry.delayMillis(0, wait60));
        assertTrue(Retry.isRetryable(wait60));
        // Over 60 s: not retryable, and pause() throws the error itself rather than sleeping.
        java.util.List<Long> slept = new java.util.ArrayList<>();
        Retry recording = new Retry(5, slept::add, () -> 1.0);
        FileshareException wait61 = Errors.fromResponse(429, headers("Retry-After", "61"), "");
        assertFalse(Retry.isRetryable(wait61));
        assertSame(wait61, assertThrows(RateLimitException.class, () -> recording.pause(0, wait61)));
        FileshareException busy120 = Errors.fromResponse(503, headers("Retry-After", "120"), "");
        assertFalse(Retry.isRetryable(busy120));
        assertSame(busy120, assertThrows(ServerException.class, () -> recording.pause(0, busy120)));
        assertTrue(slept.isEmpty());
        FileshareException wait3 = Errors.fromResponse(503, headers("Retry-After", "3"), "");
        assertEquals(3_000, retry.delayMillis(0, wait3));
        assertTrue(Retry.isRetryable(wait3));
        for (int status : new int[] {500, 502, 503, 504}) assertTrue(Retry.isRetryable(map(status, "internal_error")), "" + status);
        assertFalse(Retry.isRetryable(map(501, "not_implemented")));
        assertFalse(Retry.isRetryable(map(400, "invalid_parameter")));
        assertTrue(Retry.isRetryable(map(409, "idempotency_in_progress")));
        assertFalse(Retry.isRetryable(map(409, "default_link_required")));
        assertFalse(Retry.isRetryable(map(422, "idempotency_key_reused")));
        assertTrue(Retry.isRetryable(Errors.connection("x", null)));
        // What carries no key and must not be sent twice: only after a 429 or a 503.
        assertTrue(Retry.nothingWasDone(map(429, "rate_limited")));
        assertTrue(Retry.nothingWasDone(map(503, "service_unavailable")));
        assertFalse(Retry.nothingWasDone(map(500, "internal_error")));
        assertFalse(Retry.nothingWasDone(map(502, "bad_gateway")));
        assertFalse(Retry.nothingWasDone(Errors.connection("x", null)));
    }
}
