package dev.fileshare;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** files().deleteMany() against the real server. */
class DeleteManyIT {
    static TestServer server;
    static FileshareClient client;

    @BeforeAll
    static void start() {
        server = TestServer.get();
        client = server.client("pro").build();
    }

    @AfterAll
    static void stop() {
        client.close();
    }

    static long upload(FileshareClient to, String name) {
        return to.files().upload(name.getBytes(StandardCharsets.UTF_8), UploadOptions.builder().filename(name).build()).fileId();
    }

    @Test
    void deletesAndNamesTheIdsThatAreNoneOfTheAccounts() {
        try (FileshareClient other = FileshareClient.builder().baseUrl(server.baseUrl).apiKey(server.createAccount("java-delete-many", "pro")).build()) {
            long theirs = upload(other, "theirs.txt");
            long a = upload(client, "a.txt");
            long b = upload(client, "b.txt");
            BulkDeleteResult result = client.files().deleteMany(List.of(b, 999_999_999L, a, theirs));
            assertEquals(List.of(b, a), result.deleted());
            assertEquals(List.of(999_999_999L, theirs), result.notFound());
            assertThrows(NotFoundException.class, () -> client.files().get(a));
            assertEquals(theirs, other.files().get(theirs).fileId());
        }
    }

    @Test
    void theSameIdempotencyKeyReplaysTheFirstAnswer() {
        long a = upload(client, "c.txt");
        long b = upload(client, "d.txt");
        String key = "delete-many-java-" + a;
        BulkDeleteResult first = client.files().deleteMany(List.of(a, b), key);
        assertEquals(List.of(a, b), first.deleted());
        assertEquals(first, client.files().deleteMany(List.of(a, b), key));
    }

    @Test
    void needsFilesDelete() {
        long id = upload(client, "kept.txt");
        try (FileshareClient readOnly = server.client("read_only").build()) {
            PermissionDeniedException e = assertThrows(PermissionDeniedException.class, () -> readOnly.files().deleteMany(List.of(id)));
            assertEquals("insufficient_scope", e.code());
        }
        assertEquals(id, client.files().get(id).fileId());
    }

    @Test
    void refusesBadIdsBeforeAnyRequest() {
        assertThrows(ConfigurationException.class, () -> client.files().deleteMany(List.of()));
        assertThrows(ConfigurationException.class, () -> client.files().deleteMany(List.of(0L)));
        assertThrows(ConfigurationException.class, () -> client.files().deleteMany(LongStream.rangeClosed(1, 101).boxed().toList()));
    }
}
