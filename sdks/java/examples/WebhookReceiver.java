// A webhook receiver with the JDK's HttpServer: it registers itself as an endpoint, asks the server
// for a test message, verifies what arrives with Webhooks.verify, then deletes the endpoint.
//
// A production server sends only to public https URLs; this example's http://127.0.0.1 receiver works
// with a development server started with FILESHARE_WEBHOOKS_ALLOW_PRIVATE=true and
// FILESHARE_WEBHOOKS_ALLOW_HTTP=true (as the SDK tests do). The key needs the scope webhooks:manage.
//
//   FILESHARE_BASE_URL=... FILESHARE_API_KEY=... java -cp <sdk and jackson jars> examples/WebhookReceiver.java
import com.sun.net.httpserver.HttpServer;
import dev.fileshare.FileshareClient;
import dev.fileshare.Webhook;
import dev.fileshare.WebhookCreateParams;
import dev.fileshare.WebhookDelivery;
import dev.fileshare.WebhookEvent;
import dev.fileshare.WebhookVerificationException;
import dev.fileshare.Webhooks;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

public class WebhookReceiver {
    public static void main(String[] args) throws Exception {
        BlockingQueue<WebhookEvent> events = new LinkedBlockingQueue<>();
        Set<String> seen = ConcurrentHashMap.newKeySet(); // delivery is at least once: deduplicate by webhook-id
        String[] secret = new String[1];

        HttpServer http = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        http.createContext("/hooks/fileshare", exchange -> {
            try (exchange) {
                byte[] body = exchange.getRequestBody().readAllBytes(); // the raw bytes, exactly as received
                try {
                    WebhookEvent event = Webhooks.verify(body, exchange.getRequestHeaders(), secret[0]);
                    if (seen.add(event.messageId())) events.add(event); // act on it once
                    exchange.sendResponseHeaders(204, -1);            // any 2xx within 15 s is a success
                } catch (WebhookVerificationException e) {
                    System.out.println("refused: " + e.reason() + ": " + e.getMessage());
                    exchange.sendResponseHeaders(400, -1);            // not from the server, or changed: ignore it
                }
            }
        });
        http.start();
        String url = "http://127.0.0.1:" + http.getAddress().getPort() + "/hooks/fileshare";

        try (FileshareClient client = FileshareClient.builder().build()) {
            Webhook hook = client.webhooks().create(WebhookCreateParams.builder()
                    .url(url)
                    .events(WebhookEvent.FILE_UPLOADED, WebhookEvent.FILE_DELETED, WebhookEvent.WEBHOOK_TEST)
                    .description("example receiver")
                    .build());
            secret[0] = hook.secret(); // shown once: keep it in your secret store
            System.out.println("endpoint " + hook.webhookId() + " receives " + hook.events() + " at " + hook.url());
            try {
                String messageId = client.webhooks().test(hook.webhookId());
                WebhookEvent event = events.poll(30, TimeUnit.SECONDS);
                if (event == null) throw new IllegalStateException("no message within 30 s");
                System.out.println("verified " + event.type() + " " + event.messageId() + " (asked for " + messageId + ") about endpoint "
                        + event.data().get("webhook_id"));
                // The server records the outcome once the receiver has answered: ask until it is there.
                WebhookDelivery delivery = null;
                for (int i = 0; i < 50 && (delivery == null || delivery.state().equals(WebhookDelivery.STATE_PENDING)); i++) {
                    if (i > 0) Thread.sleep(200);
                    delivery = client.webhooks().iterateDeliveries(hook.webhookId()).stream()
                            .filter(d -> d.messageId().equals(messageId)).findFirst().orElse(null);
                }
                if (delivery == null) throw new IllegalStateException("no delivery listed for " + messageId);
                System.out.println("delivery " + delivery.deliveryId() + ": " + delivery.eventType() + " " + delivery.state()
                        + ", last status " + delivery.lastStatus() + " after " + delivery.attempts() + " attempt(s)");
            } finally {
                client.webhooks().delete(hook.webhookId());
                System.out.println("endpoint deleted");
            }
        } finally {
            http.stop(0);
        }
    }
}
