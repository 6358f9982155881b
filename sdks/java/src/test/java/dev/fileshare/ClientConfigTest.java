package dev.fileshare;

import static org.junit.jupiter.api.Assertions.*;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class ClientConfigTest {
    private static FileshareClient.Builder noEnv() {
        FileshareClient.Builder b = FileshareClient.builder();
        b.env = name -> null;
        return b;
    }

    @Test
    void missingBaseUrlOrKeyIsAConfigurationError() {
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> noEnv().apiKey(TestKeys.FAKE_KEY).build());
        assertTrue(e.getMessage().contains("FILESHARE_BASE_URL"), e.getMessage());
        e = assertThrows(ConfigurationException.class, () -> noEnv().baseUrl("http://localhost:3000/api/v1").build());
        assertTrue(e.getMessage().contains("FILESHARE_API_KEY"), e.getMessage());
        assertThrows(ConfigurationException.class, () -> noEnv().baseUrl("ftp://x/api/v1").apiKey(TestKeys.FAKE_KEY).build());
        assertThrows(ConfigurationException.class, () -> noEnv().maxRetries(-1));
        assertThrows(ConfigurationException.class, () -> noEnv().timeout(Duration.ofSeconds(-1)));
        assertThrows(ConfigurationException.class, () -> noEnv().chunkSize(0));
        assertThrows(ConfigurationException.class, () -> UploadOptions.builder().size(-5));
        assertThrows(ConfigurationException.class, () -> UploadOptions.builder().chunkSize(0));
        assertThrows(ConfigurationException.class,
                () -> noEnv().baseUrl("http://localhost/api/v1").apiKey("fsk_bad\nkey").build());
    }

    @Test
    void valuesComeFromTheEnvironment() {
        FileshareClient.Builder b = FileshareClient.builder();
        b.env = name -> switch (name) {
            case "FILESHARE_BASE_URL" -> "http://localhost:3000/api/v1/";
            case "FILESHARE_API_KEY" -> TestKeys.FAKE_KEY;
            default -> null;
        };
        try (FileshareClient client = b.build()) {
            assertEquals("http://localhost:3000/api/v1", client.baseUrl());
            assertEquals(2, client.maxRetries());
            assertEquals(Duration.ofSeconds(60), client.timeout());
            assertEquals(64L * 1024 * 1024, client.resumableThreshold());
            assertEquals(16 * 1024 * 1024, client.chunkSize());
        }
    }

    @Test
    void theKeyNeverShows() {
        try (FileshareClient client = noEnv().baseUrl("http://localhost:3000/api/v1").apiKey(TestKeys.FAKE_KEY).build()) {
            assertFalse(client.toString().contains(TestKeys.FAKE_KEY));
            assertTrue(client.toString().contains("[redacted]"));
        }
    }

    @Test
    void versionMatchesThePom() throws Exception {
        String pom = java.nio.file.Files.readString(java.nio.file.Path.of("pom.xml"));
        assertTrue(pom.contains("<version>" + Version.VERSION + "</version>"), "pom.xml version");
        assertEquals("fileshare-sdk-java/" + Version.VERSION, Version.USER_AGENT);
    }

    @Test
    void uploadDateAsUtcDateTime() {
        FileInfo f = new FileInfo(1, "a", 1, "2026-11-22 00:17:19", 0, "http://x/download/t", "text/plain", "00", null);
        assertEquals(java.time.OffsetDateTime.parse("2026-11-22T00:17:19Z"), f.uploadedAt());
        assertEquals(java.util.Map.of(), f.extra());
        assertNull(f.expiresAt(), "the constructor from before expiry: none");
        assertNull(f.expiresAtTime());
    }
}
