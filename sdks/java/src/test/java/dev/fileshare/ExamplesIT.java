package dev.fileshare;

import static org.junit.jupiter.api.Assertions.*;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The examples run as users run them: {@code java -cp <sdk and jackson> examples/X.java}, configured by the environment. */
class ExamplesIT {
    /** The SDK's classes and Jackson (run-tests.sh passes them; else build/classes and Debian's jars). */
    static String sdkClasspath() {
        String cp = System.getProperty("fileshare.sdkClasspath");
        if (cp != null) return cp;
        return String.join(File.pathSeparator, "build/classes", "/usr/share/java/jackson-databind.jar",
                "/usr/share/java/jackson-core.jar", "/usr/share/java/jackson-annotations.jar");
    }

    @ParameterizedTest
    @ValueSource(strings = {"QuickStart", "ResumableUpload", "ErrorHandling", "AsyncCalls", "SharingLinks", "InspectAndTune", "KeysAndAudit",
            "WebhookReceiver"})
    void runs(String example) throws Exception {
        TestServer server = TestServer.get();
        String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        // QuickStart runs as the README says, a single source file; the others from the classes
        // run-tests.sh compiled against the jar (the same code, without a compiler start each).
        String compiled = System.getProperty("fileshare.examplesClasses");
        ProcessBuilder pb = compiled == null || example.equals("QuickStart")
                ? new ProcessBuilder(javaBin, "-Xshare:auto", "-cp", sdkClasspath(), "examples/" + example + ".java")
                : new ProcessBuilder(javaBin, "-Xshare:auto", "-cp", sdkClasspath() + File.pathSeparator + compiled, example);
        pb.redirectErrorStream(true);
        pb.environment().put("FILESHARE_BASE_URL", server.baseUrl);
        pb.environment().put("FILESHARE_API_KEY", server.key("pro"));
        Process p = pb.start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        assertEquals(0, p.exitValue(), output);
        assertFalse(output.contains(server.key("pro")), "the key never shows");
        List<String> expected = switch (example) {
            case "QuickStart" -> List.of("uploaded quickstart-", "downloaded ", "plan pro", "quota 107374182400 bytes", "deleted file");
            case "ResumableUpload" -> List.of("server offers resumable uploads: true", "stored 3145728 bytes");
            case "ErrorHandling" -> List.of("not found: status 404, code not_found");
            case "InspectAndTune" -> List.of("status 200, requests left: ", "plan pro, requests left: ", "the copy retries 5 times, the client 2",
                    "gone: 404 not_found, request id header true");
            case "SharingLinks" -> List.of("without the password: invalid_password", "downloads now 1", "password removed: true, limit now 5",
                    "rotated: the old URL answers 404", ": revoked", "file expiry removed: true");
            case "KeysAndAudit" -> List.of("on the pro plan holds [files:read, files:write, files:delete, links:read, links:write, "
                    + "stats:read, webhooks:manage, requests:manage, audit:read], usable from anywhere", "uploaded, updated and deleted file ",
                    " file.deleted by key ", " file.updated by key ", " file.uploaded by key ");
            case "WebhookReceiver" -> List.of("receives [", "verified webhook.test msg_", ": webhook.test succeeded, last status 204",
                    "endpoint deleted");
            default -> List.of("uploaded note-0.txt", "files now: ");
        };
        for (String line : expected) assertTrue(output.contains(line), example + " printed:\n" + output);
        assertFalse(output.contains("requests left: -1"), "RateLimit-Remaining is on successful answers:\n" + output);
        assertTrue(new File("examples/" + example + ".java").isFile());
    }
}
