package dev.fileshare;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * One HTTP exchange at a time: headers, the idle timeout (connect, bytes sent, bytes received;
 * never a deadline for a whole transfer), error mapping, and JSON calls with retries.
 */
final class Transport {
    /** The last moment bytes moved, for the idle timeout. */
    static final class Activity {
        private volatile long last = System.nanoTime();

        void touch() {
            last = System.nanoTime();
        }

        long idleNanos() {
            return System.nanoTime() - last;
        }
    }

    /** A JSON answer. */
    record Result(int status, HttpHeaders headers, JsonNode body) {
        String header(String name) {
            return headers.firstValue(name).orElse(null);
        }
    }

    /** The last answer of a call made through {@link FileshareClient#withRawResponse}, per thread. */
    static final class Capture {
        int status;
        HttpHeaders headers;
        URI uri;
        String method;
    }

    private static final ThreadLocal<Capture> CAPTURE = new ThreadLocal<>();

    final String baseUrl;
    final Duration timeout;
    final Retry retry;
    final HttpClient http;
    final Log log;
    /** Extra headers of every request (per-call or {@code withOptions}). */
    final Map<String, String> extraHeaders;
    /** The {@code Idempotency-Key} of this transport's creating calls, or null: one per call. */
    final String idempotencyKey;
    private final String apiKey;
    private volatile HttpClient withoutRedirects;

    Transport(String baseUrl, String apiKey, Duration timeout, Retry retry, HttpClient http) {
        this(baseUrl, apiKey, timeout, retry, http, Log.OFF, Map.of(), null);
    }

    Transport(String baseUrl, String apiKey, Duration timeout, Retry retry, HttpClient http, Log log,
              Map<String, String> extraHeaders, String idempotencyKey) {
        this.baseUrl = baseUrl;
        this.apiKey = apiKey;
        this.timeout = timeout;
        this.retry = retry;
        this.http = http;
        this.log = log;
        this.extraHeaders = extraHeaders;
        this.idempotencyKey = idempotencyKey;
    }

    /** A transport with {@code options} over this one's settings (the same HTTP client and key). */
    Transport with(RequestOptions options) {
        if (options == null) return this;
        Duration t = options.timeout() != null ? options.timeout() : timeout;
        Retry r = options.maxRetries() != null ? retry.withMaxRetries(options.maxRetries()) : retry;
        Map<String, String> headers = new java.util.LinkedHashMap<>(extraHeaders);
        headers.putAll(options.headers());
        String key = options.idempotencyKey() != null ? options.idempotencyKey() : idempotencyKey;
        return new Transport(baseUrl, apiKey, t, r, http, log, Map.copyOf(headers), key);
    }

    /** The key of a creating call: the call's own, else this transport's, else a new one. */
    String idempotencyKeyFor(String callsOwn) {
        return IdempotencyKey.forCall(callsOwn != null ? callsOwn : idempotencyKey);
    }

    /** Whether a creating call's key is the caller's own (given to the call or to its options). */
    boolean ownIdempotencyKey(String callsOwn) {
        return callsOwn != null || idempotencyKey != null;
    }

    /** Runs {@code call} recording the last answer this thread receives; see {@link RawResponse}. */
    static <T> RawResponse<T> capturing(Supplier<T> call) {
        Capture previous = CAPTURE.get();
        Capture capture = new Capture();
        CAPTURE.set(capture);
        try {
            T value = call.get();
            if (capture.headers == null) throw new FileshareException("the call received no answer to show");
            return new RawResponse<>(capture.status, capture.headers, capture.method, capture.uri, value);
        } finally {
            if (previous == null) CAPTURE.remove();
            else CAPTURE.set(previous);
        }
    }

    URI url(String path) {
        return URI.create(baseUrl + path);
    }

    /** The URL of {@code path} with the parameters that are not null; a collection is sent as the name repeated, once per value. */
    URI url(String path, Map<String, ?> query) {
        StringBuilder sb = new StringBuilder(baseUrl).append(path);
        char sep = '?';
        for (Map.Entry<String, ?> e : query.entrySet()) {
            if (e.getValue() == null) continue;
            Collection<?> values = e.getValue() instanceof Collection<?> many ? many : List.of(e.getValue());
            for (Object value : values) {
                sb.append(sep).append(URLEncoder.encode(e.getKey(), StandardCharsets.UTF_8)).append('=')
                        .append(URLEncoder.encode(String.valueOf(value), StandardCharsets.UTF_8));
                sep = '&';
            }
        }
        return URI.create(sb.toString());
    }

    /** A request with the SDK's headers; {@code auth} adds the key (never for public links). */
    HttpRequest.Builder request(URI uri, boolean auth) {
        HttpRequest.Builder builder = HttpRequest.newBuilder(uri)
                .header("User-Agent", Version.USER_AGENT)
                .header("Accept", "application/json");
        extraHeaders.forEach(builder::header);
        if (auth) builder.header("Authorization", "Bearer " + apiKey);
        return builder;
    }

    /**
     * One attempt. Returns any response (errors too) with its body still to read. Gives up when
     * nothing moved (no byte of the request body taken, no answer) for the timeout.
     */
    HttpResponse<InputStream> send(HttpRequest request, Activity activity) {
        return send(http, request, activity);
    }

    /** {@link #send(HttpRequest, Activity)} through another client (see {@link #withoutRedirects()}). */
    HttpResponse<InputStream> send(HttpClient client, HttpRequest request, Activity activity) {
        Activity clock = activity == null ? new Activity() : activity;
        long started = System.nanoTime();
        log.debug(() -> request.method() + " " + Log.safe(request));
        CompletableFuture<HttpResponse<InputStream>> future =
                client.sendAsync(request, IdleTimeoutBody.handler(timeout, clock::touch));
        long limit = timeout.toNanos();
        try {
            while (true) {
                try {
                    HttpResponse<InputStream> response = limit <= 0 ? future.get() : future.get(Math.max(1, limit - clock.idleNanos()), TimeUnit.NANOSECONDS);
                    clock.touch();
                    log.debug(() -> request.method() + " " + Log.safe(request) + " -> " + response.statusCode() + " in "
                            + (System.nanoTime() - started) / 1_000_000 + " ms"
                            + response.headers().firstValue("x-request-id").map(id -> " (request id " + id + ")").orElse(""));
                    Capture capture = CAPTURE.get();
                    if (capture != null) {
                        capture.status = response.statusCode();
                        capture.headers = response.headers();
                        capture.uri = request.uri();
                        capture.method = request.method();
                    }
                    return response;
                } catch (TimeoutException e) {
                    if (clock.idleNanos() >= limit) {
                        future.cancel(true);
                        throw Errors.idle(timeout);
                    }
                }
            }
        } catch (ExecutionException | CompletionException | CancellationException e) {
            FileshareException error = translate(e.getCause() == null ? e : e.getCause());
            log.debug(() -> request.method() + " " + Log.safe(request) + " failed: " + error.getMessage());
            throw error;
        } catch (InterruptedException e) {
            future.cancel(true);
            Thread.currentThread().interrupt();
            throw new FileshareException("interrupted", e);
        }
    }

    /** A failure of the HTTP client (or of reading a body) as the exception to throw. */
    FileshareException translate(Throwable error) {
        Throwable e = error;
        while ((e instanceof CompletionException || e instanceof ExecutionException) && e.getCause() != null) e = e.getCause();
        if (e instanceof FileshareException f) return f;
        for (Throwable c = e; c != null; c = c.getCause()) {
            if (c instanceof PullPublisher.SourceException source) {
                return new FileshareException(source.getMessage(), source.getCause() == null ? source : source.getCause());
            }
            if (c == c.getCause()) break;
        }
        if (e instanceof IdleTimeoutBody.IdleTimeoutException) return Errors.idle(timeout);
        if (e instanceof HttpConnectTimeoutException) return Errors.connectTimeout(timeout, e);
        if (e instanceof java.io.InterruptedIOException && Thread.currentThread().isInterrupted()) {
            return new FileshareException("interrupted", e);
        }
        if (e instanceof IOException || e instanceof CancellationException) {
            String detail = e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName();
            if (e.getCause() != null && e.getCause().getMessage() != null && !detail.contains(e.getCause().getMessage())) {
                detail += " (" + e.getCause().getMessage() + ")";
            }
            return Errors.connection("connection failed: " + detail, e);
        }
        return new FileshareException("request failed: " + e, e);
    }

    /** Reads a whole (small) body as text under the idle timeout. */
    String readText(HttpResponse<InputStream> response) {
        try (InputStream in = response.body()) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw translate(e);
        }
    }

    /** Discards a body, closing the stream (the connection is not reused if bytes are left). */
    static void discard(HttpResponse<InputStream> response) {
        try {
            response.body().close();
        } catch (IOException ignored) {
            // nothing to do
        }
    }

    /** One attempt that throws the mapped error for a non-2xx answer. */
    Result exchangeJson(HttpRequest request, Activity activity) {
        HttpResponse<InputStream> response = send(request, activity);
        String text = readText(response);
        int status = response.statusCode();
        if (status < 200 || status > 299) throw Errors.fromResponse(status, response.headers(), text);
        JsonNode body = null;
        if (!text.isBlank()) {
            try {
                body = Json.MAPPER.readTree(text);
            } catch (IOException e) {
                String requestId = response.headers().firstValue("x-request-id").orElse(null);
                throw new FileshareException(status + ": the answer is not JSON",
                        new FileshareException.ErrorDetails(status, null, requestId, null, null, response.headers(), null), e);
            }
        }
        return new Result(status, response.headers(), body);
    }

    /** A call whose request can be sent again (GET, DELETE, ...), with retries. */
    Result requestJson(Supplier<HttpRequest> request) {
        return retry.run(attempt -> exchangeJson(request.get(), null));
    }

    /**
     * A call with the key and a JSON body ({@code null}: none; a map's null values are sent as JSON
     * nulls), retried where {@code canRetry} allows.
     */
    Result callJson(String method, URI uri, Object body, Predicate<FileshareException> canRetry) {
        return callJson(method, uri, body, null, canRetry);
    }

    /**
     * {@link #callJson(String, URI, Object, Predicate)} with an {@code Idempotency-Key} (null: none),
     * the same on every attempt.
     */
    Result callJson(String method, URI uri, Object body, String idempotencyKey, Predicate<FileshareException> canRetry) {
        String json = body == null ? null : Json.write(body);
        return retry.run(attempt -> {
            HttpRequest.Builder b = request(uri, true);
            if (json != null) b.header("Content-Type", "application/json");
            if (idempotencyKey != null) b.header(IdempotencyKey.HEADER, idempotencyKey);
            HttpRequest.BodyPublisher publisher = json == null
                    ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofString(json, StandardCharsets.UTF_8);
            return exchangeJson(b.method(method, publisher).build(), null);
        }, canRetry);
    }

    /**
     * The HTTP client, or a copy of it that never follows redirects when the caller's own client
     * does: a {@code 303} to a download grant must reach the SDK, not be followed by the library.
     */
    HttpClient withoutRedirects() {
        if (http.followRedirects() == HttpClient.Redirect.NEVER) return http;
        HttpClient copy = withoutRedirects;
        if (copy == null) {
            HttpClient.Builder b = HttpClient.newBuilder()
                    .followRedirects(HttpClient.Redirect.NEVER)
                    .version(http.version())
                    .sslContext(http.sslContext())
                    .sslParameters(http.sslParameters());
            http.proxy().ifPresent(b::proxy);
            http.authenticator().ifPresent(b::authenticator);
            http.cookieHandler().ifPresent(b::cookieHandler);
            http.connectTimeout().ifPresent(b::connectTimeout);
            http.executor().ifPresent(b::executor);
            withoutRedirects = copy = b.build();
        }
        return copy;
    }

    @Override
    public String toString() {
        return "Transport[" + baseUrl + "]";
    }
}
