package dev.fileshare;

import static org.junit.jupiter.api.Assertions.*;

import java.net.ServerSocket;
import org.junit.jupiter.api.Test;

/** Authentication, plan and connection errors against the real server. */
class AccountErrorsIT {
    @Test
    void aBadKeyIsAnAuthenticationException() {
        String badKey = "fsk_" + "A".repeat(43);
        try (FileshareClient client = TestServer.get().client("pro").apiKey(badKey).build()) {
            AuthenticationException e = assertThrows(AuthenticationException.class, client::stats);
            assertEquals(401, e.status().orElseThrow());
            assertEquals("unauthorized", e.code());
            assertNotNull(e.requestId());
            assertFalse(e.getMessage().contains(badKey));
            assertThrows(AuthenticationException.class, () -> client.files().upload("x".getBytes(), null));
        }
    }

    @Test
    void aFreeKeyIsAPermissionDeniedException() {
        try (FileshareClient client = TestServer.get().client("free").build()) {
            PermissionDeniedException e = assertThrows(PermissionDeniedException.class, client::stats);
            assertEquals(403, e.status().orElseThrow());
            assertEquals("plan_not_supported", e.code());
            assertThrows(PermissionDeniedException.class, () -> client.files().list(1, 10));
            assertThrows(PermissionDeniedException.class, () -> client.files().upload("x".getBytes(), null));
        }
    }

    @Test
    void noServerIsAnAPIConnectionException() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        try (FileshareClient client = FileshareClient.builder().baseUrl("http://127.0.0.1:" + port + "/api/v1")
                .apiKey(TestServer.get().key("pro")).maxRetries(1).build()) {
            APIConnectionException e = assertThrows(APIConnectionException.class, client::stats);
            assertTrue(e.status().isEmpty());
            assertFalse(e.getMessage().contains(TestServer.get().key("pro")));
        }
    }
}
