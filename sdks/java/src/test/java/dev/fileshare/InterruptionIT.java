package dev.fileshare;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Connections dropped on purpose (a proxy in front of the real server): uploads and downloads
 * resume; a creating call whose answer is cut after the server acted is sent again with its
 * idempotency key and creates one file or link (those tests each use an account of their own, so
 * that their counts are their own).
 */
class InterruptionIT {
    static TestServer server;
    static CuttingProxy proxy;
    static FileshareClient client;

    @TempDir
    Path dir;

    @BeforeAll
    static void start() throws Exception {
        server = TestServer.get();
        proxy = new CuttingProxy(server.serverUrl);
        // Absolute URLs in the answers (a grant's Location) lead through the proxy too. Both origins
        // are 127.0.0.1 with an ephemeral (5-digit) port, so they have the same length.
        assertTrue(proxy.rewriteAnswers(server.serverUrl, proxy.origin()), server.serverUrl + " vs " + proxy.origin());
        client = FileshareClient.builder().baseUrl(proxy.origin() + "/api/v1").apiKey(server.key("pro")).maxRetries(4).build();
    }

    @AfterAll
    static void stop() throws Exception {
        client.close();
        proxy.close();
    }

    @Test
    void aResumableUploadCutMidChunkResumesWhereTheServerStands() throws Exception {
        byte[] content = ProAccountIT.random(900_000, 11);
        Path path = dir.resolve("cut.bin");
        Files.write(path, content);
        int before = proxy.cuts.get();
        proxy.cutOnce("PATCH ", CuttingProxy.Direction.REQUEST, 100_000); // 100 KB into the first chunk
        FileInfo file = client.files().upload(path, UploadOptions.builder().resumable(true).chunkSize(400_000).build());
        assertEquals(before + 1, proxy.cuts.get(), "the connection was cut");
        assertEquals(ProAccountIT.sha(content), file.sha256());
        assertEquals(900_000, file.size());
        client.files().delete(file.fileId());
    }

    @Test
    void theLostAnswerOfTheLastChunkIsFoundWithHead() throws Exception {
        byte[] content = ProAccountIT.random(300_000, 12);
        int before = proxy.cuts.get();
        proxy.cutOnce("PATCH ", CuttingProxy.Direction.RESPONSE, 0); // the chunk arrives, its answer does not
        FileInfo file = client.files().upload(content, UploadOptions.builder().resumable(true).filename("lost.bin").build());
        assertEquals(before + 1, proxy.cuts.get());
        assertEquals(ProAccountIT.sha(content), file.sha256());
        assertEquals("lost.bin", file.filename());
        client.files().delete(file.fileId());
    }

    @Test
    void aMultipartUploadFromAPathIsSentAgainAfterACut() throws Exception {
        byte[] content = ProAccountIT.random(500_000, 13);
        Path path = dir.resolve("again.bin");
        Files.write(path, content);
        int before = proxy.cuts.get();
        proxy.cutOnce("POST /api/v1/files/upload", CuttingProxy.Direction.REQUEST, 200_000);
        FileInfo file = client.files().upload(path, UploadOptions.builder().resumable(false).build());
        assertEquals(before + 1, proxy.cuts.get());
        assertEquals(ProAccountIT.sha(content), file.sha256());
        client.files().delete(file.fileId());
    }

    @Test
    void aDownloadCutMidWayContinuesWithARange() throws Exception {
        byte[] content = ProAccountIT.random(2_000_000, 14);
        FileInfo file = client.files().upload(content, UploadOptions.builder().filename("dl.bin").build());
        String viaProxy = file.publicLink().replace(server.serverUrl, proxy.origin());
        assertTrue(viaProxy.startsWith(proxy.origin()), viaProxy);
        int before = proxy.cuts.get();
        proxy.cutOnce("GET /download/", CuttingProxy.Direction.RESPONSE, 700_000); // the grant's GET
        Path dest = dir.resolve("dl.bin");
        DownloadResult result = client.download(viaProxy, dest);
        assertEquals(before + 1, proxy.cuts.get());
        assertEquals(2_000_000, result.size());
        assertEquals(file.sha256(), result.sha256());
        assertArrayEquals(content, Files.readAllBytes(dest));
        // The continuation was a range of the same grant: still one download.
        assertEquals(1, client.files().get(file.fileId()).downloadCount());
        client.files().delete(file.fileId());
    }

    @Test
    void aLimitedLinkCutMidWayCountsOnceAndTheSecondDownloadExhaustsIt() throws Exception {
        byte[] content = ProAccountIT.random(1_500_000, 15);
        FileInfo file = client.files().upload(content, UploadOptions.builder().filename("limited.bin").build());
        Link link = client.links().create(file.fileId(), LinkOptions.builder().maxDownloads(2).password("proxy-password-1").build());
        assertTrue(link.url().startsWith(proxy.origin()), "answers lead through the proxy: " + link.url());
        DownloadOptions withPassword = DownloadOptions.builder().password("proxy-password-1").build();
        int before = proxy.cuts.get();
        proxy.cutOnce("GET /download/", CuttingProxy.Direction.RESPONSE, 500_000);
        DownloadResult result = client.download(link.url(), dir.resolve("one.bin"), withPassword);
        assertEquals(before + 1, proxy.cuts.get(), "the grant's GET was cut");
        assertEquals(file.sha256(), result.sha256());
        assertEquals(1, client.links().get(link.linkId()).downloadCount(), "the cut and its continuation count once");
        client.download(link.url(), dir.resolve("two.bin"), withPassword);
        Link after = client.links().get(link.linkId());
        assertEquals(2, after.downloadCount());
        assertEquals("exhausted", after.status());
        assertThrows(NotFoundException.class, () -> client.download(link.url(), dir.resolve("three.bin"), withPassword));
        client.files().delete(file.fileId());
    }

    /** A client of a new account, through the proxy. */
    private static FileshareClient newAccountThroughProxy(String name) {
        return FileshareClient.builder().baseUrl(proxy.origin() + "/api/v1").apiKey(server.createAccount(name, "pro")).maxRetries(3).build();
    }

    /** Every file of a small account (one page), checked against the total. */
    static List<FileInfo> all(FileshareClient client) {
        FileList list = client.files().list(1, 100);
        assertEquals(list.files().size(), list.pagination().total());
        return list.files();
    }

    @Test
    void anUploadWhoseAnswerIsCutAfterItWasStoredIsStoredOnce() throws Exception {
        try (FileshareClient client = newAccountThroughProxy("cut-upload")) {
            byte[] content = ProAccountIT.random(300_000, 21);
            Path path = dir.resolve("once.bin");
            Files.write(path, content);
            int before = proxy.cuts.get();
            proxy.cutOnce("POST /api/v1/files/upload", CuttingProxy.Direction.RESPONSE, 0); // stored, then no answer
            FileInfo file = client.files().upload(path, UploadOptions.builder().resumable(false).build());
            assertEquals(before + 1, proxy.cuts.get(), "the answer was cut");
            assertEquals(ProAccountIT.sha(content), file.sha256());
            List<FileInfo> stored = all(client);
            assertEquals(1, stored.size(), "one file stored: " + stored);
            assertEquals(file.fileId(), stored.get(0).fileId(), "the retry was answered with the stored file");
            assertEquals(1, client.stats().stats().uploadsToday(), "one daily upload slot");
            assertEquals(content.length, client.stats().stats().totalSize());
        }
    }

    @Test
    void aResumableUploadWhoseCreationAnswerIsCutIsOneUpload() throws Exception {
        try (FileshareClient client = newAccountThroughProxy("cut-creation")) {
            byte[] content = ProAccountIT.random(250_000, 22);
            int before = proxy.cuts.get();
            proxy.cutOnce("POST /api/v1/uploads", CuttingProxy.Direction.RESPONSE, 0); // created, then no answer
            FileInfo file = client.files().upload(content, UploadOptions.builder().resumable(true).chunkSize(100_000).build());
            assertEquals(before + 1, proxy.cuts.get());
            assertEquals(ProAccountIT.sha(content), file.sha256());
            List<FileInfo> stored = all(client);
            assertEquals(List.of(file.fileId()), stored.stream().map(FileInfo::fileId).toList());
            AccountStats stats = client.stats();
            assertEquals(1, stats.stats().uploadsToday(), "one daily upload slot");
            assertEquals(0, stats.stats().storageReserved(), "no upload left holding bytes");
        }
    }

    @Test
    void aLinkWhoseCreationAnswerIsCutIsCreatedOnce() throws Exception {
        try (FileshareClient client = newAccountThroughProxy("cut-link")) {
            FileInfo file = client.files().upload("share me".getBytes());
            int before = proxy.cuts.get();
            proxy.cutOnce("POST /api/v1/files/" + file.fileId() + "/links", CuttingProxy.Direction.RESPONSE, 0);
            Link link = client.links().create(file.fileId(), LinkOptions.builder().label("once").build());
            assertEquals(before + 1, proxy.cuts.get());
            List<Link> links = client.links().list(file.fileId());
            assertEquals(2, links.size(), "the default link and one more: " + links);
            assertEquals(link.linkId(), links.get(1).linkId());
        }
    }
}
