package dev.fileshare;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The version in the code, the manifest (pom.xml), the CHANGELOG and the README agree. */
class VersionTest {
    private static Path sdkDir() {
        String dir = System.getProperty("fileshare.sdkDir");
        return dir != null ? Path.of(dir) : Path.of("").toAbsolutePath(); // Maven runs tests in the module folder
    }

    @Test
    void theVersionMatchesTheManifest() throws Exception {
        String pom = Files.readString(sdkDir().resolve("pom.xml"));
        Matcher m = Pattern.compile("<artifactId>fileshare-sdk</artifactId>\\s*<version>([^<]+)</version>").matcher(pom);
        assertTrue(m.find(), "pom.xml names its version");
        assertEquals(m.group(1), Version.VERSION);
        assertEquals("fileshare-sdk-java/" + m.group(1), Version.USER_AGENT);
        assertTrue(Files.readString(sdkDir().resolve("CHANGELOG.md")).contains("## " + Version.VERSION), "CHANGELOG has the version");
        assertTrue(Files.readString(sdkDir().resolve("README.md")).contains("<version>" + Version.VERSION + "</version>"),
                "the README's dependency snippet has the version");
    }
}
