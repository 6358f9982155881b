package dev.fileshare;

import static org.junit.jupiter.api.Assertions.*;

import java.io.IOException;
import java.net.URLDecoder;
import java.net.http.HttpHeaders;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalDate;
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

/** Issue 32 against a local fake: the 403s of scoped keys, {@code key()} and the audit log's paging. */
class ScopesAuditFakeTest {
    private static final String SCOPE_BODY = "{\"success\":false,\"error\":{\"code\":\"insufficient_scope\","
            + "\"message\":\"This API key lacks the scope files:delete.\",\"required_scope\":\"files:delete\"}}";
    private static final String SCOPE_CHALLENGE = "Bearer error=\"insufficient_scope\", scope=\"files:delete\"";

    private static HttpHeaders headers(String... pairs) {
        Map<String, List<String>> map = new HashMap<>();
        for (int i = 0; i + 1 < pairs.length; i += 2) map.computeIfAbsent(pairs[i], k -> new ArrayList<>()).add(pairs[i + 1]);
        return HttpHeaders.of(map, (a, b) -> true);
    }

    @Test
    void insufficientScopeIsAPermissionDeniedExceptionThatNamesTheScope() {
        FileshareException e = Errors.fromResponse(403, headers("WWW-Authenticate", SCOPE_CHALLENGE, "X-Request-Id", "r1"), SCOPE_BODY);
        InsufficientScopeException scope = assertInstanceOf(InsufficientScopeException.class, e);
        assertInstanceOf(PermissionDeniedException.class, e);
        assertEquals("files:delete", scope.requiredScope());
        assertEquals("insufficient_scope", scope.code());
        assertEquals(403, scope.status().orElseThrow());
        assertEquals("403 insufficient_scope: This API key lacks the scope files:delete. (request id r1)", scope.getMessage());

        // The body's required_scope first; the header's scope="…" when the body has none.
        String noScopeInBody = FakeServer.error("insufficient_scope", "Lacks a scope.");
        assertEquals("links:write", ((PermissionDeniedException) Errors.fromResponse(403,
                headers("WWW-Authenticate", "Bearer error=\"insufficient_scope\", scope=\"links:write\""), noScopeInBody)).requiredScope());
        assertEquals("files:delete", ((PermissionDeniedException) Errors.fromResponse(403,
                headers("WWW-Authenticate", "Bearer error=\"insufficient_scope\", scope=\"links:write\""), SCOPE_BODY)).requiredScope());
        assertEquals("stats:read", ((PermissionDeniedException) Errors.fromResponse(403,
                headers("www-authenticate", "Bearer realm=\"api\",error=insufficient_scope,scope=stats:read"), noScopeInBody)).requiredScope(),
                "a bare token, another header case, no spaces");
        assertNull(((PermissionDeniedException) Errors.fromResponse(403, headers(), noScopeInBody)).requiredScope(), "neither names one");
        assertNull(((PermissionDeniedException) Errors.fromResponse(403,
                headers("WWW-Authenticate", "Bearer error=\"insufficient_scope\", error_scope=\"x\""), noScopeInBody)).requiredScope(),
                "only a parameter named scope");
        // A 403 without a JSON body (a proxy's page) whose challenge says insufficient_scope.
        FileshareException bare = Errors.fromResponse(403, headers("WWW-Authenticate", SCOPE_CHALLENGE), "<html>403</html>");
        assertEquals("files:delete", assertInstanceOf(InsufficientScopeException.class, bare).requiredScope());
        assertNull(bare.code());
    }

    @Test
    void ipNotAllowedAndPlanNotSupportedNameNoScope() {
        FileshareException ip = Errors.fromResponse(403, headers(),
                FakeServer.error("ip_not_allowed", "This API key may not be used from 127.0.0.1."));
        assertNull(assertInstanceOf(IpNotAllowedException.class, ip).requiredScope());
        assertInstanceOf(PermissionDeniedException.class, ip);
        assertEquals("ip_not_allowed", ip.code());

        FileshareException plan = Errors.fromResponse(403, headers(), FakeServer.error("plan_not_supported", "Upgrade."));
        assertEquals(PermissionDeniedException.class, plan.getClass());
        assertNull(((PermissionDeniedException) plan).requiredScope());
        assertFalse(plan instanceof InsufficientScopeException || plan instanceof IpNotAllowedException);
        assertInstanceOf(LimitExceededException.class, Errors.fromResponse(403, headers(), FakeServer.error("file_too_large", "Big.")));
        assertFalse(Retry.isRetryable(ip));
        assertFalse(Retry.isRetryable(Errors.fromResponse(403, headers("WWW-Authenticate", SCOPE_CHALLENGE), SCOPE_BODY)));
    }

    @Test
    void theScopeAndAddressRefusalsAreNotRetried() throws Exception {
        try (FakeServer fake = new FakeServer((ex, n) -> {
            if (ex.getRequestURI().getPath().endsWith("/stats")) {
                FakeServer.json(ex, 403, FakeServer.error("ip_not_allowed", "Not from here."));
            } else {
                FakeServer.json(ex, 403, SCOPE_BODY, "WWW-Authenticate", SCOPE_CHALLENGE);
            }
        }); FileshareClient client = fake.client().maxRetries(3).build()) {
            InsufficientScopeException e = assertThrows(InsufficientScopeException.class, () -> client.files().delete(7));
            assertEquals("files:delete", e.requiredScope());
            assertEquals(1, fake.requests.size());
            assertThrows(InsufficientScopeException.class, () -> client.files().upload("x".getBytes(StandardCharsets.UTF_8), null));
            assertEquals(2, fake.requests.size(), "a replayable upload is not sent again either");
            assertThrows(IpNotAllowedException.class, client::stats);
            assertEquals(3, fake.requests.size());
            assertEquals(List.of(), fake.sleeps);
            // A PermissionDeniedException catch still catches them (the family of plan_not_supported).
            PermissionDeniedException family = assertThrows(PermissionDeniedException.class, () -> client.auditEvents().list());
            assertEquals("files:delete", family.requiredScope());
        }
    }

    @Test
    void keyReadsTheCurrentKey() throws Exception {
        String answer = "{\"success\":true,\"key\":{\"key_id\":12,\"name\":\"ci\",\"prefix\":\"fsk_Ab12Cd\","
                + "\"scopes\":[\"files:read\",\"stats:read\"],\"allowed_ips\":[\"10.0.0.0/8\"],\"created_at\":\"2026-11-27 10:00:00\","
                + "\"expires_at\":null,\"last_used_at\":\"2026-11-27 10:05:00\",\"last_used_ip\":\"10.1.2.3\"},\"plan\":\"pro\",\"account\":7}";
        try (FakeServer fake = new FakeServer((ex, n) -> FakeServer.json(ex, 200, answer));
             FileshareClient client = fake.client().build()) {
            CurrentKey key = client.key();
            assertEquals(12, key.keyId());
            assertEquals("ci", key.name());
            assertEquals("fsk_Ab12Cd", key.prefix());
            assertEquals(List.of("files:read", "stats:read"), key.scopes());
            assertEquals(List.of("10.0.0.0/8"), key.allowedIps());
            assertEquals("2026-11-27 10:00:00", key.createdAt());
            assertEquals(OffsetDateTime.of(2026, 11, 27, 10, 0, 0, 0, ZoneOffset.UTC), key.createdAtTime());
            assertNull(key.expiresAt());
            assertNull(key.expiresAtTime());
            assertEquals(OffsetDateTime.of(2026, 11, 27, 10, 5, 0, 0, ZoneOffset.UTC), key.lastUsedAtTime());
            assertEquals("pro", key.plan());
            assertEquals(Map.of("last_used_ip", "10.1.2.3", "account", 7), key.extra(), "unknown fields kept");
            assertThrows(UnsupportedOperationException.class, () -> key.scopes().add("files:delete"));
            FakeServer.Seen seen = fake.requests.get(0);
            assertEquals("GET", seen.method());
            assertEquals("/api/v1/key", seen.path());
            assertEquals("Bearer " + TestKeys.FAKE_KEY, seen.header("Authorization"));
            assertEquals(key, client.keyAsync().join());
            assertEquals(key, client.key(RequestOptions.builder().header("X-Trace", "t").build()));
            assertEquals("t", fake.requests.get(2).header("X-Trace"));
        }
    }

    @Test
    void aKeyWithoutScopesOrAddressesHasEmptyLists() {
        CurrentKey key = Json.currentKey(Json.MAPPER.valueToTree(Map.of("key", Map.of("key_id", 3), "plan", "business")));
        assertEquals(List.of(), key.scopes());
        assertEquals(List.of(), key.allowedIps());
        assertEquals(Map.of(), key.extra());
        assertThrows(FileshareException.class, () -> Json.currentKey(Json.MAPPER.valueToTree(Map.of("plan", "pro"))));
    }

    private static String event(long id) {
        return "{\"event_id\":" + id + ",\"at\":\"2026-11-27 10:05:0" + (id % 10) + "\",\"action\":\"file.deleted\","
                + "\"actor\":{\"type\":\"key\",\"id\":12,\"name\":\"ci\"},\"ip\":\"127.0.0.0\",\"user_agent\":\"curl/8.0\","
                + "\"target\":{\"type\":\"file\",\"id\":" + (100 + id) + "},\"details\":{\"filename\":\"a.txt\",\"size\":3}}";
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

    /** A fake audit log: {@code GET /audit-events} newest first by {@code before_id}, default limit 20. */
    private static FakeServer auditFake(NavigableSet<Long> ids) throws IOException {
        return new FakeServer((ex, n) -> {
            Map<String, String> q = query(ex.getRequestURI().getRawQuery());
            int limit = Integer.parseInt(q.getOrDefault("limit", "20"));
            List<Long> newestFirst = new ArrayList<>(q.containsKey("before_id")
                    ? ids.headSet(Long.parseLong(q.get("before_id")), false).descendingSet() : ids.descendingSet());
            List<Long> page = newestFirst.subList(0, Math.min(limit, newestFirst.size()));
            StringBuilder events = new StringBuilder();
            for (long id : page) events.append(events.length() == 0 ? "" : ",").append(event(id));
            boolean more = limit < newestFirst.size();
            FakeServer.json(ex, 200, "{\"success\":true,\"events\":[" + events + "],\"pagination\":{\"limit\":" + limit
                    + ",\"next_before_id\":" + (more ? page.get(page.size() - 1) : "null") + "}}");
        });
    }

    @Test
    void listReadsEventsAndSendsTheParameters() throws Exception {
        NavigableSet<Long> ids = new TreeSet<>(List.of(1L, 2L, 3L, 4L, 5L));
        try (FakeServer fake = auditFake(ids); FileshareClient client = fake.client().build()) {
            AuditEventList first = client.auditEvents().list(AuditEventListParams.builder().limit(2).build());
            assertEquals(List.of(5L, 4L), first.events().stream().map(AuditEvent::eventId).toList());
            assertEquals(new AuditEventPagination(2, 4L), first.pagination());
            assertEquals("/api/v1/audit-events?limit=2", fake.requests.get(0).path());
            AuditEvent e = first.events().get(0);
            assertEquals("file.deleted", e.action());
            assertEquals(new AuditEvent.Actor("key", 12L, "ci"), e.actor());
            assertEquals(new AuditEvent.Target("file", 105L), e.target());
            assertEquals("127.0.0.0", e.ip());
            assertEquals("curl/8.0", e.userAgent());
            assertEquals(Map.of("filename", "a.txt", "size", 3), e.details());
            assertEquals(OffsetDateTime.of(2026, 11, 27, 10, 5, 5, 0, ZoneOffset.UTC), e.atTime());
            assertEquals(Map.of(), e.extra());

            AuditEventList next = client.auditEvents().list(AuditEventListParams.builder().limit(2)
                    .beforeId(first.pagination().nextBeforeId()).build());
            assertEquals(List.of(3L, 2L), next.events().stream().map(AuditEvent::eventId).toList());
            assertEquals("/api/v1/audit-events?before_id=4&limit=2", fake.requests.get(1).path());
            AuditEventList last = client.auditEvents().list(AuditEventListParams.builder().limit(2).beforeId(2).build());
            assertNull(last.pagination().nextBeforeId());

            client.auditEvents().list();
            assertEquals("/api/v1/audit-events", fake.requests.get(3).path(), "nothing set, nothing sent");
            client.auditEvents().list(null);
            assertEquals("/api/v1/audit-events", fake.requests.get(4).path());

            // since: an Instant in UTC to the second, any offset converted, a date as a UTC day.
            client.auditEvents().list(AuditEventListParams.builder().action("file.*")
                    .since(Instant.parse("2026-11-27T10:05:00.750Z")).build());
            assertEquals(Map.of("action", "file.*", "since", "2026-11-27T10:05:00Z"), query(rawQuery(fake, 5)));
            client.auditEvents().list(AuditEventListParams.builder().since(OffsetDateTime.parse("2026-11-27T12:00:00+02:00")).build());
            assertEquals(Map.of("since", "2026-11-27T10:00:00Z"), query(rawQuery(fake, 6)));
            client.auditEvents().list(AuditEventListParams.builder().since(LocalDate.of(2026, 1, 2)).build());
            assertEquals("/api/v1/audit-events?since=2026-01-02", fake.requests.get(7).path());
            assertEquals("2026-01-02", AuditEventListParams.builder().since(LocalDate.of(2026, 1, 2)).build().since());
            assertNull(AuditEventListParams.builder().since(LocalDate.of(2026, 1, 2)).since((Instant) null).build().since());
        }
    }

    private static String rawQuery(FakeServer fake, int index) {
        String path = fake.requests.get(index).path();
        return path.contains("?") ? path.substring(path.indexOf('?') + 1) : null;
    }

    @Test
    void anEventWithoutTargetActorIdOrDetailsAndUnknownFields() {
        AuditEvent e = Json.auditEvent(Json.MAPPER.valueToTree(new java.util.LinkedHashMap<String, Object>() {{
            put("event_id", 9);
            put("at", "2026-11-27 10:05:00");
            put("action", "session.sign_in_failed");
            put("actor", Map.of("type", "public"));
            put("ip", null);
            put("user_agent", null);
            put("target", null);
            put("details", Map.of());
            put("region", "eu");
        }}));
        assertEquals(new AuditEvent.Actor("public", null, null), e.actor());
        assertNull(e.target());
        assertNull(e.ip());
        assertNull(e.userAgent());
        assertEquals(Map.of(), e.details());
        assertEquals(Map.of("region", "eu"), e.extra());
        assertThrows(FileshareException.class, () -> Json.auditEventList(Json.MAPPER.valueToTree(Map.of("events", List.of()))));
    }

    @Test
    void iteratePagesByNextBeforeIdWithTheSameFilters() throws Exception {
        NavigableSet<Long> ids = new TreeSet<>();
        for (long id = 1; id <= 7; id++) ids.add(id);
        try (FakeServer fake = auditFake(ids); FileshareClient client = fake.client().build()) {
            AuditEventListParams params = AuditEventListParams.builder().limit(3).action("file.deleted")
                    .since(LocalDate.of(2026, 11, 1)).build();
            List<Long> yielded = new ArrayList<>();
            for (AuditEvent e : client.auditEvents().iterate(params)) yielded.add(e.eventId());
            assertEquals(List.of(7L, 6L, 5L, 4L, 3L, 2L, 1L), yielded);
            assertEquals(List.of(
                    "/api/v1/audit-events?limit=3&action=file.deleted&since=2026-11-01",
                    "/api/v1/audit-events?before_id=5&limit=3&action=file.deleted&since=2026-11-01",
                    "/api/v1/audit-events?before_id=2&limit=3&action=file.deleted&since=2026-11-01"),
                    fake.requests.stream().map(FakeServer.Seen::path).toList());

            // Lazy: findFirst fetches one page; each iteration starts again; a beforeId starts below it.
            fake.requests.clear();
            assertEquals(7L, client.auditEvents().iterate().stream().findFirst().orElseThrow().eventId());
            assertEquals(List.of("/api/v1/audit-events?limit=100"), fake.requests.stream().map(FakeServer.Seen::path).toList());
            assertEquals(List.of(3L, 2L, 1L), client.auditEvents().iterate(AuditEventListParams.builder().beforeId(4).limit(2).build())
                    .stream().map(AuditEvent::eventId).toList());
            assertEquals(0, client.auditEvents().iterate(AuditEventListParams.builder().beforeId(1).build()).stream().count());
        }
    }

    @Test
    void iterateStopsOnANextBeforeIdThatDoesNotGoDown() throws Exception {
        try (FakeServer fake = new FakeServer((ex, n) -> FakeServer.json(ex, 200, "{\"success\":true,\"events\":["
                + event(5) + "],\"pagination\":{\"limit\":1,\"next_before_id\":5}}"));
             FileshareClient client = fake.client().build()) {
            Iterator<AuditEvent> it = client.auditEvents().iterate(AuditEventListParams.builder().limit(1).build()).iterator();
            assertEquals(5, it.next().eventId());
            FileshareException e = assertThrows(FileshareException.class, it::next);
            assertTrue(e.getMessage().contains("next_before_id 5 does not go below 5"), e.getMessage());
        }
    }

    @Test
    void anAuditorKeyWithoutTheScopeIsToldWhichOneAndBadParametersAreTheServers() throws Exception {
        try (FakeServer fake = new FakeServer((ex, n) -> {
            if (n == 1) {
                FakeServer.json(ex, 403, "{\"success\":false,\"error\":{\"code\":\"insufficient_scope\",\"message\":\"Lacks audit:read.\","
                        + "\"required_scope\":\"audit:read\"}}", "WWW-Authenticate", "Bearer error=\"insufficient_scope\", scope=\"audit:read\"");
            } else {
                FakeServer.json(ex, 400, FakeServer.error("invalid_parameter", "limit must be 1 to 100."));
            }
        }); FileshareClient client = fake.client().build()) {
            assertEquals("audit:read", assertThrows(InsufficientScopeException.class, () -> client.auditEvents().list()).requiredScope());
            BadRequestException bad = assertThrows(BadRequestException.class,
                    () -> client.auditEvents().list(AuditEventListParams.builder().limit(500).build()));
            assertEquals("invalid_parameter", bad.code());
            assertEquals("/api/v1/audit-events?limit=500", fake.requests.get(1).path());
        }
    }
}
