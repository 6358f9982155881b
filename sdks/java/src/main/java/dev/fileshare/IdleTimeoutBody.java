package dev.fileshare;

import java.io.IOException;
import java.io.InputStream;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Flow;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A response body as an {@link InputStream} whose reads give up when nothing arrived for the idle
 * timeout (the JDK's request timeout only covers the wait for the headers). One buffer list is
 * requested at a time, so memory stays flat however large the body.
 */
final class IdleTimeoutBody extends InputStream implements HttpResponse.BodySubscriber<InputStream> {
    /** Thrown by {@link #read} when the body stayed idle past the timeout. */
    static final class IdleTimeoutException extends IOException {
        private static final long serialVersionUID = 1L;

        IdleTimeoutException(String message) {
            super(message);
        }
    }

    private static final Object END = new Object();

    private final Duration timeout;
    private final Runnable onActivity;
    private final LinkedBlockingQueue<Object> queue = new LinkedBlockingQueue<>();
    private volatile Flow.Subscription subscription;
    private List<ByteBuffer> current = List.of();
    private int index;
    private boolean finished;
    private volatile boolean closed;

    IdleTimeoutBody(Duration timeout, Runnable onActivity) {
        this.timeout = timeout;
        this.onActivity = onActivity;
    }

    static HttpResponse.BodyHandler<InputStream> handler(Duration timeout, Runnable onActivity) {
        return info -> new IdleTimeoutBody(timeout, onActivity);
    }

    @Override
    public CompletionStage<InputStream> getBody() {
        return CompletableFuture.completedFuture(this);
    }

    @Override
    public void onSubscribe(Flow.Subscription s) {
        subscription = s;
        if (closed) s.cancel();
        else s.request(1);
    }

    @Override
    public void onNext(List<ByteBuffer> item) {
        queue.offer(item);
    }

    @Override
    public void onError(Throwable error) {
        queue.offer(error);
    }

    @Override
    public void onComplete() {
        queue.offer(END);
    }

    /** Makes sure {@code current} has bytes; false at the end of the body. */
    private boolean advance() throws IOException {
        while (true) {
            while (index < current.size()) {
                if (current.get(index).hasRemaining()) return true;
                index++;
            }
            if (finished) return false;
            if (closed) throw new IOException("closed");
            Object next;
            try {
                long millis = timeout.toMillis();
                next = millis <= 0 ? queue.take() : queue.poll(millis, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                cancel();
                throw new java.io.InterruptedIOException("interrupted while reading the response");
            }
            if (next == null) {
                cancel();
                throw new IdleTimeoutException("no data moved for " + timeout.toMillis() + " ms (timeout)");
            }
            if (next == END) {
                finished = true;
                return false;
            }
            if (next instanceof Throwable error) {
                finished = true;
                throw error instanceof IOException io ? io : new IOException(error.getMessage(), error);
            }
            @SuppressWarnings("unchecked")
            List<ByteBuffer> buffers = (List<ByteBuffer>) next;
            current = buffers;
            index = 0;
            if (onActivity != null) onActivity.run();
            Flow.Subscription s = subscription;
            if (s != null) s.request(1);
        }
    }

    @Override
    public int read() throws IOException {
        if (!advance()) return -1;
        return current.get(index).get() & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        if (len == 0) return 0;
        if (!advance()) return -1;
        ByteBuffer buffer = current.get(index);
        int n = Math.min(len, buffer.remaining());
        buffer.get(b, off, n);
        return n;
    }

    private void cancel() {
        Flow.Subscription s = subscription;
        if (s != null && !finished) s.cancel();
    }

    @Override
    public void close() {
        if (closed) return;
        closed = true;
        cancel();
        finished = true;
        queue.clear();
    }
}
