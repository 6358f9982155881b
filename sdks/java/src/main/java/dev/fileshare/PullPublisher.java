package dev.fileshare;

import java.io.IOException;
import java.net.http.HttpRequest;
import java.nio.ByteBuffer;
import java.util.concurrent.Flow;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A request body produced buffer by buffer as the HTTP client asks for it (demand-driven, one
 * drainer at a time), so nothing is read before the socket can take it. Each subscription starts
 * a new {@link Producer}; a source that cannot be read again fails the second subscription.
 */
abstract class PullPublisher implements HttpRequest.BodyPublisher {

    /** The bytes of one subscription. */
    interface Producer {
        /** @return the next buffer, or null at the end */
        ByteBuffer next() throws IOException;

        /** Called once the producer is done (completed, failed or cancelled). */
        void close();
    }

    /** A failure of the request body's own source (a file read): not a network error, never retried. */
    static final class SourceException extends IOException {
        private static final long serialVersionUID = 1L;

        SourceException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /** Starts the bytes of a new subscription. */
    protected abstract Producer start() throws IOException;

    /** Called when a subscription has produced all its bytes. */
    protected void completed(Producer producer) {}

    @Override
    public void subscribe(Flow.Subscriber<? super ByteBuffer> subscriber) {
        Subscription subscription = new Subscription(subscriber);
        subscriber.onSubscribe(subscription);
    }

    private final class Subscription implements Flow.Subscription {
        private final Flow.Subscriber<? super ByteBuffer> subscriber;
        private final AtomicLong demand = new AtomicLong();
        private final AtomicInteger wip = new AtomicInteger();
        private volatile boolean done;
        private Producer producer;

        Subscription(Flow.Subscriber<? super ByteBuffer> subscriber) {
            this.subscriber = subscriber;
        }

        @Override
        public void request(long n) {
            if (done) return;
            if (n <= 0) {
                fail(new IllegalArgumentException("non-positive request: " + n));
                return;
            }
            demand.getAndAccumulate(n, (a, b) -> a + b < 0 ? Long.MAX_VALUE : a + b);
            drain();
        }

        @Override
        public void cancel() {
            done = true;
            if (wip.getAndIncrement() == 0) closeProducer();
        }

        private void drain() {
            if (wip.getAndIncrement() != 0) return;
            int missed = 1;
            while (true) {
                while (!done && demand.get() > 0) {
                    ByteBuffer next;
                    try {
                        if (producer == null) producer = start();
                        next = producer.next();
                    } catch (Throwable e) {
                        fail(e instanceof SourceException ? e : new SourceException("could not read the upload source: " + e.getMessage(), e));
                        break;
                    }
                    if (next == null) {
                        done = true;
                        completed(producer);
                        closeProducer();
                        subscriber.onComplete();
                        break;
                    }
                    demand.decrementAndGet();
                    subscriber.onNext(next);
                }
                if (done) closeProducer();
                missed = wip.addAndGet(-missed);
                if (missed == 0) return;
            }
        }

        private void fail(Throwable error) {
            done = true;
            closeProducer();
            subscriber.onError(error);
        }

        private void closeProducer() {
            Producer p = producer;
            producer = null;
            if (p != null) p.close();
        }
    }
}
