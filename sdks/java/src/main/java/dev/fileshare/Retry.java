package dev.fileshare;

import java.util.function.DoubleSupplier;
import java.util.function.Predicate;

/** The retry policy: 429, 503 and connection failures, with Retry-After or full-jitter backoff. */
final class Retry {
    /** {@code Retry-After} is honoured up to this many seconds. */
    static final long RETRY_AFTER_CAP_SECONDS = 60;
    /** First backoff step (full jitter: a random wait between 0 and this, doubling per attempt). */
    static final long BACKOFF_BASE_MS = 500;
    /** Largest backoff step. */
    static final long BACKOFF_MAX_MS = 8000;

    /** Waits between attempts; replaceable in tests. */
    @FunctionalInterface
    interface Sleeper {
        void sleep(long millis) throws InterruptedException;
    }

    /** One attempt of a call. */
    @FunctionalInterface
    interface Attempt<T> {
        T run(int attemptNumber);
    }

    final int maxRetries;
    final Sleeper sleeper;
    final DoubleSupplier random;

    Retry(int maxRetries, Sleeper sleeper, DoubleSupplier random) {
        this.maxRetries = maxRetries;
        this.sleeper = sleeper;
        this.random = random;
    }

    static boolean isRetryable(Throwable error) {
        if (error instanceof RateLimitException || error instanceof APIConnectionException) return true;
        return error instanceof ServerException s && s.status() != null && s.status() == 503;
    }

    /**
     * Whether a request that must not be sent twice (one that creates or counts something) may be
     * sent again: only when the server answered (429, 503: nothing was done) and asks to wait no
     * longer than the cap. Never after a connection failure or a timeout, which may have come after
     * the server acted.
     */
    static boolean nothingWasDone(FileshareException error) {
        return error.status() != null && (error.retryAfter() == null || error.retryAfter() <= RETRY_AFTER_CAP_SECONDS);
    }

    /** Milliseconds to wait before retry number {@code attempt} (0 for the first retry). */
    long delayMillis(int attempt, FileshareException error) {
        if (error != null && error.retryAfter() != null) {
            return Math.min(error.retryAfter(), RETRY_AFTER_CAP_SECONDS) * 1000;
        }
        long ceiling = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS << Math.min(attempt, 20));
        return (long) Math.floor(random.getAsDouble() * ceiling);
    }

    void pause(int attempt, FileshareException error) {
        try {
            sleeper.sleep(delayMillis(attempt, error));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new FileshareException("interrupted while waiting to retry", e);
        }
    }

    <T> T run(Attempt<T> attempt) {
        return run(attempt, e -> true);
    }

    /**
     * Runs {@code attempt} until it succeeds, fails with an error that is not retryable, or the
     * retries are spent. {@code canRetry} may veto a retry (a one-shot body already read).
     */
    <T> T run(Attempt<T> attempt, Predicate<FileshareException> canRetry) {
        for (int n = 0; ; n++) {
            try {
                return attempt.run(n);
            } catch (FileshareException error) {
                if (n >= maxRetries || !isRetryable(error) || !canRetry.test(error) || Thread.currentThread().isInterrupted()) {
                    throw error;
                }
                pause(n, error);
            }
        }
    }
}
