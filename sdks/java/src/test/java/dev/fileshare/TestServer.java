package dev.fileshare;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * The real server for the integration tests, started once per JVM through the shared launcher
 * ({@code node sdks/launcher/launch-server.mjs}); stopped by closing the launcher's stdin when the
 * JVM exits.
 */
final class TestServer {
    final String baseUrl;
    final String serverUrl;
    final JsonNode info;
    private final Process process;

    private static TestServer instance;

    private TestServer(Process process, JsonNode info) {
        this.process = process;
        this.info = info;
        this.baseUrl = info.get("base_url").asText();
        this.serverUrl = info.get("server_url").asText();
    }

    static Path repoRoot() {
        Path dir = Path.of("").toAbsolutePath();
        for (Path p = dir; p != null; p = p.getParent()) {
            if (Files.isRegularFile(p.resolve("sdks/launcher/launch-server.mjs"))) return p;
        }
        throw new IllegalStateException("cannot find sdks/launcher/launch-server.mjs above " + dir);
    }

    static synchronized TestServer get() {
        if (instance != null) return instance;
        Path root = repoRoot();
        if (!Files.isRegularFile(root.resolve("dist/server.js"))) {
            throw new IllegalStateException("dist/server.js is missing: run `npm run build` at the repository root");
        }
        try {
            ProcessBuilder pb = new ProcessBuilder("node", root.resolve("sdks/launcher/launch-server.mjs").toString())
                    .directory(root.toFile())
                    .redirectError(logFile());
            Process process = pb.start();
            BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
            String line = out.readLine();
            if (line == null) {
                process.waitFor(10, TimeUnit.SECONDS);
                throw new IllegalStateException("the launcher printed nothing (exit " + (process.isAlive() ? "?" : process.exitValue())
                        + "); see " + logFile().file());
            }
            JsonNode info = Json.MAPPER.readTree(line);
            instance = new TestServer(process, info);
            Runtime.getRuntime().addShutdownHook(new Thread(instance::stop, "stop-launcher"));
            return instance;
        } catch (IOException e) {
            throw new IllegalStateException("cannot start the launcher: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static ProcessBuilder.Redirect logFile() {
        String path = System.getProperty("fileshare.launcherLog");
        if (path == null) return ProcessBuilder.Redirect.INHERIT;
        return ProcessBuilder.Redirect.appendTo(new File(path));
    }

    String key(String account) {
        return info.get("keys").get(account).asText();
    }

    FileshareClient.Builder client(String account) {
        return FileshareClient.builder().baseUrl(baseUrl).apiKey(key(account));
    }

    /** An account made with the CLI: its id (for {@code account set-limits}) and its API key. */
    record Account(long id, String key) {}

    /**
     * Another account on this server, made with the {@code fileshare} CLI as the launcher makes its
     * own (the launcher's accounts are shared by all four SDK suites, so their names are fixed).
     *
     * @return the new account's API key
     */
    String createAccount(String name, String plan) {
        return account(name, plan).key();
    }

    /** {@link #createAccount(String, String)}, with the account's id. */
    Account account(String name, String plan) {
        JsonNode created = cli("account", "create", "--email", name + "-" + System.nanoTime() + "@sdk-tests.invalid", "--plan", plan, "--json");
        return new Account(created.get("account_id").asLong(), created.get("api_key").asText());
    }

    /** {@code fileshare account set-limits ID FLAGS...}, e.g. {@code "--max-storage", "1000"}. */
    void setLimits(long accountId, String... flags) {
        String[] args = new String[flags.length + 4];
        args[0] = "account";
        args[1] = "set-limits";
        args[2] = Long.toString(accountId);
        System.arraycopy(flags, 0, args, 3, flags.length);
        args[args.length - 1] = "--json";
        cli(args);
    }

    /**
     * A new API key of an account ({@code fileshare key create}). The server caches what it learns
     * of a key (its account's limits too) for {@code FILESHARE_CACHE_TTL_MS}, 4 s: a new key sees
     * limits just set with {@link #setLimits} at once.
     */
    String newKey(long accountId) {
        return cli("key", "create", Long.toString(accountId), "--json").get("api_key").asText();
    }

    /** A new API key of an account with options of {@code fileshare key create}, e.g. {@code "--scopes", "files:write"}. */
    String newKey(long accountId, String... options) {
        String[] args = new String[options.length + 4];
        args[0] = "key";
        args[1] = "create";
        args[2] = Long.toString(accountId);
        System.arraycopy(options, 0, args, 3, options.length);
        args[args.length - 1] = "--json";
        return cli(args).get("api_key").asText();
    }

    /** Runs the {@code fileshare} CLI on this server's data; returns the JSON of its last line of output. */
    private JsonNode cli(String... args) {
        Path root = repoRoot();
        java.util.List<String> command = new java.util.ArrayList<>(java.util.List.of("node", root.resolve("bin/fileshare.js").toString()));
        command.addAll(java.util.List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command).directory(root.toFile()).redirectError(logFile());
        pb.environment().remove("FILESHARE_DATABASE_URL");
        pb.environment().remove("FILESHARE_REDIS_URL");
        pb.environment().put("FILESHARE_DATA_DIR", info.get("data_dir").asText());
        pb.environment().put("FILESHARE_PUBLIC_URL", serverUrl);
        pb.environment().put("FILESHARE_LOG_LEVEL", "warn");
        String what = "fileshare " + args[0] + " " + args[1];
        try {
            Process p = pb.start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IllegalStateException(what + " failed; see " + logFile().file());
            }
            return Json.MAPPER.readTree(out.substring(out.lastIndexOf('\n') + 1));
        } catch (IOException e) {
            throw new IllegalStateException("cannot run " + what + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private void stop() {
        try {
            process.getOutputStream().close(); // the launcher stops the server and removes its data
            if (!process.waitFor(20, TimeUnit.SECONDS)) process.destroy();
        } catch (IOException | InterruptedException e) {
            process.destroy();
        }
    }
}
