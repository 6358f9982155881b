package dev.fileshare;

import java.util.Set;
import java.util.function.DoubleSupplier;
import java.util.function.Predicate;

/**
 * The retry policy: 429, 500, 502, 503, 504, 409 {@code idempotency_in_progress}, 409
 * {@code scan_pending} (a link's file not scanned yet) and connection failures, after {@code Retry-After} or a full-jitter backoff. A {@code Retry-After} longer than
 * {@link #MAX_RETRY_AFTER_SECONDS} is never slept through: the error is thrown at once.
 */
final class Retry {
    /** The longest {@code Retry-After} the SDK waits for; a longer one is thrown at once. */
    static final long MAX_RETRY_AFTER_SECONDS = 60;
    /** First backoff step (full jitter: a random wait between 0 and this, doubling per attempt). */
    static final long BACKOFF_BASE_MS = 500;
    /** Largest backoff step. */
    static final long BACKOFF_MAX_MS = 8000;
    /** The 5xx statuses worth another attempt (a 501 or 505 will not change). */
    private static final Set<Integer> RETRYABLE_SERVER_STATUSES = Set.of(500, 502, 503, 504);

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
    final Log log;

    Retry(int maxRetries, Sleeper sleeper, DoubleSupplier random) {
        this(maxRetries, sleeper, random, Log.OFF);
    }

    Retry(int maxRetries, Sleeper sleeper, DoubleSupplier random, Log log) {
        this.maxRetries = maxRetries;
        this.sleeper = sleeper;
        this.random = random;
        this.log = log;
    }

    Retry withMaxRetries(int retries) {
        return new Retry(retries, sleeper, random, log);
    }

    /** Whether the server asked for a wait longer than the SDK sleeps through. */
    static boolean waitsTooLong(Throwable error) {
        return error instanceof FileshareException f && f.retryAfterSecondsOrNull() != null && f.retryAfterSecondsOrNull() > MAX_RETRY_AFTER_SECONDS;
    }

    /**
     * Whether another attempt now may help: a {@link #isTransient transient} failure, unless the
     * server asked to wait longer than {@link #MAX_RETRY_AFTER_SECONDS}.
     */
    static boolean isRetryable(Throwable error) {
        return isTransient(error) && !waitsTooLong(error);
    }

    /**
     * Whether the same request may succeed later: a rate limit, a 500, 502, 503 or 504, the same
     * idempotency key still running (409 {@code idempotency_in_progress}), a link's file not scanned
     * yet (409 {@code scan_pending}), or no response at all.
     */
    static boolean isTransient(Throwable error) {
        if (error instanceof RateLimitException || error instanceof APIConnectionException || error instanceof ScanPendingException) {
            return true;
        }
        if (error instanceof ServerException s) return s.statusOrNull() != null && RETRYABLE_SERVER_STATUSES.contains(s.statusOrNull());
        return error instanceof BadRequestException b && Integer.valueOf(409).equals(b.statusOrNull())
                && "idempotency_in_progress".equals(b.code());
    }

    /**
     * Whether a request that must not be sent twice and carries no idempotency key (a download's
     * {@code POST} to a link, which counts; a rotation) may be sent again: only when the server
     * answered 429 or 503, or a link 409 {@code scan_pending} (nothing was done: the link checks the
     * scan before it counts). Never after a 500 (it may have acted before failing), a connection
     * failure or a timeout (it may have come after the server acted).
     */
    static boolean nothingWasDone(FileshareException error) {
        if (error instanceof ScanPendingException) return true;
        Integer status = error.statusOrNull();
        return status != null && (status == 429 || status == 503);
    }

    /** Milliseconds to wait before retry number {@code attempt} (0 for the first retry). */
    long delayMillis(int attempt, FileshareException error) {
        if (error != null && error.retryAfterSecondsOrNull() != null) return error.retryAfterSecondsOrNull() * 1000;
        long ceiling = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS << Math.min(attempt, 20));
        return (long) Math.floor(random.getAsDouble() * ceiling);
    }

    /**
     * Sleeps before retry number {@code attempt}.
     *
     * @throws FileshareException {@code error} itself when it asks for a wait longer than
     *     {@link #MAX_RETRY_AFTER_SECONDS}: such a wait is the caller's to decide
     */
    void pause(int attempt, FileshareException error) {
        if (waitsTooLong(error)) throw error;
        long delay = delayMillis(attempt, error);
        log.info(() -> "retry " + (attempt + 1) + " of " + maxRetries + " in " + delay + " ms after: " + error.getMessage());
        try {
            sleeper.sleep(delay);
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
