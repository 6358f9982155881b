package dev.fileshare;

import java.lang.System.Logger.Level;
import java.net.URI;
import java.util.Locale;
import java.util.function.Supplier;

/**
 * The SDK's logging, through {@link System.Logger} {@code dev.fileshare} (routed by whatever
 * backend the application set up: java.util.logging by default, SLF4J or Log4j through their
 * {@code System.LoggerFinder} bridges). Off unless {@code FILESHARE_LOG} (or the system property
 * {@code fileshare.log}) is {@code info} (retries, kept uploads) or {@code debug} (every request and
 * answer too). Lines name the method, the URL without its query, the status and the request id:
 * never a header, so never the key.
 */
final class Log {
    static final String NAME = "dev.fileshare";
    static final Log OFF = new Log(null, 0);

    private final System.Logger logger;
    /** 0: off, 1: info, 2: debug. */
    private final int verbosity;

    Log(System.Logger logger, int verbosity) {
        this.logger = logger;
        this.verbosity = logger == null ? 0 : verbosity;
    }

    /** From {@code FILESHARE_LOG} / {@code fileshare.log}: {@code debug}, {@code info}, anything else off. */
    static Log fromSetting(String setting, System.Logger logger) {
        String s = setting == null ? "" : setting.trim().toLowerCase(Locale.ROOT);
        int verbosity = s.equals("debug") ? 2 : s.equals("info") ? 1 : 0;
        if (verbosity == 0) return OFF;
        return new Log(logger != null ? logger : System.getLogger(NAME), verbosity);
    }

    boolean debugEnabled() {
        return verbosity >= 2;
    }

    /** A debug line; logged at DEBUG when the backend shows DEBUG, else at INFO (so FILESHARE_LOG=debug alone shows it). */
    void debug(Supplier<String> message) {
        if (verbosity < 2) return;
        logger.log(logger.isLoggable(Level.DEBUG) ? Level.DEBUG : Level.INFO, message);
    }

    void info(Supplier<String> message) {
        if (verbosity < 1) return;
        logger.log(Level.INFO, message);
    }

    /**
     * A request's URL as it may be logged: an API request's without its query; a link's or a
     * grant's (sent without the key: their path is the secret) with only the path's first segment.
     */
    static String safe(java.net.http.HttpRequest request) {
        URI uri = request.uri();
        if (request.headers().firstValue("Authorization").isPresent() || uri.getRawPath() == null) return safe(uri);
        String path = uri.getRawPath();
        int second = path.indexOf('/', 1);
        return safe(uri).replace(path, second < 0 ? "/…" : path.substring(0, second) + "/…");
    }

    /** A URL as it may be logged: scheme, host, port and path, no query. */
    static String safe(URI uri) {
        if (uri == null) return "?";
        String port = uri.getPort() < 0 ? "" : ":" + uri.getPort();
        return uri.getScheme() + "://" + uri.getHost() + port + (uri.getRawPath() == null ? "" : uri.getRawPath());
    }
}
