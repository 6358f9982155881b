package dev.fileshare;

import static org.junit.jupiter.api.Assertions.*;

import com.sun.net.httpserver.Headers;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ExecutorService;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 33 against the real server: {@code client.webhooks()} with the launcher's pro key (which
 * holds webhooks:manage) and a receiver on 127.0.0.1 (the JDK's HttpServer; the launcher lets the
 * server send to private addresses over http), whose messages {@link Webhooks#verify} accepts.
 */
class WebhooksIT {
    static TestServer server;
    static FileshareClient pro;

    private Receiver receiver;
    /** Endpoints to delete after each test. */
    private final List<Long> made = new ArrayList<>();

    /** A message the receiver got, and what it answered. */
    record Received(String method, String path, Headers headers, byte[] body, int status) {
        String header(String name) {
            return headers.getFirst(name);
        }

        String text() {
            return new String(body, StandardCharsets.UTF_8);
        }
    }

    /** A webhook receiver on 127.0.0.1 that records every request and answers {@link #answer} (204 at first). */
    static final class Receiver implements AutoCloseable {
        final HttpServer http;
        final ExecutorService executor = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "webhook-receiver");
            t.setDaemon(true);
            return t;
        });
        final List<Received> received = new CopyOnWriteArrayList<>();
        volatile int answer = 204;

        Receiver() throws IOException {
            http = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
            http.setExecutor(executor);
            http.createContext("/", exchange -> {
                try {
                    byte[] body = exchange.getRequestBody().readAllBytes();
                    int status = answer;
                    Headers copy = new Headers();
                    exchange.getRequestHeaders().forEach(copy::put);
                    received.add(new Received(exchange.getRequestMethod(), exchange.getRequestURI().getPath(), copy, body, status));
                    exchange.sendResponseHeaders(status, -1);
                } finally {
                    exchange.close();
                }
            });
            http.start();
        }

        String url() {
            return "http://127.0.0.1:" + http.getAddress().getPort() + "/hooks/fileshare";
        }

        /** The first message that {@code match} accepts, waiting up to 30 s for it. */
        Received waitFor(Predicate<Received> match) throws InterruptedException {
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (System.nanoTime() < deadline) {
                for (Received r : received) if (match.test(r)) return r;
                Thread.sleep(100);
            }
            throw new AssertionError("no such message within 30 s; received: "
                    + received.stream().map(r -> r.header("webhook-id") + " " + r.status() + " " + r.text()).toList());
        }

        @Override
        public void close() {
            http.stop(0);
            executor.shutdownNow();
        }
    }

    @BeforeAll
    static void start() {
        server = TestServer.get();
        pro = server.client("pro").build();
    }

    @AfterAll
    static void stop() {
        pro.close();
    }

    @BeforeEach
    void receiver() throws IOException {
        receiver = new Receiver();
    }

    @AfterEach
    void cleanUp() {
        for (long id : made) {
            try {
                pro.webhooks().delete(id);
            } catch (NotFoundException gone) {
                // deleted by the test
            }
        }
        receiver.close();
    }

    private Webhook create(String... events) {
        Webhook hook = pro.webhooks().create(WebhookCreateParams.builder().url(receiver.url()).events(events).build());
        made.add(hook.webhookId());
        return hook;
    }

    /** The delivery of {@code messageId} once {@code done} accepts it, asking for up to 30 s. */
    private static WebhookDelivery delivery(long webhookId, String messageId, Predicate<WebhookDelivery> done) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        WebhookDelivery last = null;
        while (System.nanoTime() < deadline) {
            for (WebhookDelivery d : pro.webhooks().iterateDeliveries(webhookId, DeliveryListParams.builder().limit(50).build())) {
                if (d.messageId().equals(messageId)) {
                    last = d;
                    if (done.test(d)) return d;
                }
            }
            Thread.sleep(200);
        }
        throw new AssertionError("the delivery of " + messageId + ": " + (last == null ? "not listed" : last));
    }

    private static String otherSecret() {
        byte[] key = new byte[32];
        new SecureRandom().nextBytes(key);
        return "whsec_" + Base64.getEncoder().encodeToString(key);
    }

    @Test
    void createListGetUpdateTestDeliveriesRotateDelete() throws Exception {
        // create: the secret, once.
        Webhook hook = pro.webhooks().create(WebhookCreateParams.builder().url(receiver.url())
                .events(WebhookEvent.WEBHOOK_TEST, WebhookEvent.FILE_DELETED).description("java sdk").build());
        made.add(hook.webhookId());
        assertTrue(hook.webhookId() > 0);
        assertEquals(receiver.url(), hook.url());
        assertEquals(List.of("file.deleted", "webhook.test"), hook.events().stream().sorted().toList(), "the server may sort them");
        assertEquals("java sdk", hook.description());
        assertTrue(hook.enabled());
        assertNull(hook.disabledReason());
        assertTrue(hook.secret().matches("whsec_[A-Za-z0-9+/]+={0,2}"), "a whsec_ secret");
        int keyBytes = Base64.getDecoder().decode(hook.secret().substring(6)).length;
        assertTrue(keyBytes >= 24 && keyBytes <= 64, keyBytes + " bytes");
        assertTrue(Math.abs(Duration.between(hook.createdAtTime().toInstant(), Instant.now()).toSeconds()) < 300, hook.createdAt());
        assertFalse(hook.toString().contains(hook.secret()));
        assertEquals(Map.of(), hook.extra(), "every field known");
        String secret = hook.secret();

        // list and get: no secret.
        List<Webhook> listed = pro.webhooks().list().stream().filter(w -> w.webhookId() == hook.webhookId()).toList();
        assertEquals(1, listed.size());
        assertNull(listed.get(0).secret());
        Webhook got = pro.webhooks().get(hook.webhookId());
        assertNull(got.secret());
        assertEquals(new Webhook(hook.webhookId(), hook.url(), hook.events(), hook.description(), hook.enabled(), hook.disabledReason(),
                hook.createdAt(), null, hook.extra()), got);
        assertEquals(got, listed.get(0));

        // update: only what is set.
        Webhook updated = pro.webhooks().update(hook.webhookId(), WebhookUpdateParams.builder().description("renamed").build());
        assertEquals("renamed", updated.description());
        assertEquals(hook.events(), updated.events());
        assertNull(updated.secret());
        updated = pro.webhooks().update(hook.webhookId(), WebhookUpdateParams.builder().allEvents().clearDescription().build());
        assertEquals(List.of("*"), updated.events());
        assertNull(updated.description());
        Webhook disabled = pro.webhooks().update(hook.webhookId(), WebhookUpdateParams.builder().enabled(false).build());
        assertFalse(disabled.enabled());
        assertEquals(Webhook.DISABLED_OWNER, disabled.disabledReason());
        Webhook enabled = pro.webhooks().update(hook.webhookId(), WebhookUpdateParams.builder().enabled(true).build());
        assertTrue(enabled.enabled());
        assertNull(enabled.disabledReason());
        assertEquals(enabled, pro.webhooks().get(hook.webhookId()));

        // test: the receiver gets a webhook.test that Webhooks.verify accepts.
        String messageId = pro.webhooks().test(hook.webhookId());
        assertTrue(messageId.startsWith("msg_"), messageId);
        Received message = receiver.waitFor(r -> messageId.equals(r.header("webhook-id")));
        assertEquals("POST", message.method());
        assertEquals("/hooks/fileshare", message.path());
        assertTrue(message.header("content-type").startsWith("application/json"), message.header("content-type"));
        assertTrue(message.header("user-agent").matches("Fileshare-Webhooks(/\\S+)?"), message.header("user-agent"));
        WebhookEvent event = Webhooks.verify(message.body(), message.headers(), secret);
        assertEquals(WebhookEvent.WEBHOOK_TEST, event.type());
        assertEquals(messageId, event.messageId());
        assertEquals(hook.webhookId(), ((Number) event.data().get("webhook_id")).longValue());
        assertTrue(Math.abs(Duration.between(event.time().toInstant(), Instant.now()).toSeconds()) < 300, event.timestamp());
        assertEquals(event, Webhooks.verify(message.text(), message.headers(), secret), "the body as text too");
        assertEquals(1, message.header("webhook-signature").trim().split("\\s+").length, "one signature before a rotation");
        // The same message with another secret, or changed, is refused.
        assertEquals(WebhookVerificationException.Reason.NO_MATCHING_SIGNATURE, assertThrows(WebhookVerificationException.class,
                () -> Webhooks.verify(message.body(), message.headers(), otherSecret())).reason());
        assertEquals(WebhookVerificationException.Reason.NO_MATCHING_SIGNATURE, assertThrows(WebhookVerificationException.class,
                () -> Webhooks.verify(message.text() + " ", message.headers(), secret)).reason());

        // deliveries: the test message, delivered.
        WebhookDelivery delivered = delivery(hook.webhookId(), messageId, d -> d.state().equals(WebhookDelivery.STATE_SUCCEEDED));
        assertEquals(WebhookEvent.WEBHOOK_TEST, delivered.eventType());
        assertTrue(delivered.attempts() >= 1);
        assertEquals(204, delivered.lastStatus());
        assertNull(delivered.nextAttemptAt());
        assertNotNull(delivered.createdAtTime());
        WebhookDeliveryList page = pro.webhooks().deliveries(hook.webhookId(), DeliveryListParams.builder().limit(1).build());
        assertEquals(1, page.deliveries().size());
        assertEquals(1, page.pagination().limit());

        // rotate-secret: a new secret; the old one signs too, so a message carries two signatures.
        Webhook rotated = pro.webhooks().rotateSecret(hook.webhookId());
        assertEquals(hook.webhookId(), rotated.webhookId());
        assertTrue(rotated.secret().startsWith("whsec_"));
        assertNotEquals(secret, rotated.secret());
        assertNull(pro.webhooks().get(hook.webhookId()).secret());
        String second = pro.webhooks().test(hook.webhookId());
        Received after = receiver.waitFor(r -> second.equals(r.header("webhook-id")));
        String[] signatures = after.header("webhook-signature").trim().split("\\s+");
        assertEquals(2, signatures.length, "the new and the previous secret both sign: " + after.header("webhook-signature"));
        for (String signature : signatures) assertTrue(signature.startsWith("v1,"), signature);
        assertEquals(second, Webhooks.verify(after.body(), after.headers(), rotated.secret()).messageId());
        assertEquals(second, Webhooks.verify(after.body(), after.headers(), secret).messageId(), "the old secret still verifies");
        // Each signature on its own verifies with one of the secrets.
        for (String signature : signatures) {
            Map<String, String> one = Map.of("webhook-id", second, "webhook-timestamp", after.header("webhook-timestamp"),
                    "webhook-signature", signature);
            boolean byNew = verifies(after.body(), one, rotated.secret());
            boolean byOld = verifies(after.body(), one, secret);
            assertTrue(byNew ^ byOld, "one secret each: " + signature);
        }

        // delete: gone.
        pro.webhooks().delete(hook.webhookId());
        assertThrows(NotFoundException.class, () -> pro.webhooks().get(hook.webhookId()));
        assertThrows(NotFoundException.class, () -> pro.webhooks().test(hook.webhookId()));
        assertThrows(NotFoundException.class, () -> pro.webhooks().delete(hook.webhookId()));
        assertTrue(pro.webhooks().list().stream().noneMatch(w -> w.webhookId() == hook.webhookId()));
    }

    private static boolean verifies(byte[] body, Map<String, String> headers, String secret) {
        try {
            Webhooks.verify(body, headers, secret);
            return true;
        } catch (WebhookVerificationException e) {
            return false;
        }
    }

    @Test
    void anUploadSendsFileUploadedWithTheFileRecord() throws Exception {
        Webhook hook = create(WebhookEvent.FILE_UPLOADED);
        FileInfo file = pro.files().upload("a webhook about me".getBytes(StandardCharsets.UTF_8),
                UploadOptions.builder().filename("webhooked.txt").build());
        try {
            Received message = receiver.waitFor(r -> {
                try {
                    var body = Json.MAPPER.readTree(r.body());
                    return body.path("type").asText().equals("file.uploaded") && body.path("data").path("file_id").asLong() == file.fileId();
                } catch (IOException e) {
                    return false;
                }
            });
            WebhookEvent event = Webhooks.verify(message.body(), message.headers(), hook.secret());
            assertEquals(WebhookEvent.FILE_UPLOADED, event.type());
            FileInfo record = event.file();
            assertEquals(file.fileId(), record.fileId());
            assertEquals(file.sha256(), record.sha256());
            assertEquals("webhooked.txt", record.filename());
            assertEquals(file.size(), record.size());
            assertEquals(file.publicLink(), record.publicLink());
            assertEquals(file.uploadDate(), record.uploadDate());
        } finally {
            pro.files().delete(file.fileId());
        }
    }

    @Test
    void aFailedDeliveryIsRetried() throws Exception {
        Webhook hook = create(WebhookEvent.WEBHOOK_TEST);
        receiver.answer = 500;
        String messageId = pro.webhooks().test(hook.webhookId());
        receiver.waitFor(r -> messageId.equals(r.header("webhook-id")) && r.status() == 500);
        WebhookDelivery failed = delivery(hook.webhookId(), messageId, d -> Integer.valueOf(500).equals(d.lastStatus()));
        assertEquals(WebhookDelivery.STATE_PENDING, failed.state());
        assertNotNull(failed.nextAttemptAtTime(), "another attempt is planned");

        receiver.answer = 204;
        pro.webhooks().retryDelivery(hook.webhookId(), failed.deliveryId());
        Received ok = receiver.waitFor(r -> messageId.equals(r.header("webhook-id")) && r.status() == 204);
        assertEquals(messageId, Webhooks.verify(ok.body(), ok.headers(), hook.secret()).messageId(), "the same message id on every attempt");
        WebhookDelivery done = delivery(hook.webhookId(), messageId, d -> d.state().equals(WebhookDelivery.STATE_SUCCEEDED));
        assertTrue(done.attempts() >= 2, "attempts: " + done.attempts());
        assertEquals(204, done.lastStatus());
        assertThrows(NotFoundException.class, () -> pro.webhooks().retryDelivery(hook.webhookId(), Long.MAX_VALUE >> 11));
    }

    @Test
    void createWithTheSameIdempotencyKeyMakesOneEndpoint() {
        String key = "java-webhook-" + System.nanoTime();
        WebhookCreateParams params = WebhookCreateParams.builder().url(receiver.url()).allEvents().idempotencyKey(key).build();
        RawResponse<Webhook> first = pro.withRawResponse(c -> c.webhooks().create(params));
        made.add(first.data().webhookId());
        assertEquals(201, first.statusCode());
        assertTrue(first.headers().firstValue("location").orElse("").endsWith("/webhooks/" + first.data().webhookId()),
                "Location: " + first.headers().map());
        RawResponse<Webhook> again = pro.withRawResponse(c -> c.webhooks().create(params));
        if (again.data().webhookId() != first.data().webhookId()) made.add(again.data().webhookId());
        assertEquals("true", again.headers().firstValue("idempotent-replayed").orElse(null));
        assertEquals(first.data(), again.data(), "the same endpoint, its secret included");
        assertEquals(1, pro.webhooks().list().stream().filter(w -> w.webhookId() == first.data().webhookId()).count());
        BadRequestException reused = assertThrows(BadRequestException.class, () -> pro.webhooks().create(WebhookCreateParams.builder()
                .url(receiver.url()).events(WebhookEvent.FILE_UPLOADED).idempotencyKey(key).build()));
        assertEquals("idempotency_key_reused", reused.code());
    }

    @Test
    void refusals() {
        // Bad fields.
        BadRequestException badEvent = assertThrows(BadRequestException.class, () -> pro.webhooks().create(WebhookCreateParams.builder()
                .url(receiver.url()).events("file.exploded").build()));
        assertEquals(400, badEvent.status().orElseThrow());
        assertEquals("invalid_parameter", badEvent.code());
        assertTrue(badEvent.getMessage().contains("events"), "the message names the field: " + badEvent.getMessage());
        BadRequestException badUrl = assertThrows(BadRequestException.class, () -> pro.webhooks().create(WebhookCreateParams.builder()
                .url("ftp://127.0.0.1/hook").allEvents().build()));
        assertEquals(400, badUrl.status().orElseThrow());
        assertTrue(List.of("invalid_parameter", "webhook_url_not_allowed").contains(badUrl.code()), badUrl.code());
        BadRequestException credentials = assertThrows(BadRequestException.class, () -> pro.webhooks().create(WebhookCreateParams.builder()
                .url(receiver.url().replace("http://", "http://user:pass@")).allEvents().build()));
        assertTrue(List.of("invalid_parameter", "webhook_url_not_allowed").contains(credentials.code()), credentials.code());
        assertEquals("invalid_parameter", assertThrows(BadRequestException.class, () -> pro.webhooks().deliveries(1,
                DeliveryListParams.builder().limit(101).build())).code());

        // A key without webhooks:manage.
        try (FileshareClient readOnly = server.client("read_only").build()) {
            InsufficientScopeException e = assertThrows(InsufficientScopeException.class, () -> readOnly.webhooks().list());
            assertEquals("webhooks:manage", e.requiredScope());
        }

        // Another account's endpoint is unknown to it.
        Webhook hook = create("*");
        try (FileshareClient stranger = FileshareClient.builder().baseUrl(server.baseUrl)
                .apiKey(server.createAccount("webhooks-stranger", "pro")).build()) {
            assertThrows(NotFoundException.class, () -> stranger.webhooks().get(hook.webhookId()));
            assertThrows(NotFoundException.class, () -> stranger.webhooks().delete(hook.webhookId()));
            assertThrows(NotFoundException.class, () -> stranger.webhooks().deliveries(hook.webhookId()));
            assertTrue(stranger.webhooks().list().stream().noneMatch(w -> w.webhookId() == hook.webhookId()));
        }
        assertEquals(hook.webhookId(), pro.webhooks().get(hook.webhookId()).webhookId(), "still there");
        assertThrows(NotFoundException.class, () -> pro.webhooks().get(999_999_999));
    }
}
