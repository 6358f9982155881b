package dev.fileshare;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A TCP proxy in front of the real server that drops one connection on purpose: once a request
 * starting with {@code marker} goes through, it cuts that connection after {@code bytes} more
 * bytes upstream (the request body) or downstream (the response).
 */
final class CuttingProxy implements AutoCloseable {
    enum Direction { REQUEST, RESPONSE }

    private final ServerSocket server;
    private final String targetHost;
    private final int targetPort;
    private final AtomicReference<String> marker = new AtomicReference<>();
    private volatile Direction direction;
    private final AtomicLong cutAfter = new AtomicLong();
    final AtomicInteger cuts = new AtomicInteger();
    /** A string of the answers replaced by another of the same length (the server's origin by the proxy's), or null. */
    private volatile byte[][] rewrite;

    CuttingProxy(String targetUrl) throws IOException {
        URI uri = URI.create(targetUrl);
        this.targetHost = uri.getHost();
        this.targetPort = uri.getPort();
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread t = new Thread(this::acceptLoop, "cutting-proxy");
        t.setDaemon(true);
        t.start();
    }

    String origin() {
        return "http://127.0.0.1:" + server.getLocalPort();
    }

    /**
     * Rewrites {@code from} into {@code to} in what the server answers, so that absolute URLs it
     * sends (a download grant's {@code Location}, a file's {@code public_link}) lead through the
     * proxy. Both must have the same length: {@code Content-Length} stays right. Meant for headers
     * and small JSON answers: a string split across two reads is not rewritten.
     *
     * @return false when the lengths differ (nothing is rewritten)
     */
    boolean rewriteAnswers(String from, String to) {
        if (from.length() != to.length()) return false;
        rewrite = new byte[][] {from.getBytes(StandardCharsets.ISO_8859_1), to.getBytes(StandardCharsets.ISO_8859_1)};
        return true;
    }

    private void rewrite(byte[] buffer, int length) {
        byte[][] r = rewrite;
        if (r == null) return;
        outer:
        for (int i = 0; i + r[0].length <= length; i++) {
            for (int j = 0; j < r[0].length; j++) {
                if (buffer[i + j] != r[0][j]) continue outer;
            }
            System.arraycopy(r[1], 0, buffer, i, r[1].length);
        }
    }

    /** Arms one cut. */
    void cutOnce(String requestMarker, Direction where, long afterBytes) {
        direction = where;
        cutAfter.set(afterBytes);
        marker.set(requestMarker);
    }

    private void acceptLoop() {
        while (!server.isClosed()) {
            try {
                Socket client = server.accept();
                Socket upstream = new Socket(targetHost, targetPort);
                Connection c = new Connection(client, upstream);
                start(() -> c.pump(client, upstream, true));
                start(() -> c.pump(upstream, client, false));
            } catch (IOException e) {
                return;
            }
        }
    }

    private static void start(Runnable r) {
        Thread t = new Thread(r, "cutting-proxy-pump");
        t.setDaemon(true);
        t.start();
    }

    private final class Connection {
        final Socket a;
        final Socket b;
        volatile long remaining = -1; // bytes left before the cut, -1 when not armed
        volatile Direction armedDirection;

        Connection(Socket a, Socket b) {
            this.a = a;
            this.b = b;
        }

        void pump(Socket from, Socket to, boolean upstream) {
            byte[] buffer = new byte[16 * 1024];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                while (true) {
                    int n = in.read(buffer);
                    if (n < 0) break;
                    int pass = n;
                    if (!upstream) rewrite(buffer, n);
                    if (upstream && armedDirection == null) {
                        String m = marker.get();
                        String head = new String(buffer, 0, Math.min(n, 64), StandardCharsets.ISO_8859_1);
                        if (m != null && head.startsWith(m) && marker.compareAndSet(m, null)) {
                            remaining = cutAfter.get();
                            armedDirection = direction;
                            if (direction == Direction.REQUEST) {
                                int headerEnd = new String(buffer, 0, n, StandardCharsets.ISO_8859_1).indexOf("\r\n\r\n");
                                if (headerEnd >= 0) remaining += headerEnd + 4; // count the body only
                            }
                        }
                    }
                    boolean cutHere = false;
                    if (armedDirection != null && (armedDirection == Direction.REQUEST) == upstream && remaining >= 0) {
                        if (n >= remaining) {
                            pass = (int) remaining;
                            cutHere = true;
                        }
                        remaining -= pass;
                    }
                    out.write(buffer, 0, pass);
                    out.flush();
                    if (cutHere) {
                        cuts.incrementAndGet();
                        close();
                        return;
                    }
                }
            } catch (IOException e) {
                // the other side went away
            }
            close();
        }

        void close() {
            try {
                a.close();
            } catch (IOException ignored) {
                // closing
            }
            try {
                b.close();
            } catch (IOException ignored) {
                // closing
            }
        }
    }

    @Override
    public void close() throws IOException {
        server.close();
    }
}
