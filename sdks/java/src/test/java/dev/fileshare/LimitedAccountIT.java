package dev.fileshare;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/**
 * The "limited" account: 1 MiB files, 3 uploads a day, 10 requests a minute. The tests run in
 * order and count their requests (at most 10 before the rate-limit test).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class LimitedAccountIT {
    static FileshareClient client;

    @TempDir
    static Path dir;

    @BeforeAll
    static void start() {
        client = TestServer.get().client("limited").maxRetries(0).build();
    }

    @AfterAll
    static void stop() {
        client.close();
    }

    @Test
    @Order(1)
    void aFileAboveMaxFileSizeIsRefused() throws Exception {
        Path big = dir.resolve("big.bin");
        Files.write(big, new byte[2 * 1024 * 1024]);
        // Multipart: 403 file_too_large (1 request).
        LimitExceededException e = assertThrows(LimitExceededException.class,
                () -> client.files().upload(big, UploadOptions.builder().resumable(false).build()));
        assertEquals(403, e.status().orElseThrow());
        assertEquals("file_too_large", e.code());
        // Resumable: the creation answers 413 file_too_large (1 request; OPTIONS is free).
        LimitExceededException tus = assertThrows(LimitExceededException.class,
                () -> client.files().upload(big, UploadOptions.builder().resumable(true).build()));
        assertEquals(413, tus.status().orElseThrow());
        assertEquals("file_too_large", tus.code());
    }

    @Test
    @Order(2)
    void theFourthUploadOfTheDayIsRefused() {
        for (int i = 0; i < 3; i++) client.files().upload(("u" + i).getBytes(), null); // 3 requests
        LimitExceededException e = assertThrows(LimitExceededException.class, () -> client.files().upload("u3".getBytes(), null));
        assertEquals(403, e.status().orElseThrow());
        assertEquals("daily_upload_limit_exceeded", e.code());
    }

    @Test
    @Order(3)
    void theEleventhRequestOfTheMinuteIsRateLimited() {
        RateLimitException limited = null;
        for (int i = 0; i < 12 && limited == null; i++) {
            try {
                client.stats();
            } catch (RateLimitException e) {
                limited = e;
            }
        }
        assertNotNull(limited, "a 429 within 12 calls");
        assertEquals(429, limited.status().orElseThrow());
        assertEquals("rate_limited", limited.code());
        assertTrue(limited.retryAfter().isPresent());
        long wait = limited.retryAfter().orElseThrow().toSeconds();
        assertTrue(wait > 0 && wait <= 60, "Retry-After " + wait);
        assertEquals(10L, limited.rateLimit().limit());
        assertEquals(0L, limited.rateLimit().remaining());
    }
}
