package dev.fileshare;

import static org.junit.jupiter.api.Assertions.*;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NavigableSet;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** Issue 33 against a local fake: {@code client.webhooks()}, its requests, records, retries and errors. */
class WebhooksFakeTest {
    static final String SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

    static String webhook(long id, String secret) {
        return "{\"webhook_id\":" + id + ",\"url\":\"https://example.com/hooks\",\"events\":[\"file.uploaded\",\"file.deleted\"],"
                + "\"description\":\"indexer\",\"enabled\":true,\"disabled_reason\":null,\"created_at\":\"2026-11-27 10:00:00\""
                + (secret == null ? "" : ",\"secret\":\"" + secret + "\"") + "}";
    }

    static String delivery(long id) {
        return "{\"delivery_id\":" + id + ",\"event_type\":\"webhook.test\",\"message_id\":\"msg_" + id + "\",\"attempts\":2,"
                + "\"last_status\":500,\"last_error\":\"HTTP 500\",\"next_attempt_at\":\"2026-11-27 10:05:00\",\"state\":\"pending\","
                + "\"created_at\":\"2026-11-27 10:00:0" + (id % 10) + "\"}";
    }

    private static JsonNode body(FakeServer.Seen seen) throws IOException {
        return Json.MAPPER.readTree(seen.body());
    }

    @Test
    void createSendsTheFieldsWithAnIdempotencyKeyAndReadsTheSecret() throws Exception {
        try (FakeServer fake = new FakeServer((ex, n) -> FakeServer.json(ex, 201,
                "{\"success\":true,\"webhook\":" + webhook(5, SECRET) + "}", "Location", "/api/v1/webhooks/5"));
             FileshareClient client = fake.client().build()) {
            Webhook hook = client.webhooks().create(WebhookCreateParams.builder().url("https://example.com/hooks")
                    .events(WebhookEvent.FILE_UPLOADED, WebhookEvent.FILE_DELETED).description("indexer").build());
            assertEquals(5, hook.webhookId());
            assertEquals("https://example.com/hooks", hook.url());
            assertEquals(List.of("file.uploaded", "file.deleted"), hook.events());
            assertEquals("indexer", hook.description());
            assertTrue(hook.enabled());
            assertNull(hook.disabledReason());
            assertEquals(OffsetDateTime.of(2026, 11, 27, 10, 0, 0, 0, ZoneOffset.UTC), hook.createdAtTime());
            assertEquals(SECRET, hook.secret());
            assertEquals(Map.of(), hook.extra());
            assertFalse(hook.toString().contains(SECRET.substring(6)), hook.toString());
            assertTrue(hook.toString().contains("secret=whsec_[redacted]"), hook.toString());
            assertTrue(hook.receives("file.uploaded"));
            assertFalse(hook.receives("link.created"));

            FakeServer.Seen seen = fake.requests.get(0);
            assertEquals("POST", seen.method());
            assertEquals("/api/v1/webhooks", seen.path());
            assertTrue(seen.header("Content-Type").startsWith("application/json"));
            assertEquals("Bearer " + TestKeys.FAKE_KEY, seen.header("Authorization"));
            assertEquals(Json.MAPPER.readTree("{\"url\":\"https://example.com/hooks\",\"events\":[\"file.uploaded\",\"file.deleted\"],"
                    + "\"description\":\"indexer\"}"), body(seen));
            String key = seen.header("Idempotency-Key");
            assertTrue(key.matches("[0-9a-f-]{36}"), key);

            // Each call its own key; no description, none sent; allEvents is ["*"]; the caller's own key.
            client.webhooks().create(WebhookCreateParams.builder().url("https://example.com/all").allEvents().idempotencyKey("mine-1").build());
            FakeServer.Seen second = fake.requests.get(1);
            assertEquals(Json.MAPPER.readTree("{\"url\":\"https://example.com/all\",\"events\":[\"*\"]}"), body(second));
            assertEquals("mine-1", second.header("Idempotency-Key"));
            client.webhooks().create(WebhookCreateParams.builder().url("https://example.com/x").events(List.of("link.created")).build());
            assertNotEquals(key, fake.requests.get(2).header("Idempotency-Key"));

            // The answer's status and Location, as any call's.
            RawResponse<Webhook> raw = client.withRawResponse(c -> c.webhooks().create(WebhookCreateParams.builder()
                    .url("https://example.com/hooks").allEvents().build()));
            assertEquals(201, raw.statusCode());
            assertEquals("/api/v1/webhooks/5", raw.headers().firstValue("location").orElseThrow());
            assertEquals(SECRET, raw.data().secret());
        }
    }

    @Test
    void createParamsNeedAUrlAndEvents() {
        assertThrows(ConfigurationException.class, () -> WebhookCreateParams.builder().allEvents().build());
        assertThrows(ConfigurationException.class, () -> WebhookCreateParams.builder().url(" ").allEvents().build());
        assertThrows(ConfigurationException.class, () -> WebhookCreateParams.builder().url("https://example.com").build());
        assertThrows(ConfigurationException.class, () -> WebhookCreateParams.builder().events((List<String>) null));
        assertThrows(ConfigurationException.class, () -> WebhookCreateParams.builder().events("file.uploaded", null));
        assertThrows(ConfigurationException.class, () -> WebhookCreateParams.builder().idempotencyKey(""));
        WebhookCreateParams params = WebhookCreateParams.builder().url("https://example.com").events("file.uploaded").build();
        assertEquals("https://example.com", params.url());
        assertEquals(List.of("file.uploaded"), params.events());
        assertNull(params.description());
        assertNull(params.idempotencyKey());
        assertEquals("WebhookCreateParams{url=https://example.com, events=[file.uploaded]}", params.toString());
    }

    @Test
    void aCreationIsRetriedWithTheSameKey() throws Exception {
        try (FakeServer fake = new FakeServer((ex, n) -> {
            if (n == 1) FakeServer.json(ex, 500, FakeServer.error("internal_error", "x"));
            else if (n == 2) FakeServer.json(ex, 409, FakeServer.error("idempotency_in_progress", "busy"));
            else FakeServer.json(ex, 201, "{\"success\":true,\"webhook\":" + webhook(5, SECRET) + "}", "Idempotent-Replayed", "true");
        }); FileshareClient client = fake.client().maxRetries(2).build()) {
            Webhook hook = client.webhooks().create(WebhookCreateParams.builder().url("https://example.com/hooks").allEvents().build());
            assertEquals(SECRET, hook.secret());
            assertEquals(3, fake.requests.size());
            String key = fake.requests.get(0).header("Idempotency-Key");
            assertNotNull(key);
            for (FakeServer.Seen seen : fake.requests) assertEquals(key, seen.header("Idempotency-Key"), "the same key on every attempt");
        }
        try (LinksFakeTest.HangUp server = new LinksFakeTest.HangUp()) {
            FileshareClient.Builder b = FileshareClient.builder().baseUrl(server.baseUrl()).apiKey(TestKeys.FAKE_KEY).maxRetries(2);
            b.sleeper = millis -> { };
            try (FileshareClient client = b.build()) {
                assertThrows(APIConnectionException.class, () -> client.webhooks().create(WebhookCreateParams.builder()
                        .url("https://example.com/hooks").allEvents().build()));
                assertEquals(3, server.accepted.get(), "a lost connection too: 1 + 2 retries");
                int before = server.accepted.get();
                assertThrows(APIConnectionException.class, () -> client.webhooks().rotateSecret(5));
                assertThrows(APIConnectionException.class, () -> client.webhooks().test(5));
                assertThrows(APIConnectionException.class, () -> client.webhooks().retryDelivery(5, 9));
                assertEquals(before + 3, server.accepted.get(), "one attempt each: the server may have acted");
            }
        }
    }

    @Test
    void listGetUpdateDelete() throws Exception {
        try (FakeServer fake = new FakeServer((ex, n) -> {
            String method = ex.getRequestMethod();
            if (method.equals("GET") && ex.getRequestURI().getPath().equals("/api/v1/webhooks")) {
                FakeServer.json(ex, 200, "{\"success\":true,\"webhooks\":[" + webhook(5, null) + "," + webhook(6, null).replace(
                        "\"enabled\":true,\"disabled_reason\":null", "\"enabled\":false,\"disabled_reason\":\"gone\",\"region\":\"eu\"") + "]}");
            } else if (method.equals("DELETE")) {
                FakeServer.json(ex, 200, "{\"success\":true,\"message\":\"Webhook deleted.\"}");
            } else if (ex.getRequestURI().getPath().endsWith("/404")) {
                FakeServer.json(ex, 404, FakeServer.error("not_found", "Webhook not found."));
            } else {
                FakeServer.json(ex, 200, "{\"success\":true,\"webhook\":" + webhook(5, null) + "}");
            }
        }); FileshareClient client = fake.client().build()) {
            List<Webhook> hooks = client.webhooks().list();
            assertEquals(List.of(5L, 6L), hooks.stream().map(Webhook::webhookId).toList());
            assertNull(hooks.get(0).secret());
            assertFalse(hooks.get(1).enabled());
            assertEquals(Webhook.DISABLED_GONE, hooks.get(1).disabledReason());
            assertEquals(Map.of("region", "eu"), hooks.get(1).extra(), "unknown fields kept");
            assertThrows(UnsupportedOperationException.class, () -> hooks.add(hooks.get(0)));
            assertEquals("GET /api/v1/webhooks", fake.requests.get(0).method() + " " + fake.requests.get(0).path());

            assertEquals(5, client.webhooks().get(5).webhookId());
            assertEquals("GET /api/v1/webhooks/5", fake.requests.get(1).method() + " " + fake.requests.get(1).path());
            NotFoundException missing = assertThrows(NotFoundException.class, () -> client.webhooks().get(404));
            assertEquals("not_found", missing.code());

            client.webhooks().update(5, WebhookUpdateParams.builder().description("renamed").build());
            FakeServer.Seen patch = fake.requests.get(3);
            assertEquals("PATCH /api/v1/webhooks/5", patch.method() + " " + patch.path());
            assertEquals(Json.MAPPER.readTree("{\"description\":\"renamed\"}"), body(patch), "only what is set");
            client.webhooks().update(5, WebhookUpdateParams.builder().url("https://example.com/new").allEvents().clearDescription()
                    .enabled(false).build());
            assertEquals(Json.MAPPER.readTree("{\"url\":\"https://example.com/new\",\"events\":[\"*\"],\"description\":null,\"enabled\":false}"),
                    body(fake.requests.get(4)), "cleared: an explicit null");
            client.webhooks().update(5, WebhookUpdateParams.builder().events("link.created", "link.revoked").enabled(true).build());
            assertEquals(Json.MAPPER.readTree("{\"events\":[\"link.created\",\"link.revoked\"],\"enabled\":true}"), body(fake.requests.get(5)));
            assertThrows(ConfigurationException.class, () -> client.webhooks().update(5, null));
            assertThrows(ConfigurationException.class, () -> WebhookUpdateParams.builder().description(null));
            assertThrows(ConfigurationException.class, () -> WebhookUpdateParams.builder().url(null));
            assertEquals("WebhookUpdateParams{description=null, enabled=true}",
                    WebhookUpdateParams.builder().clearDescription().enabled(true).build().toString());

            client.webhooks().delete(5);
            assertEquals("DELETE /api/v1/webhooks/5", fake.requests.get(6).method() + " " + fake.requests.get(6).path());
            assertEquals(0, fake.requests.get(6).body().length);
            assertNull(fake.requests.get(0).header("Idempotency-Key"), "only a creation carries a key");
            assertNull(fake.requests.get(3).header("Idempotency-Key"));
        }
    }

    @Test
    void rotateSecretTestAndRetryDeliveryAreSentAgainOnlyAfter429Or503() throws Exception {
        try (FakeServer fake = new FakeServer((ex, n) -> {
            String path = ex.getRequestURI().getPath();
            if (n % 2 == 1) {
                if (path.endsWith("/test")) FakeServer.json(ex, 429, FakeServer.error("rate_limited", "slow"), "Retry-After", "1");
                else FakeServer.json(ex, 503, FakeServer.error("unavailable", "later"));
            } else if (path.endsWith("/rotate-secret")) {
                FakeServer.json(ex, 200, "{\"success\":true,\"webhook\":" + webhook(5, "whsec_bmV3IHNlY3JldA==") + "}");
            } else if (path.endsWith("/test")) {
                FakeServer.json(ex, 202, "{\"success\":true,\"message_id\":\"msg_2Abc\"}");
            } else {
                FakeServer.json(ex, 202, "{\"success\":true}");
            }
        }); FileshareClient client = fake.client().build()) {
            assertEquals("whsec_bmV3IHNlY3JldA==", client.webhooks().rotateSecret(5).secret());
            assertEquals("msg_2Abc", client.webhooks().test(5));
            client.webhooks().retryDelivery(5, 77);
            List<String> seen = fake.requests.stream().map(s -> s.method() + " " + s.path()).toList();
            assertEquals(List.of(
                    "POST /api/v1/webhooks/5/rotate-secret", "POST /api/v1/webhooks/5/rotate-secret",
                    "POST /api/v1/webhooks/5/test", "POST /api/v1/webhooks/5/test",
                    "POST /api/v1/webhooks/5/deliveries/77/retry", "POST /api/v1/webhooks/5/deliveries/77/retry"), seen);
            assertEquals(1000L, fake.sleeps.get(1), "Retry-After honoured");
            for (FakeServer.Seen s : fake.requests) {
                assertEquals(0, s.body().length, "no body");
                assertNull(s.header("Idempotency-Key"));
            }
        }
        try (FakeServer fake = new FakeServer((ex, n) -> FakeServer.json(ex, 500, FakeServer.error("internal_error", "x")));
             FileshareClient client = fake.client().maxRetries(3).build()) {
            assertThrows(ServerException.class, () -> client.webhooks().rotateSecret(5));
            assertThrows(ServerException.class, () -> client.webhooks().test(5));
            assertThrows(ServerException.class, () -> client.webhooks().retryDelivery(5, 77));
            assertEquals(3, fake.requests.size(), "never after a 500: the server may have acted");
            assertThrows(ServerException.class, () -> client.webhooks().get(5));
            assertEquals(3 + 4, fake.requests.size(), "a read is retried");
        }
    }

    @Test
    void testNeedsAMessageIdInTheAnswer() throws Exception {
        try (FakeServer fake = new FakeServer((ex, n) -> FakeServer.json(ex, 202, "{\"success\":true}"));
             FileshareClient client = fake.client().build()) {
            assertThrows(FileshareException.class, () -> client.webhooks().test(5));
            assertThrows(FileshareException.class, () -> client.webhooks().get(5), "no webhook object");
            assertThrows(FileshareException.class, () -> client.webhooks().list(), "no webhook list");
            assertThrows(FileshareException.class, () -> client.webhooks().deliveries(5), "no delivery list");
        }
    }

    @Test
    void theWebhookErrors() throws Exception {
        try (FakeServer fake = new FakeServer((ex, n) -> {
            switch (n) {
                case 1 -> FakeServer.json(ex, 400, FakeServer.error("webhook_url_not_allowed", "The URL's host is a private address."));
                case 2 -> FakeServer.json(ex, 400, FakeServer.error("invalid_parameter", "events: unknown event type file.exploded."));
                case 3 -> FakeServer.json(ex, 403, FakeServer.error("webhook_limit_exceeded", "An account has at most 20 webhook endpoints."));
                default -> FakeServer.json(ex, 403, "{\"success\":false,\"error\":{\"code\":\"insufficient_scope\",\"message\":\"Lacks it.\","
                        + "\"required_scope\":\"webhooks:manage\"}}");
            }
        }); FileshareClient client = fake.client().build()) {
            WebhookCreateParams params = WebhookCreateParams.builder().url("https://10.0.0.1/hook").allEvents().build();
            BadRequestException url = assertThrows(BadRequestException.class, () -> client.webhooks().create(params));
            assertEquals("webhook_url_not_allowed", url.code());
            assertEquals(400, url.status().orElseThrow());
            assertEquals("invalid_parameter", assertThrows(BadRequestException.class, () -> client.webhooks().create(params)).code());
            LimitExceededException limit = assertThrows(LimitExceededException.class, () -> client.webhooks().create(params));
            assertEquals("webhook_limit_exceeded", limit.code());
            assertEquals("webhooks:manage", assertThrows(InsufficientScopeException.class, () -> client.webhooks().list()).requiredScope());
            assertEquals(4, fake.requests.size(), "none of them retried");
        }
    }

    private static Map<String, String> query(String raw) {
        Map<String, String> q = new HashMap<>();
        if (raw == null) return q;
        for (String pair : raw.split("&")) {
            String[] kv = pair.split("=", 2);
            q.put(kv[0], URLDecoder.decode(kv[1], StandardCharsets.UTF_8));
        }
        return q;
    }

    /** An endpoint's deliveries: {@code GET /webhooks/5/deliveries} newest first by {@code before_id}, default limit 20. */
    private static FakeServer deliveriesFake(NavigableSet<Long> ids) throws IOException {
        return new FakeServer((ex, n) -> {
            Map<String, String> q = query(ex.getRequestURI().getRawQuery());
            int limit = Integer.parseInt(q.getOrDefault("limit", "20"));
            List<Long> newestFirst = new ArrayList<>(q.containsKey("before_id")
                    ? ids.headSet(Long.parseLong(q.get("before_id")), false).descendingSet() : ids.descendingSet());
            List<Long> page = newestFirst.subList(0, Math.min(limit, newestFirst.size()));
            StringBuilder deliveries = new StringBuilder();
            for (long id : page) deliveries.append(deliveries.length() == 0 ? "" : ",").append(delivery(id));
            boolean more = limit < newestFirst.size();
            FakeServer.json(ex, 200, "{\"success\":true,\"deliveries\":[" + deliveries + "],\"pagination\":{\"limit\":" + limit
                    + ",\"next_before_id\":" + (more ? page.get(page.size() - 1) : "null") + "}}");
        });
    }

    @Test
    void deliveriesReadsAPageAndSendsTheParameters() throws Exception {
        try (FakeServer fake = deliveriesFake(new TreeSet<>(List.of(1L, 2L, 3L, 4L, 5L))); FileshareClient client = fake.client().build()) {
            WebhookDeliveryList first = client.webhooks().deliveries(5, DeliveryListParams.builder().limit(2).build());
            assertEquals(List.of(5L, 4L), first.deliveries().stream().map(WebhookDelivery::deliveryId).toList());
            assertEquals(new WebhookDeliveryPagination(2, 4L), first.pagination());
            assertEquals("/api/v1/webhooks/5/deliveries?limit=2", fake.requests.get(0).path());
            WebhookDelivery d = first.deliveries().get(0);
            assertEquals("webhook.test", d.eventType());
            assertEquals("msg_5", d.messageId());
            assertEquals(2, d.attempts());
            assertEquals(500, d.lastStatus());
            assertEquals("HTTP 500", d.lastError());
            assertEquals(WebhookDelivery.STATE_PENDING, d.state());
            assertEquals(OffsetDateTime.of(2026, 11, 27, 10, 5, 0, 0, ZoneOffset.UTC), d.nextAttemptAtTime());
            assertEquals(OffsetDateTime.of(2026, 11, 27, 10, 0, 5, 0, ZoneOffset.UTC), d.createdAtTime());
            assertEquals(Map.of(), d.extra());

            WebhookDeliveryList next = client.webhooks().deliveries(5, DeliveryListParams.builder().limit(2)
                    .beforeId(first.pagination().nextBeforeId()).build());
            assertEquals(List.of(3L, 2L), next.deliveries().stream().map(WebhookDelivery::deliveryId).toList());
            assertEquals("/api/v1/webhooks/5/deliveries?limit=2&before_id=4", fake.requests.get(1).path());
            client.webhooks().deliveries(5);
            assertEquals("/api/v1/webhooks/5/deliveries", fake.requests.get(2).path(), "nothing set, nothing sent");
            client.webhooks().deliveries(5, null);
            assertEquals("/api/v1/webhooks/5/deliveries", fake.requests.get(3).path());
        }
    }

    @Test
    void aDeliveryWithoutAnAttemptYet() {
        WebhookDelivery d = Json.webhookDelivery(Json.MAPPER.valueToTree(new java.util.LinkedHashMap<String, Object>() {{
            put("delivery_id", 9);
            put("event_type", "file.uploaded");
            put("message_id", "msg_9");
            put("attempts", 0);
            put("last_status", null);
            put("last_error", null);
            put("next_attempt_at", null);
            put("state", "succeeded");
            put("created_at", "2026-11-27 10:00:00");
            put("duration_ms", 12);
        }}));
        assertNull(d.lastStatus());
        assertNull(d.lastError());
        assertNull(d.nextAttemptAtTime());
        assertEquals(Map.of("duration_ms", 12), d.extra());
    }

    @Test
    void iterateDeliveriesPagesByNextBeforeId() throws Exception {
        NavigableSet<Long> ids = new TreeSet<>();
        for (long id = 1; id <= 7; id++) ids.add(id);
        try (FakeServer fake = deliveriesFake(ids); FileshareClient client = fake.client().build()) {
            List<Long> yielded = new ArrayList<>();
            for (WebhookDelivery d : client.webhooks().iterateDeliveries(5, DeliveryListParams.builder().limit(3).build())) {
                yielded.add(d.deliveryId());
            }
            assertEquals(List.of(7L, 6L, 5L, 4L, 3L, 2L, 1L), yielded);
            assertEquals(List.of(
                    "/api/v1/webhooks/5/deliveries?limit=3",
                    "/api/v1/webhooks/5/deliveries?limit=3&before_id=5",
                    "/api/v1/webhooks/5/deliveries?limit=3&before_id=2"),
                    fake.requests.stream().map(FakeServer.Seen::path).toList());

            fake.requests.clear();
            assertEquals(7L, client.webhooks().iterateDeliveries(5).stream().findFirst().orElseThrow().deliveryId());
            assertEquals(List.of("/api/v1/webhooks/5/deliveries?limit=100"), fake.requests.stream().map(FakeServer.Seen::path).toList());
            assertEquals(List.of(3L, 2L, 1L), client.webhooks().iterateDeliveries(5, DeliveryListParams.builder().beforeId(4).limit(2).build())
                    .stream().map(WebhookDelivery::deliveryId).toList());
        }
        try (FakeServer fake = new FakeServer((ex, n) -> FakeServer.json(ex, 200, "{\"success\":true,\"deliveries\":["
                + delivery(5) + "],\"pagination\":{\"limit\":1,\"next_before_id\":5}}"));
             FileshareClient client = fake.client().build()) {
            Iterator<WebhookDelivery> it = client.webhooks().iterateDeliveries(5, DeliveryListParams.builder().limit(1).build()).iterator();
            assertEquals(5, it.next().deliveryId());
            FileshareException e = assertThrows(FileshareException.class, it::next);
            assertTrue(e.getMessage().contains("next_before_id 5 does not go below 5"), e.getMessage());
        }
    }

    @Test
    void withOptionsAppliesToWebhookCalls() throws Exception {
        try (FakeServer fake = new FakeServer((ex, n) -> FakeServer.json(ex, 201, "{\"success\":true,\"webhook\":" + webhook(5, SECRET) + "}"));
             FileshareClient client = fake.client().build()) {
            client.withOptions(o -> o.header("X-Trace", "t1").idempotencyKey("copy-key")).webhooks()
                    .create(WebhookCreateParams.builder().url("https://example.com/hooks").allEvents().build());
            assertEquals("t1", fake.requests.get(0).header("X-Trace"));
            assertEquals("copy-key", fake.requests.get(0).header("Idempotency-Key"));
        }
    }
}
