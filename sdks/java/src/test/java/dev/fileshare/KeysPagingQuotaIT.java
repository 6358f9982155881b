package dev.fileshare;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Against the real server, each test on an account of its own (made with the CLI): an idempotency
 * key given twice, {@code before_id} paging, the storage quota. (A key's retries after a cut
 * connection are in {@link InterruptionIT}.)
 */
class KeysPagingQuotaIT {
    static final long PRO_QUOTA = 100L * 1024 * 1024 * 1024;
    static TestServer server;

    @BeforeAll
    static void start() {
        server = TestServer.get();
    }

    @Test
    void theSameKeyGivenTwiceIsAnsweredWithTheFirstFileAndAnotherFileWithItIsRefused() throws Exception {
        try (FileshareClient client = server.client("pro").apiKey(server.createAccount("same-key", "pro")).build()) {
            String key = "invoice-2026-0042-" + System.nanoTime();
            UploadOptions options = UploadOptions.builder().filename("invoice.pdf").idempotencyKey(key).build();
            byte[] content = ProAccountIT.random(50_000, 23);
            FileInfo first = client.files().upload(content, options);
            FileInfo second = client.files().upload(content, options);
            assertEquals(first, second, "the second answer is the first's");
            assertEquals(1, InterruptionIT.all(client).size());
            assertEquals(1, client.stats().stats().uploadsToday());

            BadRequestException reused = assertThrows(BadRequestException.class,
                    () -> client.files().upload(ProAccountIT.random(60_000, 24), options));
            assertEquals(422, reused.status().orElseThrow());
            assertEquals("idempotency_key_reused", reused.code());
            assertEquals(1, InterruptionIT.all(client).size());

            // Links: the same key and options give the same link; other options, 422. (A key is the
            // account's: the upload's key on another route would be a different request, 422 too.)
            String linkKey = key + "-link";
            LinkOptions linkOptions = LinkOptions.builder().label("for the auditors").maxDownloads(3).idempotencyKey(linkKey).build();
            Link link = client.links().create(first.fileId(), linkOptions);
            assertEquals(link, client.links().create(first.fileId(), linkOptions));
            assertEquals(2, client.links().list(first.fileId()).size());
            BadRequestException otherLink = assertThrows(BadRequestException.class, () -> client.links().create(first.fileId(),
                    LinkOptions.builder().label("someone else").idempotencyKey(linkKey).build()));
            assertEquals("idempotency_key_reused", otherLink.code());
            BadRequestException otherRoute = assertThrows(BadRequestException.class, () -> client.links().create(first.fileId(),
                    LinkOptions.builder().idempotencyKey(key).build()));
            assertEquals("idempotency_key_reused", otherRoute.code());
        }
    }

    @Test
    void theSameKeySentWhileTheFirstUploadRunsWaitsAndGetsItsAnswer() throws Exception {
        FileshareClient.Builder builder = server.client("pro").apiKey(server.createAccount("concurrent-key", "pro")).maxRetries(6);
        List<Long> sleeps = new java.util.concurrent.CopyOnWriteArrayList<>();
        builder.sleeper = millis -> {
            sleeps.add(millis);
            Thread.sleep(millis);
        };
        try (FileshareClient client = builder.build()) {
            byte[] content = ProAccountIT.random(400_000, 25);
            UploadOptions options = UploadOptions.builder().idempotencyKey("concurrent-" + System.nanoTime()).size(content.length).build();
            // The first upload's source yields 40 KB every 200 ms: it runs for about 2 s.
            java.io.InputStream slow = new java.io.FilterInputStream(new java.io.ByteArrayInputStream(content)) {
                @Override
                public int read(byte[] b, int off, int len) throws java.io.IOException {
                    try {
                        Thread.sleep(200);
                    } catch (InterruptedException e) {
                        throw new java.io.InterruptedIOException();
                    }
                    return super.read(b, off, Math.min(len, 40_000));
                }
            };
            CompletableFuture<FileInfo> first = client.files().uploadAsync(slow, options);
            Thread.sleep(500);
            // The same key while it runs: 409 idempotency_in_progress, waited out (Retry-After: 1), then the first's answer.
            FileInfo second = client.files().upload(content, options);
            assertEquals(first.join(), second);
            assertTrue(!sleeps.isEmpty() && sleeps.stream().allMatch(ms -> ms == 1000), "waited Retry-After: 1 each time: " + sleeps);
            assertEquals(1, InterruptionIT.all(client).size());
            assertEquals(1, client.stats().stats().uploadsToday());
        }
    }

    @Test
    void iterateWhileDeletingEveryFileItYieldsLeavesNothing() throws Exception {
        int count = 250;
        ExecutorService pool = Executors.newFixedThreadPool(3);
        try (FileshareClient client = server.client("pro").apiKey(server.createAccount("iterate-delete", "pro")).executor(pool).build()) {
            List<CompletableFuture<FileInfo>> uploads = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                byte[] content = ("file " + i).getBytes();
                uploads.add(client.async(() -> client.files().upload(content)));
            }
            CompletableFuture.allOf(uploads.toArray(CompletableFuture[]::new)).join();
            assertEquals(count, client.files().list(1, 1).pagination().total());

            List<Long> yielded = new ArrayList<>();
            for (FileInfo f : client.files().iterate(100)) {
                yielded.add(f.fileId());
                client.files().delete(f.fileId());
            }
            assertEquals(count, yielded.size());
            assertEquals(count, new HashSet<>(yielded).size(), "no file twice");
            for (int i = 1; i < yielded.size(); i++) assertTrue(yielded.get(i) < yielded.get(i - 1), "newest first");
            FileList left = client.files().list(1, 100);
            assertEquals(0, left.pagination().total(), "nothing left: " + left.files());
        } finally {
            pool.shutdown();
        }
    }

    @Test
    void listBeforeIdAndItsPagination() {
        try (FileshareClient client = server.client("pro").apiKey(server.createAccount("before-id", "pro")).build()) {
            List<Long> ids = new ArrayList<>();
            for (int i = 0; i < 5; i++) ids.add(0, client.files().upload(("b" + i).getBytes()).fileId()); // newest first
            FileList first = client.files().list(1, 2);
            assertEquals(1L, first.pagination().page());
            assertEquals(ids.get(1), first.pagination().nextBeforeId());
            FileList second = client.files().listBefore(first.pagination().nextBeforeId(), 2);
            assertNull(second.pagination().page(), "no page number with before_id");
            assertEquals(ids.subList(2, 4), second.files().stream().map(FileInfo::fileId).toList());
            assertEquals(5, second.pagination().total());
            FileList last = client.files().listBefore(second.pagination().nextBeforeId(), 2);
            assertEquals(ids.subList(4, 5), last.files().stream().map(FileInfo::fileId).toList());
            assertNull(last.pagination().nextBeforeId(), "no more files");
            BadRequestException zero = assertThrows(BadRequestException.class, () -> client.files().listBefore(0, 2));
            assertEquals("invalid_parameter", zero.code());
        }
    }

    @Test
    void statsCarryTheQuotaAndAnUploadPastASmallQuotaIsRefused() throws Exception {
        TestServer.Account account = server.account("quota", "pro");
        try (FileshareClient client = server.client("pro").apiKey(account.key()).build()) {
            AccountStats fresh = client.stats();
            assertEquals(PRO_QUOTA, fresh.limits().maxStorage(), "the pro plan's default quota");
            assertEquals(0, fresh.stats().storageReserved());
            assertFalse(fresh.limits().extra().containsKey("max_storage"));
            assertFalse(fresh.stats().extra().containsKey("storage_reserved"));

            server.setLimits(account.id(), "--max-storage", "1000");
            assertEquals(1000L, client.stats().limits().maxStorage());
        }
        // Uploads see new limits once the key's cache entry is stale (4 s); a new key sees them at once.
        try (FileshareClient client = server.client("pro").apiKey(server.newKey(account.id())).build()) {
            client.files().upload(new byte[600]);
            LimitExceededException multipart = assertThrows(LimitExceededException.class, () -> client.files().upload(new byte[600]));
            assertEquals(403, multipart.status().orElseThrow());
            assertEquals("storage_quota_exceeded", multipart.code());
            LimitExceededException resumable = assertThrows(LimitExceededException.class,
                    () -> client.files().upload(new byte[600], UploadOptions.builder().resumable(true).build()));
            assertEquals("storage_quota_exceeded", resumable.code());
            AccountStats after = client.stats();
            assertEquals(600, after.stats().totalSize(), "only the first upload is stored");
            assertEquals(1, after.stats().totalFiles());
            assertEquals(0, after.stats().storageReserved(), "a refused upload leaves no reservation");
            // A resumable upload reserves its Upload-Length exactly (a multipart one, its whole body): up to the quota.
            assertEquals(400, client.files().upload(new byte[400], UploadOptions.builder().resumable(true).build()).size());
            assertEquals(1000, client.stats().stats().totalSize());

            server.setLimits(account.id(), "--max-storage", "unlimited");
            assertNull(client.stats().limits().maxStorage(), "null: unlimited");
            server.setLimits(account.id(), "--max-storage", "default");
            assertEquals(PRO_QUOTA, client.stats().limits().maxStorage());
        }
    }
}
