package dev.fileshare;

import java.net.URI;
import java.net.http.HttpClient;
import java.nio.file.Path;
import java.time.Clock;
import java.io.OutputStream;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.DoubleSupplier;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The Fileshare API client. Build one with {@link #builder()}, share it between threads, and
 * {@link #close()} it when done (it owns the thread pool of the {@code *Async} calls).
 *
 * <pre>{@code
 * try (FileshareClient client = FileshareClient.builder()
 *         .baseUrl("https://files.example.com/api/v1")
 *         .apiKey(System.getenv("FILESHARE_API_KEY"))
 *         .build()) {
 *     FileInfo file = client.files().upload(Path.of("video.mp4"));
 *     client.download(file, Path.of("copy.mp4"));
 * }
 * }</pre>
 *
 * <p>The API key never appears in a message, in {@link #toString()} or in a log line.
 */
public final class FileshareClient implements AutoCloseable {
    /** Default number of retries of a failed call (429, 500, 502, 503, 504, no connection). */
    public static final int DEFAULT_MAX_RETRIES = 2;
    /** Default idle timeout. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(60);
    /** Sources of at least this many bytes use resumable uploads by default (64 MiB). */
    public static final long DEFAULT_RESUMABLE_THRESHOLD = 64L * 1024 * 1024;
    /** Default chunk size of resumable uploads (16 MiB). */
    public static final int DEFAULT_CHUNK_SIZE = 16 * 1024 * 1024;

    private final String baseUrl;
    private final int maxRetries;
    private final Duration timeout;
    private final long resumableThreshold;
    private final int chunkSize;
    private final Transport transport;
    private final FilesResource files;
    private final LinksResource links;
    private final AuditEventsResource auditEvents;
    private final WebhooksResource webhooks;
    private final UploadRequestsResource uploadRequests;
    private final Grants grants;
    private final ExecutorService ownExecutor;
    private final java.util.concurrent.Executor executor;
    /** What OPTIONS /uploads said, shared with the copies of {@link #withOptions}. */
    private final AtomicReference<TusCapabilities> tus;

    private FileshareClient(Builder b) {
        Function<String, String> env = b.env == null ? System::getenv : b.env;
        String url = b.baseUrl != null ? b.baseUrl : env.apply("FILESHARE_BASE_URL");
        String key = b.apiKey != null ? b.apiKey : env.apply("FILESHARE_API_KEY");
        if (url == null || url.isBlank()) {
            throw new ConfigurationException("no base URL: call baseUrl(\"https://files.example.com/api/v1\") or set FILESHARE_BASE_URL");
        }
        if (!url.matches("(?i)^https?://[^/\\s]+.*") || url.contains(" ")) {
            throw new ConfigurationException("baseUrl must be an http(s) URL ending in /api/v1");
        }
        URI parsed;
        try {
            parsed = URI.create(url);
        } catch (IllegalArgumentException e) {
            throw new ConfigurationException("baseUrl is not a valid URL");
        }
        if (parsed.getRawQuery() != null || parsed.getRawFragment() != null) {
            throw new ConfigurationException("baseUrl must not carry a query or fragment: use the URL that ends in /api/v1");
        }
        String trimmed = url.replaceAll("/+$", "");
        if (!trimmed.endsWith("/api/v1")) {
            String add = trimmed.endsWith("/api") ? "/v1" : "/api/v1";
            throw new ConfigurationException("baseUrl " + trimmed + " does not end in /api/v1: add " + add
                    + " (" + trimmed + add + ")");
        }
        if (key == null || key.isBlank()) throw new ConfigurationException("no API key: call apiKey(...) or set FILESHARE_API_KEY");
        if (key.chars().anyMatch(c -> c < 0x21 || c > 0x7e)) {
            throw new ConfigurationException("the API key holds characters an HTTP header cannot carry");
        }
        this.baseUrl = url.replaceAll("/+$", "");
        this.maxRetries = b.maxRetries;
        this.timeout = b.timeout;
        this.resumableThreshold = b.resumableThreshold;
        this.chunkSize = b.chunkSize;
        HttpClient http = b.httpClient;
        if (http == null) {
            HttpClient.Builder hb = HttpClient.newBuilder()
                    .version(HttpClient.Version.HTTP_1_1)
                    .followRedirects(HttpClient.Redirect.NEVER);
            if (!timeout.isZero()) hb.connectTimeout(timeout);
            http = hb.build();
        }
        Retry.Sleeper sleeper = b.sleeper != null ? b.sleeper : Thread::sleep;
        DoubleSupplier random = b.random != null ? b.random : () -> ThreadLocalRandom.current().nextDouble();
        String logSetting = env.apply("FILESHARE_LOG");
        if (logSetting == null) logSetting = System.getProperty("fileshare.log");
        Log log = Log.fromSetting(logSetting, b.logger);
        this.transport = new Transport(baseUrl, key, timeout, new Retry(maxRetries, sleeper, random, log), http, log, Map.of(), null);
        this.files = new FilesResource(this, transport);
        this.links = new LinksResource(transport);
        this.auditEvents = new AuditEventsResource(transport);
        this.webhooks = new WebhooksResource(transport);
        this.uploadRequests = new UploadRequestsResource(transport);
        this.grants = new Grants(b.clock != null ? b.clock : Clock.systemUTC());
        this.tus = new AtomicReference<>();
        if (b.executor != null) {
            this.ownExecutor = null;
            this.executor = b.executor;
        } else {
            AtomicInteger count = new AtomicInteger();
            this.ownExecutor = Executors.newCachedThreadPool(r -> {
                Thread t = new Thread(r, "fileshare-sdk-" + count.incrementAndGet());
                t.setDaemon(true);
                return t;
            });
            this.executor = ownExecutor;
        }
    }

    /** A copy of {@code parent} that sends through {@code transport} (its timeout, retries, headers). */
    private FileshareClient(FileshareClient parent, Transport transport) {
        this.baseUrl = parent.baseUrl;
        this.maxRetries = transport.retry.maxRetries;
        this.timeout = transport.timeout;
        this.resumableThreshold = parent.resumableThreshold;
        this.chunkSize = parent.chunkSize;
        this.transport = transport;
        this.files = new FilesResource(this, transport);
        this.links = new LinksResource(transport);
        this.auditEvents = new AuditEventsResource(transport);
        this.webhooks = new WebhooksResource(transport);
        this.uploadRequests = new UploadRequestsResource(transport);
        this.grants = parent.grants;
        this.ownExecutor = null; // the parent's pool: closing a copy closes nothing
        this.executor = parent.executor;
        this.tus = parent.tus;
    }

    /**
     * A copy of this client with other options: every call through it uses them. It shares this
     * client's HTTP client, key, thread pool and remembered download grants, so it is cheap;
     * closing it closes nothing (close the original).
     *
     * <pre>{@code
     * FileshareClient patient = client.withOptions(RequestOptions.builder().maxRetries(5).timeout(Duration.ofMinutes(2)).build());
     * }</pre>
     *
     * <p>An {@code idempotencyKey} set here is sent by every creating call of the copy: give a copy
     * with a key to one creation only.
     *
     * @param options timeout, retries, extra headers, idempotency key; what is unset keeps this client's
     * @return the copy
     */
    public FileshareClient withOptions(RequestOptions options) {
        if (options == null || options == RequestOptions.none()) return this;
        return new FileshareClient(this, transport.with(options));
    }

    /**
     * {@link #withOptions(RequestOptions)} with the options set on a builder.
     *
     * <pre>{@code client.withOptions(o -> o.maxRetries(0)).files().get(id);}</pre>
     *
     * @param options sets the options
     * @return the copy
     */
    public FileshareClient withOptions(Consumer<RequestOptions.Builder> options) {
        RequestOptions.Builder b = RequestOptions.builder();
        options.accept(b);
        return withOptions(b.build());
    }

    /**
     * Runs one call and returns its result with the HTTP answer it came from: status and headers
     * (e.g. {@code RateLimit-Remaining}) of the call's last response. Works for every call of the
     * client, {@link #links()} and {@link #download} included; an error is thrown as usual (it carries
     * {@link FileshareException#headers()} itself).
     *
     * <pre>{@code
     * RawResponse<StatsResult> raw = client.withRawResponse(c -> c.stats());
     * long left = raw.rateLimitRemaining().orElse(-1);
     * }</pre>
     *
     * @param call the call, made on this client in the current thread
     * @param <T> its result
     * @return the result and the answer
     */
    public <T> RawResponse<T> withRawResponse(Function<FileshareClient, T> call) {
        return Transport.capturing(() -> call.apply(this));
    }

    /** @return a builder; unset values come from {@code FILESHARE_BASE_URL} and {@code FILESHARE_API_KEY} */
    public static Builder builder() {
        return new Builder();
    }

    /** @return upload, list, iterate, get, update, delete */
    public FilesResource files() {
        return files;
    }

    /** @return the links of the account's files: create, list, get, update, delete, rotate */
    public LinksResource links() {
        return links;
    }

    /**
     * The account's audit log (needs the scope {@code audit:read}).
     *
     * @return list and iterate the audit events, newest first
     */
    public AuditEventsResource auditEvents() {
        return auditEvents;
    }

    /**
     * The account's webhook endpoints (needs the scope {@code webhooks:manage}). Messages are checked
     * by your receiver with {@link Webhooks#verify(byte[], Map, String) Webhooks.verify}.
     *
     * @return create, list, get, update, delete, rotateSecret, test, deliveries, iterateDeliveries, retryDelivery
     */
    public WebhooksResource webhooks() {
        return webhooks;
    }

    /**
     * The account's upload requests (needs the scope {@code requests:manage}): links that let
     * someone without an account send files into this account.
     *
     * @return create, list, get, update, close, delete, files, iterateFiles
     */
    public UploadRequestsResource uploadRequests() {
        return uploadRequests;
    }

    /**
     * The API key this client uses ({@code GET /key}): its id, name, prefix, scopes, allowed
     * addresses, dates and the account's plan. Any valid key may ask (no scope needed); the call
     * counts against the rate limits like any other.
     *
     * <pre>{@code
     * CurrentKey key = client.key();
     * System.out.println(key.prefix() + " holds " + key.scopes() + " on the " + key.plan() + " plan");
     * }</pre>
     *
     * @return the key as the server knows it
     * @throws AuthenticationException 401 for a missing, unknown, revoked or expired key
     * @throws IpNotAllowedException 403 {@code ip_not_allowed}: the key may not be used from this address
     */
    public CurrentKey key() {
        return Json.currentKey(transport.requestJson(() -> transport.request(transport.url("/key"), true).GET().build()).body());
    }

    /**
     * {@link #key()} with options for this call.
     *
     * @param options timeout, retries, extra headers
     * @return the key as the server knows it
     */
    public CurrentKey key(RequestOptions options) {
        return withOptions(options).key();
    }

    /**
     * {@link #key()} on the client's executor.
     *
     * @return the key, or a failed future with the {@link FileshareException}; cancelling it stops the call
     */
    public CompletableFuture<CurrentKey> keyAsync() {
        return async(this::key);
    }

    /**
     * The account's statistics, limits and plan; fields this SDK does not know are kept in the
     * records' {@code extra} maps.
     *
     * @return {@code stats()}, {@code limits()}, {@code plan()}
     */
    public StatsResult stats() {
        return Json.statsResult(transport.requestJson(() -> transport.request(transport.url("/stats"), true).GET().build()).body());
    }

    /**
     * {@link #stats()} with options for this call.
     *
     * @param options timeout, retries, extra headers
     * @return {@code stats()}, {@code limits()}, {@code plan()}
     */
    public StatsResult stats(RequestOptions options) {
        return withOptions(options).stats();
    }

    /**
     * {@link #stats()} on the client's executor.
     *
     * @return the statistics, or a failed future with the {@link FileshareException}; cancelling it stops the call
     */
    public CompletableFuture<StatsResult> statsAsync() {
        return async(this::stats);
    }

    /**
     * Downloads a file to a path through its default link ({@code publicLink}). No key is sent to
     * the link. The SDK {@code POST}s to the link, which counts one download and answers with a
     * grant URL, then streams the grant: with a partial destination file, it continues with
     * {@code Range} + {@code If-Range}; a dropped connection continues from the same grant; the
     * finished file is checked against the file's SHA-256. The client remembers the grant (about an
     * hour) for this link and destination: continuing the same file later is not counted again. A
     * destination that already holds the whole file is not fetched (nor counted).
     *
     * @param file the file's record (its {@code publicLink}, {@code sha256} and {@code size} are used)
     * @param destination the file to write (created, or continued)
     * @return the size, SHA-256 and resumed part of the finished file
     * @throws IntegrityException if the bytes do not match the SHA-256
     * @throws NotFoundException if the link is unknown, revoked, rotated away, expired or exhausted
     */
    public DownloadResult download(FileInfo file, Path destination) {
        return download(file, destination, DownloadOptions.defaults());
    }

    /**
     * Downloads a file to a path, with options; see {@link #download(FileInfo, Path)}.
     *
     * @param file the file's record
     * @param destination the file to write
     * @param options progress listener, resume (default true), the link's password
     * @return the size, SHA-256 and resumed part of the finished file
     * @throws AuthenticationException code {@code invalid_password}: the link's password is missing or wrong
     */
    public DownloadResult download(FileInfo file, Path destination, DownloadOptions options) {
        Objects.requireNonNull(file, "file");
        return new Downloader(transport, grants, file.publicLink(), file.sha256(), file.size(), destination, options).run();
    }

    /**
     * Downloads a link (a file's {@code publicLink} or any {@link Link#url()}; no key is sent to it)
     * to a path, through a download grant as {@link #download(FileInfo, Path)} describes.
     *
     * @param link a link's URL
     * @param destination the file to write (created, or continued)
     * @return the size, SHA-256 and resumed part of the finished file
     * @throws NotFoundException if the link is unknown, revoked, rotated away, expired or exhausted
     */
    public DownloadResult download(String link, Path destination) {
        return download(link, destination, DownloadOptions.defaults());
    }

    /**
     * Downloads a link to a path, with options. A partial destination is continued after a
     * {@code HEAD} on the grant tells the file's ETag and length.
     *
     * <pre>{@code client.download(link.url(), Path.of("report.pdf"), DownloadOptions.builder().password(secret).build());}</pre>
     *
     * @param link a link's URL
     * @param destination the file to write
     * @param options progress listener, resume (default true), the link's password
     * @return the size, SHA-256 and resumed part of the finished file
     * @throws AuthenticationException code {@code invalid_password}: the link's password is missing or wrong
     * @throws RateLimitException code {@code rate_limited}: too many wrong passwords from this address
     */
    public DownloadResult download(String link, Path destination, DownloadOptions options) {
        return new Downloader(transport, grants, link, null, -1, destination, options).run();
    }

    /**
     * Downloads a file through its default link into a stream (a socket, a servlet's response, an
     * archive entry), which is written to but not closed. The bytes are checked against the
     * file's SHA-256 once all written; a dropped connection is continued from where it stood (the
     * bytes already written stay). A stream cannot be continued by a later call, so {@code resume}
     * has no effect and no grant is remembered.
     *
     * @param file the file's record
     * @param destination where the bytes go
     * @param options progress listener, the link's password
     * @return the size and SHA-256 of what was written
     * @throws IntegrityException if the bytes written do not match the SHA-256 (they were written: discard them)
     */
    public DownloadResult download(FileInfo file, OutputStream destination, DownloadOptions options) {
        Objects.requireNonNull(file, "file");
        return new Downloader(transport, grants, file.publicLink(), file.sha256(), file.size(), destination, options).run();
    }

    /**
     * {@link #download(FileInfo, OutputStream, DownloadOptions)} with the default options.
     *
     * @param file the file's record
     * @param destination where the bytes go (not closed)
     * @return the size and SHA-256 of what was written
     */
    public DownloadResult download(FileInfo file, OutputStream destination) {
        return download(file, destination, DownloadOptions.defaults());
    }

    /**
     * Downloads a link's file into a stream; see {@link #download(FileInfo, OutputStream, DownloadOptions)}.
     *
     * @param link a link's URL
     * @param destination where the bytes go (not closed)
     * @param options progress listener, the link's password
     * @return the size and SHA-256 of what was written
     */
    public DownloadResult download(String link, OutputStream destination, DownloadOptions options) {
        return new Downloader(transport, grants, link, null, -1, destination, options).run();
    }

    /**
     * {@link #download(String, OutputStream, DownloadOptions)} with the default options.
     *
     * @param link a link's URL
     * @param destination where the bytes go (not closed)
     * @return the size and SHA-256 of what was written
     */
    public DownloadResult download(String link, OutputStream destination) {
        return download(link, destination, DownloadOptions.defaults());
    }

    /**
     * {@link #download(FileInfo, Path)} on the client's executor.
     *
     * @param file the file's record
     * @param destination the file to write
     * @return the result, or a failed future; cancelling it stops the transfer
     */
    public CompletableFuture<DownloadResult> downloadAsync(FileInfo file, Path destination) {
        return downloadAsync(file, destination, null);
    }

    /**
     * {@link #download(String, Path)} on the client's executor.
     *
     * @param link a link's URL
     * @param destination the file to write
     * @return the result, or a failed future; cancelling it stops the transfer
     */
    public CompletableFuture<DownloadResult> downloadAsync(String link, Path destination) {
        return downloadAsync(link, destination, null);
    }

    /**
     * {@link #download(FileInfo, Path, DownloadOptions)} on the client's executor.
     *
     * @param file the file's record
     * @param destination the file to write
     * @param options the options (may be null)
     * @return the result, or a failed future with the {@link FileshareException}
     */
    public CompletableFuture<DownloadResult> downloadAsync(FileInfo file, Path destination, DownloadOptions options) {
        return async(() -> download(file, destination, options));
    }

    /**
     * {@link #download(String, Path, DownloadOptions)} on the client's executor.
     *
     * @param publicLink a file's {@code public_link}
     * @param destination the file to write
     * @param options the options (may be null)
     * @return the result, or a failed future with the {@link FileshareException}
     */
    public CompletableFuture<DownloadResult> downloadAsync(String publicLink, Path destination, DownloadOptions options) {
        return async(() -> download(publicLink, destination, options));
    }

    /**
     * Whether the server offers resumable uploads (asked once with {@code OPTIONS /uploads}, then kept).
     *
     * @return true when it speaks tus 1.0.0 with the creation extension
     */
    public boolean supportsResumableUploads() {
        return resumableUploads().available();
    }

    /**
     * What the server offers for resumable uploads (asked once with {@code OPTIONS /uploads}, then
     * kept; a failed question is asked again next time): the other SDKs' capability query.
     *
     * @return available, sha256 checksums, the largest size
     */
    public TusCapabilities resumableUploads() {
        TusCapabilities known = tus.get();
        if (known == null) {
            known = TusUploader.detect(transport);
            if (known.available()) tus.set(known);
        }
        return known;
    }

    /**
     * Runs {@code call} on the executor. Cancelling the returned future ({@code cancel(true)} or
     * {@code cancel(false)}) interrupts the call's thread, which stops its transfer (an upload or
     * download in flight is aborted; a resumable upload is then deleted unless kept).
     */
    <T> CompletableFuture<T> async(Supplier<T> call) {
        CancellableFuture<T> future = new CancellableFuture<>();
        try {
            executor.execute(() -> future.run(call));
        } catch (java.util.concurrent.RejectedExecutionException e) {
            return CompletableFuture.failedFuture(new ConfigurationException("the client is closed"));
        }
        return future;
    }

    /** A future whose cancellation interrupts the thread that runs it. */
    static final class CancellableFuture<T> extends CompletableFuture<T> {
        private Thread runner;

        void run(Supplier<T> call) {
            synchronized (this) {
                if (isDone()) return;
                runner = Thread.currentThread();
            }
            try {
                complete(call.get());
            } catch (Throwable e) {
                completeExceptionally(e);
            } finally {
                synchronized (this) {
                    runner = null;
                    Thread.interrupted(); // a cancellation's interrupt must not reach the pool's next task
                }
            }
        }

        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            boolean cancelled = super.cancel(mayInterruptIfRunning);
            if (cancelled) {
                synchronized (this) {
                    if (runner != null) runner.interrupt();
                }
            }
            return cancelled;
        }

        @Override
        public <U> CompletableFuture<U> newIncompleteFuture() {
            return new CompletableFuture<>();
        }
    }

    /** @return the base URL, without a trailing slash */
    public String baseUrl() {
        return baseUrl;
    }

    /** @return retries of a failed call */
    public int maxRetries() {
        return maxRetries;
    }

    /** @return the idle timeout */
    public Duration timeout() {
        return timeout;
    }

    /** @return the size from which uploads are resumable */
    public long resumableThreshold() {
        return resumableThreshold;
    }

    /** @return the chunk size of resumable uploads */
    public int chunkSize() {
        return chunkSize;
    }

    /** Stops the thread pool of the {@code *Async} calls (calls in flight finish). */
    @Override
    public void close() {
        if (ownExecutor != null) ownExecutor.shutdown();
    }

    /** @return the settings, with the key redacted */
    @Override
    public String toString() {
        return "FileshareClient{baseUrl=" + baseUrl + ", apiKey=[redacted], maxRetries=" + maxRetries + ", timeout=" + timeout + "}";
    }

    /** Unwraps the {@link FileshareException} of a failed {@code *Async} call's {@link CompletionException}. */
    static Throwable unwrap(Throwable error) {
        return error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
    }

    /** Builds a {@link FileshareClient}. */
    public static final class Builder {
        private String baseUrl;
        private String apiKey;
        private int maxRetries = DEFAULT_MAX_RETRIES;
        private Duration timeout = DEFAULT_TIMEOUT;
        private long resumableThreshold = DEFAULT_RESUMABLE_THRESHOLD;
        private int chunkSize = DEFAULT_CHUNK_SIZE;
        private HttpClient httpClient;
        private java.util.concurrent.Executor executor;
        Function<String, String> env;
        Retry.Sleeper sleeper;
        DoubleSupplier random;
        Clock clock;
        System.Logger logger;

        private Builder() {}

        /**
         * @param baseUrl ends in {@code /api/v1}, e.g. {@code https://files.example.com/api/v1}
         *     (default: {@code FILESHARE_BASE_URL})
         * @return this builder
         */
        public Builder baseUrl(String baseUrl) {
            this.baseUrl = baseUrl;
            return this;
        }

        /**
         * @param apiKey {@code fsk_…} (default: {@code FILESHARE_API_KEY})
         * @return this builder
         */
        public Builder apiKey(String apiKey) {
            this.apiKey = apiKey;
            return this;
        }

        /**
         * @param maxRetries retries of a call that failed with 429, 500, 502, 503, 504, 409
         *     {@code idempotency_in_progress} or no connection (default 2), after {@code Retry-After}
         *     or an exponential backoff. A {@code Retry-After} over 60 s is thrown at once
         *     ({@link FileshareException#retryAfter()}), never slept through
         * @return this builder
         */
        public Builder maxRetries(int maxRetries) {
            this.maxRetries = RequestOptions.checkRetries(maxRetries);
            return this;
        }

        /**
         * @param timeout idle timeout for connecting and for each stretch without a byte sent or
         *     received (default 60 s); never a deadline for a whole transfer. {@link Duration#ZERO}: none
         * @return this builder
         */
        public Builder timeout(Duration timeout) {
            this.timeout = RequestOptions.checkTimeout(timeout);
            return this;
        }

        /**
         * @param bytes sources of at least this size use resumable uploads when the server offers them (default 64 MiB)
         * @return this builder
         */
        public Builder resumableThreshold(long bytes) {
            if (bytes < 0) throw new ConfigurationException("resumableThreshold must not be negative");
            this.resumableThreshold = bytes;
            return this;
        }

        /**
         * @param bytes chunk size of resumable uploads (default 16 MiB); keep it below the body
         *     limits of proxies on the way
         * @return this builder
         */
        public Builder chunkSize(int bytes) {
            if (bytes <= 0) throw new ConfigurationException("chunkSize must be positive");
            this.chunkSize = bytes;
            return this;
        }

        /**
         * @param httpClient a {@link HttpClient} of your own (proxy, TLS settings); it should use
         *     HTTP/1.1 for plain-http servers. Default: one the client builds
         * @return this builder
         */
        public Builder httpClient(HttpClient httpClient) {
            this.httpClient = httpClient;
            return this;
        }

        /**
         * @param executor runs the {@code *Async} calls (default: a pool the client owns and
         *     {@link FileshareClient#close() closes})
         * @return this builder
         */
        public Builder executor(java.util.concurrent.Executor executor) {
            this.executor = executor;
            return this;
        }

        /**
         * @return the client
         * @throws ConfigurationException without a base URL or key, or with an invalid one
         */
        public FileshareClient build() {
            return new FileshareClient(this);
        }
    }
}
