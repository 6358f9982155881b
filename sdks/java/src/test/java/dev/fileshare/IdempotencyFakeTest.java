package dev.fileshare;

import static org.junit.jupiter.api.Assertions.*;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Multipart uploads against a fake: one Idempotency-Key per call on every attempt, replayed answers, the key's errors. */
class IdempotencyFakeTest {
    static final byte[] CONTENT = "hello world".getBytes(StandardCharsets.UTF_8);
    static final String SHA = Sha256.hex(Sha256.newDigest().digest(CONTENT));
    static final String UUID_V4 = "[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}";

    @TempDir
    Path dir;

    static String stored(long id, String sha) {
        return "{\"success\":true," + FakeServer.file(id, sha, 11, "http://x/download/t").substring(1);
    }

    private static List<String> keys(FakeServer fake) {
        return fake.requests.stream().map(r -> r.header("Idempotency-Key")).toList();
    }

    @Test
    void everyAttemptOfAnUploadCarriesTheSameKeyAndEachCallItsOwn() throws Exception {
        try (FakeServer fake = new FakeServer((ex, n) -> {
            switch (n) {
                case 1 -> FakeServer.json(ex, 503, FakeServer.error("service_unavailable", "down"));
                case 2 -> FakeServer.json(ex, 409, FakeServer.error("idempotency_in_progress", "A request with this key is running."),
                        "Retry-After", "1");
                default -> FakeServer.json(ex, 201, stored(n, SHA));
            }
        }); FileshareClient client = fake.client().maxRetries(2).build()) {
            Path path = dir.resolve("hello.txt");
            Files.write(path, CONTENT);
            assertEquals(3, client.files().upload(path).fileId());
            List<String> keys = keys(fake);
            assertEquals(3, keys.size());
            assertTrue(keys.get(0).matches(UUID_V4), keys.get(0));
            assertEquals(List.of(keys.get(0), keys.get(0), keys.get(0)), keys, "one key for the call");
            assertEquals(List.of(250L, 1000L), fake.sleeps, "jitter after the 503, then the 409's Retry-After: 1");
            // Every attempt sent the same body length (the fingerprint of a multipart upload).
            assertEquals(fake.requests.get(0).body().length, fake.requests.get(2).body().length);

            fake.requests.clear();
            client.files().upload(CONTENT);
            client.files().upload(new ByteArrayInputStream(CONTENT)); // a stream too carries a key
            assertEquals(2, fake.requests.size());
            assertNotEquals(keys.get(0), keys(fake).get(0), "a new call, a new key");
            assertNotEquals(keys(fake).get(0), keys(fake).get(1));
            assertTrue(keys(fake).get(1).matches(UUID_V4));

            fake.requests.clear();
            client.files().upload(CONTENT, UploadOptions.builder().idempotencyKey("order-4711-invoice").build());
            assertEquals(List.of("order-4711-invoice"), keys(fake));
        }
    }

    @Test
    void aKeyUsedForAnotherUploadIsABadRequestNeverRetried() throws Exception {
        try (FakeServer fake = new FakeServer((ex, n) -> FakeServer.json(ex, 422,
                FakeServer.error("idempotency_key_reused", "This Idempotency-Key was used for another request.")));
             FileshareClient client = fake.client().build()) {
            BadRequestException e = assertThrows(BadRequestException.class,
                    () -> client.files().upload(CONTENT, UploadOptions.builder().idempotencyKey("k1").build()));
            assertEquals(422, e.status().orElseThrow());
            assertEquals("idempotency_key_reused", e.code());
            assertEquals(1, fake.requests.size());
            assertTrue(fake.sleeps.isEmpty());
        }
    }

    @Test
    void aKeyStillInProgressIsRetriedWithinTheBudgetThenThrown() throws Exception {
        try (FakeServer fake = new FakeServer((ex, n) -> FakeServer.json(ex, 409,
                FakeServer.error("idempotency_in_progress", "A request with this key is running."), "Retry-After", "1"));
             FileshareClient client = fake.client().maxRetries(3).build()) {
            BadRequestException e = assertThrows(BadRequestException.class, () -> client.files().upload(CONTENT));
            assertEquals("idempotency_in_progress", e.code());
            assertEquals(4, fake.requests.size());
            assertEquals(List.of(1000L, 1000L, 1000L), fake.sleeps);
            assertEquals(1, keys(fake).stream().distinct().count());
        }
    }

    @Test
    void aReplayedAnswerIsCheckedAgainstTheBytesLikeAnyOther() throws Exception {
        try (FakeServer fake = new FakeServer((ex, n) -> FakeServer.json(ex, 201, stored(9, n == 1 ? SHA : "0".repeat(64)),
                "Idempotent-Replayed", "true"));
             FileshareClient client = fake.client().build()) {
            UploadOptions options = UploadOptions.builder().idempotencyKey("same-key").build();
            assertEquals(9, client.files().upload(CONTENT, options).fileId());
            // The same key given with other bytes of the same length: the server answers the first file.
            IntegrityException e = assertThrows(IntegrityException.class, () -> client.files().upload("HELLO WORLD".getBytes(), options));
            assertTrue(e.getMessage().contains("idempotency key same-key"), e.getMessage());
        }
    }

    @Test
    void aStorageQuotaRefusalIsALimitExceededExceptionNotRetried() throws Exception {
        try (FakeServer fake = new FakeServer((ex, n) -> FakeServer.json(ex, 403,
                FakeServer.error("storage_quota_exceeded", "The upload would pass the storage quota.")));
             FileshareClient client = fake.client().build()) {
            LimitExceededException e = assertThrows(LimitExceededException.class, () -> client.files().upload(CONTENT));
            assertEquals("storage_quota_exceeded", e.code());
            assertEquals(403, e.status().orElseThrow());
            assertEquals(1, fake.requests.size());
        }
    }

    @Test
    void readsAndDeletesCarryNoKey() throws Exception {
        try (FakeServer fake = new FakeServer((ex, n) -> FakeServer.json(ex, 200, ex.getRequestURI().getPath().contains("/links/")
                ? "{\"success\":true,\"link\":" + LinksFakeTest.LINK + "}"
                : "{\"success\":true,\"file\":" + FakeServer.file(4, SHA, 11, "l") + "}"));
             FileshareClient client = fake.client().build()) {
            client.files().get(4);
            client.files().update(4, FileUpdate.builder().filename("x.txt").build());
            client.files().delete(4);
            client.links().update(4, LinkUpdate.builder().clearLabel().build());
            assertEquals(4, fake.requests.size());
            assertTrue(fake.requests.stream().allMatch(r -> r.header("Idempotency-Key") == null));
        }
    }
}
