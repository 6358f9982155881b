package dev.fileshare;

import static org.junit.jupiter.api.Assertions.*;

import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

/** Links, their policies and file expiry against the real server, with the pro account. */
class LinksIT {
    static TestServer server;
    static FileshareClient client;

    @TempDir
    Path dir;

    @BeforeAll
    static void start() {
        server = TestServer.get();
        client = server.client("pro").build();
    }

    @AfterAll
    static void stop() {
        client.close();
    }

    static FileInfo upload(String name, int size) {
        return client.files().upload(ProAccountIT.random(size, name.hashCode()), UploadOptions.builder().filename(name).build());
    }

    /** Seconds between an API time and now plus {@code ahead}. */
    static long offBy(java.time.OffsetDateTime time, Duration ahead) {
        assertNotNull(time);
        return Math.abs(Duration.between(Instant.now().plus(ahead), time.toInstant()).getSeconds());
    }

    static void invalid(String field, Executable call) {
        BadRequestException e = assertThrows(BadRequestException.class, call);
        assertEquals(400, e.status().orElseThrow(), e.getMessage());
        assertEquals("invalid_parameter", e.code(), e.getMessage());
        assertTrue(e.getMessage().contains(field), "the message names " + field + ": " + e.getMessage());
    }

    /** Waits (at most 10 s) until {@code condition} holds. */
    static void eventually(Supplier<Boolean> condition) throws InterruptedException {
        for (int i = 0; i < 100 && !condition.get(); i++) Thread.sleep(100);
        assertTrue(condition.get());
    }

    @Test
    void everyLinkCall() throws Exception {
        FileInfo file = upload("links.txt", 1000);
        assertNull(file.expiresAt());

        List<Link> initial = client.links().list(file.fileId());
        assertEquals(1, initial.size());
        Link byDefault = initial.get(0);
        assertTrue(byDefault.isDefault());
        assertEquals(file.publicLink(), byDefault.url());
        assertEquals(file.fileId(), byDefault.fileId());
        assertEquals("active", byDefault.status());
        assertNull(byDefault.maxDownloads());
        assertNull(byDefault.expiresAt());
        assertFalse(byDefault.passwordProtected());
        assertEquals(0, byDefault.downloadCount());

        Link made = client.links().create(file.fileId(), LinkOptions.builder().label("for the auditors").maxDownloads(3)
                .password("auditors-only-123").expiresIn(Duration.ofDays(1)).build());
        assertFalse(made.isDefault());
        assertEquals(file.fileId(), made.fileId());
        assertEquals("for the auditors", made.label());
        assertEquals(3L, made.maxDownloads());
        assertTrue(made.passwordProtected());
        assertEquals("active", made.status());
        assertEquals(0, made.downloadCount());
        assertTrue(made.url().startsWith(server.serverUrl + "/download/"), made.url());
        assertNotEquals(file.publicLink(), made.url());
        assertTrue(offBy(made.expiresAtTime(), Duration.ofDays(1)) < 10, made.expiresAt());
        assertTrue(offBy(made.createdAtTime(), Duration.ZERO) < 60, made.createdAt());
        assertEquals(made, client.links().get(made.linkId()));

        Link plain = client.links().create(file.fileId());
        assertFalse(plain.passwordProtected());
        assertNull(plain.maxDownloads());
        assertNull(plain.label());
        // The default link first, then the newest first.
        assertEquals(List.of(byDefault.linkId(), plain.linkId(), made.linkId()),
                client.links().list(file.fileId()).stream().map(Link::linkId).toList());

        // Update: set, clear, leave out.
        Link updated = client.links().update(made.linkId(), LinkUpdate.builder().clearPassword().maxDownloads(5).build());
        assertFalse(updated.passwordProtected());
        assertEquals(5L, updated.maxDownloads());
        assertEquals("for the auditors", updated.label(), "left out: kept");
        assertEquals(made.expiresAt(), updated.expiresAt(), "left out: kept");
        Instant at = Instant.now().plus(Duration.ofDays(3)).truncatedTo(ChronoUnit.SECONDS);
        updated = client.links().update(made.linkId(), LinkUpdate.builder().clearLabel().clearMaxDownloads()
                .expiresAt(at).password("a-new-password").build());
        assertNull(updated.label());
        assertNull(updated.maxDownloads());
        assertTrue(updated.passwordProtected());
        assertEquals(at, updated.expiresAtTime().toInstant());
        updated = client.links().update(made.linkId(), LinkUpdate.builder().clearExpiry().label("again").build());
        assertNull(updated.expiresAt());
        assertEquals("again", updated.label());
        assertEquals(updated, client.links().get(made.linkId()));

        // Rotate: a new URL, the old one dead at once, counts and policy kept.
        client.download(plain.url(), dir.resolve("plain.txt"));
        Link rotated = client.links().rotate(plain.linkId());
        assertNotEquals(plain.url(), rotated.url());
        assertEquals(plain.linkId(), rotated.linkId());
        assertEquals(1, rotated.downloadCount());
        assertThrows(NotFoundException.class, () -> client.download(plain.url(), dir.resolve("old.txt")));
        assertEquals(file.sha256(), client.download(rotated.url(), dir.resolve("new.txt")).sha256());

        // Rotating the default link changes the file's public link.
        Link newDefault = client.links().rotate(byDefault.linkId());
        assertTrue(newDefault.isDefault());
        assertEquals(newDefault.url(), client.files().get(file.fileId()).publicLink());
        assertNotEquals(file.publicLink(), newDefault.url());
        assertThrows(NotFoundException.class, () -> client.download(file.publicLink(), dir.resolve("old-default.txt")));

        // Delete: the token is dead at once; the link stays listed as revoked.
        client.links().delete(rotated.linkId());
        assertThrows(NotFoundException.class, () -> client.download(rotated.url(), dir.resolve("revoked.txt")));
        Link revoked = client.links().list(file.fileId()).stream().filter(l -> l.linkId() == rotated.linkId()).findFirst().orElseThrow();
        assertEquals("revoked", revoked.status());

        // The file's download count is the sum over its links.
        assertEquals(2, client.files().get(file.fileId()).downloadCount());
        client.files().delete(file.fileId());
        assertThrows(NotFoundException.class, () -> client.links().get(made.linkId()));
    }

    @Test
    void theDefaultLinkCannotBeDeleted() {
        FileInfo file = upload("default.txt", 10);
        Link byDefault = client.links().list(file.fileId()).get(0);
        BadRequestException e = assertThrows(BadRequestException.class, () -> client.links().delete(byDefault.linkId()));
        assertEquals(409, e.status().orElseThrow());
        assertEquals("default_link_required", e.code());
        assertEquals("active", client.links().get(byDefault.linkId()).status());
        client.files().delete(file.fileId());
    }

    @Test
    void eachFieldRuleIsA400NamingTheField() {
        FileInfo file = upload("rules.txt", 10);
        long id = file.fileId();
        invalid("max_downloads", () -> client.links().create(id, LinkOptions.builder().maxDownloads(0).build()));
        invalid("max_downloads", () -> client.links().create(id, LinkOptions.builder().maxDownloads(1_000_001).build()));
        invalid("password", () -> client.links().create(id, LinkOptions.builder().password("short").build()));
        invalid("password", () -> client.links().create(id, LinkOptions.builder().password("x".repeat(1025)).build()));
        invalid("label", () -> client.links().create(id, LinkOptions.builder().label("x".repeat(101)).build()));
        invalid("label", () -> client.links().create(id, LinkOptions.builder().label("two\nlines").build()));
        invalid("expires_in", () -> client.links().create(id, LinkOptions.builder().expiresIn(Duration.ZERO).build()));
        invalid("expires_in", () -> client.links().create(id, LinkOptions.builder().expiresIn(Duration.ofSeconds(315_360_001)).build()));
        invalid("expires_at", () -> client.links().create(id, LinkOptions.builder().expiresAt(Instant.now().minusSeconds(60)).build()));
        invalid("expires_in", () -> client.files().update(id, FileUpdate.builder().expiresIn(Duration.ofSeconds(-5)).build()));
        invalid("expires_at", () -> client.files().update(id, FileUpdate.builder().expiresAt(Instant.parse("2001-01-01T00:00:00Z")).build()));

        // On an update, max_downloads may not go below the downloads counted.
        Link link = client.links().create(id, LinkOptions.builder().maxDownloads(3).build());
        client.download(link.url(), dir.resolve("a"));
        client.download(link.url(), dir.resolve("b"));
        invalid("max_downloads", () -> client.links().update(link.linkId(), LinkUpdate.builder().maxDownloads(1).build()));
        assertEquals(2L, client.links().update(link.linkId(), LinkUpdate.builder().maxDownloads(2).build()).maxDownloads());
        assertEquals("exhausted", client.links().get(link.linkId()).status());

        // Unknown links and files are 404; a bad id is a 400.
        assertThrows(NotFoundException.class, () -> client.links().get(9_007_199_254_740_991L));
        assertThrows(NotFoundException.class, () -> client.links().list(9_007_199_254_740_991L));
        assertThrows(BadRequestException.class, () -> client.links().get(0));
        client.files().delete(id);
    }

    @Test
    void anotherAccountsFileAndLinksAreNotFound() {
        FileInfo file = upload("mine.txt", 10);
        Link link = client.links().create(file.fileId(), LinkOptions.builder().label("mine").build());
        try (FileshareClient other = server.client("pro").apiKey(server.createAccount("other", "pro")).build()) {
            for (Executable call : List.<Executable>of(
                    () -> other.links().get(link.linkId()),
                    () -> other.links().list(file.fileId()),
                    () -> other.links().create(file.fileId()),
                    () -> other.links().update(link.linkId(), LinkUpdate.builder().clearLabel().build()),
                    () -> other.links().delete(link.linkId()),
                    () -> other.links().rotate(link.linkId()),
                    () -> other.files().update(file.fileId(), FileUpdate.builder().clearExpiry().build()))) {
                NotFoundException e = assertThrows(NotFoundException.class, call);
                assertEquals("not_found", e.code());
            }
        }
        Link still = client.links().get(link.linkId());
        assertEquals(link, still);
        client.files().delete(file.fileId());
    }

    @Test
    void aLimitedLinkCountsOnceAndResumesForFreeThroughItsGrant() throws Exception {
        byte[] content = ProAccountIT.random(400_000, 21);
        FileInfo file = client.files().upload(content, UploadOptions.builder().filename("limited.bin").build());
        Link link = client.links().create(file.fileId(), LinkOptions.builder().maxDownloads(2).build());
        Path dest = dir.resolve("limited.bin");
        assertEquals(file.sha256(), client.download(link.url(), dest).sha256());
        assertEquals(1, client.links().get(link.linkId()).downloadCount());

        // A partial file continued through the grant this client holds: a range, not a download.
        try (RandomAccessFile raf = new RandomAccessFile(dest.toFile(), "rw")) {
            raf.setLength(150_000);
        }
        assertEquals(150_000, client.download(link.url(), dest).resumedFrom());
        assertArrayEquals(content, Files.readAllBytes(dest));
        assertEquals(1, client.links().get(link.linkId()).downloadCount(), "resumed for free");

        // Another client has no grant: its download counts, and exhausts the link.
        try (FileshareClient second = server.client("pro").build()) {
            second.download(link.url(), dir.resolve("second.bin"));
        }
        Link exhausted = client.links().get(link.linkId());
        assertEquals(2, exhausted.downloadCount());
        assertEquals("exhausted", exhausted.status());
        NotFoundException dead = assertThrows(NotFoundException.class, () -> client.download(link.url(), dir.resolve("third.bin")));
        assertEquals("not_found", dead.code());
        // The grant given before keeps serving its holder within its hour.
        Files.write(dest, java.util.Arrays.copyOf(content, 1000));
        assertEquals(1000, client.download(link.url(), dest).resumedFrom());
        assertArrayEquals(content, Files.readAllBytes(dest));
        assertEquals(2, client.links().get(link.linkId()).downloadCount());
        assertEquals(2, client.files().get(file.fileId()).downloadCount());
        client.files().delete(file.fileId());
    }

    @Test
    void aPasswordProtectedLink() throws Exception {
        FileInfo file = upload("secret.txt", 5000);
        String password = "open sesame, please";
        Link link = client.links().create(file.fileId(), LinkOptions.builder().password(password).build());
        AuthenticationException missing = assertThrows(AuthenticationException.class, () -> client.download(link.url(), dir.resolve("a")));
        assertEquals(401, missing.status().orElseThrow());
        assertEquals("invalid_password", missing.code());
        AuthenticationException wrong = assertThrows(AuthenticationException.class,
                () -> client.download(link.url(), dir.resolve("a"), DownloadOptions.builder().password("not the password").build()));
        assertEquals("invalid_password", wrong.code());
        assertFalse(wrong.getMessage().contains("not the password"));
        assertEquals(0, client.links().get(link.linkId()).downloadCount(), "a refused password counts nothing");

        DownloadResult ok = client.download(link.url(), dir.resolve("b"), DownloadOptions.builder().password(password).build());
        assertEquals(file.sha256(), ok.sha256());
        assertEquals(1, client.links().get(link.linkId()).downloadCount());
        // The file's record works too, when its default link is the protected one.
        Link byDefault = client.links().list(file.fileId()).get(0);
        client.links().update(byDefault.linkId(), LinkUpdate.builder().password(password).build());
        assertThrows(AuthenticationException.class, () -> client.download(file, dir.resolve("c")));
        assertEquals(file.sha256(), client.download(file, dir.resolve("c"), DownloadOptions.builder().password(password).build()).sha256());
        client.files().delete(file.fileId());
    }

    @Test
    void aLinkThatExpiresAnswers404AtOnce() throws Exception {
        FileInfo file = upload("soon.txt", 10);
        Link link = client.links().create(file.fileId(), LinkOptions.builder().expiresIn(Duration.ofSeconds(1)).build());
        eventually(() -> "expired".equals(client.links().get(link.linkId()).status()));
        assertThrows(NotFoundException.class, () -> client.download(link.url(), dir.resolve("late.txt")));
        client.files().delete(file.fileId());
    }

    @Test
    void fileExpiryByUploadOptionAndByUpdate() throws Exception {
        FileInfo multipart = client.files().upload("lives an hour".getBytes(StandardCharsets.UTF_8),
                UploadOptions.builder().filename("hour.txt").expiresIn(Duration.ofHours(1)).build());
        assertTrue(offBy(multipart.expiresAtTime(), Duration.ofHours(1)) < 10, multipart.expiresAt());
        assertEquals(multipart.expiresAt(), client.files().get(multipart.fileId()).expiresAt());

        FileInfo resumable = client.files().upload(ProAccountIT.random(300_000, 22), UploadOptions.builder().filename("day.bin")
                .resumable(true).chunkSize(128 * 1024).expiresIn(Duration.ofDays(1)).build());
        assertTrue(offBy(resumable.expiresAtTime(), Duration.ofDays(1)) < 10, resumable.expiresAt());

        // Update: another expiry, none, a new name.
        Instant at = Instant.now().plus(Duration.ofDays(2)).truncatedTo(ChronoUnit.SECONDS);
        FileInfo updated = client.files().update(multipart.fileId(), FileUpdate.builder().expiresAt(at).build());
        assertEquals(at, updated.expiresAtTime().toInstant());
        updated = client.files().update(multipart.fileId(), FileUpdate.builder().clearExpiry().filename("kept.txt").build());
        assertNull(updated.expiresAt());
        assertEquals("kept.txt", updated.filename());
        assertEquals(updated, client.files().get(multipart.fileId()));

        // A file that expires is gone for everyone at once: API and links.
        FileInfo brief = client.files().update(resumable.fileId(), FileUpdate.builder().expiresIn(Duration.ofSeconds(1)).build());
        assertNotNull(brief.expiresAt());
        eventually(() -> {
            try {
                client.files().get(resumable.fileId());
                return false;
            } catch (NotFoundException gone) {
                return true;
            }
        });
        assertThrows(NotFoundException.class, () -> client.download(resumable.publicLink(), dir.resolve("gone.bin")));
        assertThrows(NotFoundException.class, () -> client.links().list(resumable.fileId()));
        assertTrue(client.files().list(1, 100).files().stream().noneMatch(f -> f.fileId() == resumable.fileId()));
        client.files().delete(multipart.fileId());
    }
}
