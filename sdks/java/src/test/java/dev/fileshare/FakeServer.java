package dev.fileshare;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/** A local com.sun.net.httpserver fake of the API; each test scripts its answers. */
final class FakeServer implements AutoCloseable {
    /** A request as the fake saw it. */
    record Seen(String method, String path, Map<String, List<String>> headers, byte[] body) {
        String header(String name) {
            for (var e : headers.entrySet()) {
                if (e.getKey().equalsIgnoreCase(name)) return e.getValue().get(0);
            }
            return null;
        }
    }

    @FunctionalInterface
    interface Handler {
        void handle(HttpExchange exchange, int callNumber) throws IOException;
    }

    final HttpServer server;
    final List<Seen> requests = new CopyOnWriteArrayList<>();
    private final AtomicInteger calls = new AtomicInteger();

    FakeServer(Handler handler) throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.setExecutor(Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "fake-server");
            t.setDaemon(true);
            return t;
        }));
        server.createContext("/", exchange -> {
            byte[] body = exchange.getRequestBody().readAllBytes();
            exchange.setAttribute("body", body);
            requests.add(new Seen(exchange.getRequestMethod(), exchange.getRequestURI().toString(),
                    Map.copyOf(exchange.getRequestHeaders()), body));
            try {
                handler.handle(exchange, calls.incrementAndGet());
            } catch (IOException e) {
                // the client went away (timeouts, cuts): expected in some tests
            } catch (RuntimeException e) {
                e.printStackTrace();
                throw e;
            } finally {
                exchange.close();
            }
        });
        server.start();
    }

    String baseUrl() {
        return "http://127.0.0.1:" + server.getAddress().getPort() + "/api/v1";
    }

    String origin() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    FileshareClient.Builder client() {
        FileshareClient.Builder b = FileshareClient.builder().baseUrl(baseUrl()).apiKey(TestKeys.FAKE_KEY);
        b.sleeper = millis -> sleeps.add(millis);
        b.random = () -> 0.5;
        return b;
    }

    final List<Long> sleeps = new CopyOnWriteArrayList<>();

    static void json(HttpExchange exchange, int status, String body, String... headers) throws IOException {
        for (int i = 0; i + 1 < headers.length; i += 2) exchange.getResponseHeaders().add(headers[i], headers[i + 1]);
        exchange.getResponseHeaders().set("Content-Type", "application/json; charset=utf-8");
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.sendResponseHeaders(status, bytes.length == 0 ? -1 : bytes.length);
        if (bytes.length > 0) {
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(bytes);
            }
        }
    }

    /**
     * Answers a POST to a link as the server does: {@code 303} to a grant URL below it (the link's
     * path plus {@code /grant}), absolute, with the JSON body. True when the request was that POST.
     */
    static boolean grant(HttpExchange exchange) throws IOException {
        if (!"POST".equals(exchange.getRequestMethod())) return false;
        String grant = "http://" + exchange.getRequestHeaders().getFirst("Host") + exchange.getRequestURI().getPath() + "/grant";
        json(exchange, 303, "{\"success\":true,\"download_url\":\"" + grant + "\",\"expires_at\":\"2099-01-01 00:00:00\"}",
                "Location", grant);
        return true;
    }

    static String error(String code, String message) {
        return "{\"success\":false,\"error\":{\"code\":\"" + code + "\",\"message\":\"" + message + "\"}}";
    }

    static String file(long id, String sha256, long size, String link) {
        return "{\"file_id\":" + id + ",\"filename\":\"f" + id + ".txt\",\"size\":" + size
                + ",\"upload_date\":\"2026-11-22 00:17:19\",\"download_count\":0,\"public_link\":\"" + link
                + "\",\"content_type\":\"text/plain\",\"sha256\":\"" + sha256 + "\"}";
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
