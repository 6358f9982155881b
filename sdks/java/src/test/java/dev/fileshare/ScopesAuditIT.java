package dev.fileshare;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Scoped keys, {@code key()} and the audit log against the real server, with the launcher's keys:
 * {@code pro} (every scope), {@code read_only} (files:read, links:read, stats:read on the pro
 * account), {@code ip_restricted} (every scope, allowed from 10.0.0.0/8 only, so refused from
 * 127.0.0.1) and {@code auditor} (audit:read only, on the pro account).
 */
class ScopesAuditIT {
    static final List<String> ALL_SCOPES = List.of("files:read", "files:write", "files:delete", "links:read", "links:write",
            "stats:read", "webhooks:manage", "requests:manage", "audit:read");

    static TestServer server;
    static FileshareClient pro;

    @BeforeAll
    static void start() {
        server = TestServer.get();
        pro = server.client("pro").build();
    }

    @AfterAll
    static void stop() {
        pro.close();
    }

    static FileInfo upload(FileshareClient client, String name) {
        return client.files().upload(("scopes " + name).getBytes(StandardCharsets.UTF_8), UploadOptions.builder().filename(name).build());
    }

    @Test
    void theProKeyHoldsEveryScope() {
        CurrentKey key = pro.key();
        assertEquals(ALL_SCOPES, key.scopes());
        assertEquals(List.of(), key.allowedIps(), "usable from anywhere");
        assertEquals("pro", key.plan());
        assertTrue(key.keyId() > 0);
        assertTrue(server.key("pro").startsWith(key.prefix()), "the prefix is the key's beginning");
        assertTrue(key.prefix().length() < server.key("pro").length(), "never the whole key");
        assertNotNull(key.createdAtTime(), key.createdAt());
        assertNull(key.expiresAt());
        assertFalse(key.toString().contains(server.key("pro")));
    }

    @Test
    void theReadOnlyKeyHoldsExactlyItsThreeScopesAndCannotDelete() {
        FileInfo file = upload(pro, "read-only-target.txt");
        try (FileshareClient readOnly = server.client("read_only").build()) {
            CurrentKey key = readOnly.key();
            assertEquals(List.of("files:read", "links:read", "stats:read"), key.scopes());
            assertEquals("pro", key.plan());
            assertNotEquals(pro.key().keyId(), key.keyId());

            // What it holds works: the same account's files, links and stats.
            assertEquals(file.sha256(), readOnly.files().get(file.fileId()).sha256());
            assertFalse(readOnly.links().list(file.fileId()).isEmpty());
            assertEquals("pro", readOnly.stats().plan());

            InsufficientScopeException e = assertThrows(InsufficientScopeException.class, () -> readOnly.files().delete(file.fileId()));
            assertEquals("files:delete", e.requiredScope());
            assertEquals(403, e.status().orElseThrow());
            assertEquals("insufficient_scope", e.code());
            assertInstanceOf(PermissionDeniedException.class, e);
            assertTrue(e.getMessage().contains("files:delete"), e.getMessage());
            assertTrue(e.headers().firstValue("www-authenticate").orElse("").contains("insufficient_scope"),
                    "WWW-Authenticate: " + e.headers().map());
            assertEquals(file.fileId(), pro.files().get(file.fileId()).fileId(), "nothing was deleted");

            assertEquals("files:write", assertThrows(InsufficientScopeException.class, () -> upload(readOnly, "nope.txt")).requiredScope());
            assertEquals("files:write", assertThrows(InsufficientScopeException.class,
                    () -> readOnly.files().update(file.fileId(), FileUpdate.builder().filename("renamed.txt").build())).requiredScope());
            assertEquals("links:write", assertThrows(InsufficientScopeException.class,
                    () -> readOnly.links().create(file.fileId())).requiredScope());
            assertEquals("audit:read", assertThrows(InsufficientScopeException.class, () -> readOnly.auditEvents().list()).requiredScope());
            assertEquals("read-only-target.txt", pro.files().get(file.fileId()).filename(), "nor renamed");
        } finally {
            pro.files().delete(file.fileId());
        }
    }

    @Test
    void theIpRestrictedKeyIsRefusedFromHereWhateverTheCall() {
        try (FileshareClient restricted = server.client("ip_restricted").maxRetries(2).build()) {
            List<org.junit.jupiter.api.function.Executable> calls = List.of(
                    restricted::key, restricted::stats, () -> restricted.files().list(1, 10),
                    () -> upload(restricted, "from-here.txt"), () -> restricted.auditEvents().list());
            for (var call : calls) {
                IpNotAllowedException e = assertThrows(IpNotAllowedException.class, call);
                assertEquals(403, e.status().orElseThrow());
                assertEquals("ip_not_allowed", e.code());
                assertNull(e.requiredScope());
                assertInstanceOf(PermissionDeniedException.class, e);
                assertFalse(e.getMessage().contains(server.key("ip_restricted")));
            }
        }
    }

    /** The events of one file, from {@code since} on, newest first. */
    static List<AuditEvent> eventsOf(FileshareClient client, long fileId, Instant since) {
        List<AuditEvent> events = new ArrayList<>();
        for (AuditEvent e : client.auditEvents().iterate(AuditEventListParams.builder().action("file.*").since(since).build())) {
            if (e.target() != null && "file".equals(e.target().type()) && Long.valueOf(fileId).equals(e.target().id())) events.add(e);
        }
        return events;
    }

    @Test
    void anUploadAnUpdateAndADeleteAreAuditedNewestFirst() {
        Instant start = Instant.now().minusSeconds(2);
        FileInfo file = upload(pro, "audited.txt");
        pro.files().update(file.fileId(), FileUpdate.builder().expiresIn(Duration.ofDays(1)).build());
        pro.files().delete(file.fileId());
        long keyId = pro.key().keyId();

        List<AuditEvent> events = eventsOf(pro, file.fileId(), start);
        assertEquals(List.of("file.deleted", "file.updated", "file.uploaded"), events.stream().map(AuditEvent::action).toList(), "" + events);
        for (AuditEvent e : events) {
            assertEquals("key", e.actor().type(), "" + e);
            assertEquals(Long.valueOf(keyId), e.actor().id(), "the pro key did it: " + e);
            assertNotNull(e.atTime(), e.at());
            assertFalse(e.atTime().toInstant().isBefore(start.minusSeconds(1)), e.at());
            assertEquals("file", e.target().type());
            assertEquals("fileshare-sdk-java/" + Version.VERSION, e.userAgent());
            assertNotNull(e.details());
        }
        assertTrue(events.get(0).eventId() > events.get(1).eventId() && events.get(1).eventId() > events.get(2).eventId(),
                "newest first: " + events);

        // One page of the family, newest first; the same by action.
        AuditEventList page = pro.auditEvents().list(AuditEventListParams.builder().action("file.*").since(start).limit(100).build());
        List<Long> ids = page.events().stream().map(AuditEvent::eventId).toList();
        for (int i = 1; i < ids.size(); i++) assertTrue(ids.get(i - 1) > ids.get(i), "newest first: " + ids);
        assertTrue(page.events().stream().allMatch(e -> e.action().startsWith("file.")), "" + page.events());
        AuditEventList deleted = pro.auditEvents().list(AuditEventListParams.builder().action("file.deleted").since(start).build());
        assertTrue(deleted.events().stream().allMatch(e -> e.action().equals("file.deleted")));
        assertTrue(deleted.events().stream().anyMatch(e -> e.eventId() == events.get(0).eventId()));
    }

    @Test
    void iteratePagesThroughWithASmallLimit() {
        Instant start = Instant.now().minusSeconds(2);
        List<Long> files = new ArrayList<>();
        for (int i = 0; i < 3; i++) files.add(upload(pro, "paged-" + i + ".txt").fileId());
        for (long id : files) pro.files().delete(id);

        AuditEventListParams all = AuditEventListParams.builder().action("file.*").since(start).limit(100).build();
        List<Long> onePage = pro.auditEvents().list(all).events().stream().map(AuditEvent::eventId).toList();
        assertTrue(onePage.size() >= 6, "3 uploads and 3 deletes: " + onePage);

        // Two a page: the same events, in the same order, none twice, over several pages.
        AuditEventListParams small = AuditEventListParams.builder().action("file.*").since(start).limit(2).build();
        List<Long> iterated = pro.auditEvents().iterate(small).stream().map(AuditEvent::eventId).toList();
        assertEquals(onePage, iterated);
        assertEquals(iterated.size(), new HashSet<>(iterated).size());

        // By hand, following nextBeforeId.
        List<Long> byHand = new ArrayList<>();
        AuditEventList page = pro.auditEvents().list(small);
        int pages = 1;
        while (true) {
            assertTrue(page.events().size() <= 2);
            assertEquals(2, page.pagination().limit());
            page.events().forEach(e -> byHand.add(e.eventId()));
            if (page.pagination().nextBeforeId() == null) break;
            page = pro.auditEvents().list(AuditEventListParams.builder().action("file.*").since(start).limit(2)
                    .beforeId(page.pagination().nextBeforeId()).build());
            pages++;
        }
        assertEquals(onePage, byHand);
        assertTrue(pages >= 3, pages + " pages");
    }

    @Test
    void theAuditorListsEventsButCannotUpload() {
        Instant start = Instant.now().minusSeconds(2);
        FileInfo file = upload(pro, "for-the-auditor.txt");
        pro.files().delete(file.fileId());
        try (FileshareClient auditor = server.client("auditor").build()) {
            assertEquals(List.of("audit:read"), auditor.key().scopes());
            List<AuditEvent> events = eventsOf(auditor, file.fileId(), start);
            assertEquals(List.of("file.deleted", "file.uploaded"), events.stream().map(AuditEvent::action).toList(), "" + events);

            InsufficientScopeException e = assertThrows(InsufficientScopeException.class, () -> upload(auditor, "auditor.txt"));
            assertEquals("files:write", e.requiredScope());
            assertEquals("files:read", assertThrows(InsufficientScopeException.class, () -> auditor.files().list()).requiredScope());
            assertEquals("stats:read", assertThrows(InsufficientScopeException.class, auditor::stats).requiredScope());
        }
    }

    /**
     * A key made to upload and nothing else ({@code --scopes files:write}): a multipart and a
     * resumable upload both go through, including the resumable upload's last step, which reads the
     * upload's status ({@code GET /uploads/{id}}) for the file it became.
     */
    @Test
    void anUploadOnlyKeyUploadsMultipartAndResumable() {
        String key = server.newKey(server.info.path("accounts").path("pro").asLong(), "--scopes", "files:write");
        try (FileshareClient uploader = FileshareClient.builder().baseUrl(server.baseUrl).apiKey(key).build()) {
            assertEquals(List.of("files:write"), uploader.key().scopes());
            FileInfo multipart = upload(uploader, "upload-only.txt");
            FileInfo resumable = uploader.files().upload(new byte[300_000],
                    UploadOptions.builder().filename("upload-only.bin").resumable(true).chunkSize(100_000).build());
            try {
                assertEquals(300_000, resumable.size());
                assertEquals(multipart.sha256(), pro.files().get(multipart.fileId()).sha256());
                assertEquals("files:read", assertThrows(InsufficientScopeException.class,
                        () -> uploader.files().get(multipart.fileId())).requiredScope());
            } finally {
                pro.files().delete(multipart.fileId());
                pro.files().delete(resumable.fileId());
            }
        }
    }

    @Test
    void badParametersAreInvalidParameter() {
        for (AuditEventListParams params : List.of(AuditEventListParams.builder().limit(0).build(),
                AuditEventListParams.builder().limit(101).build(), AuditEventListParams.builder().beforeId(0).build())) {
            BadRequestException e = assertThrows(BadRequestException.class, () -> pro.auditEvents().list(params), params.toString());
            assertEquals(400, e.status().orElseThrow());
            assertEquals("invalid_parameter", e.code());
        }
    }
}
