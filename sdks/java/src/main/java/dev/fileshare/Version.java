package dev.fileshare;

/** The SDK's version and user agent. */
final class Version {
    private Version() {}

    /** Matches the pom's version; a test checks it. */
    static final String VERSION = "0.2.0";
    static final String USER_AGENT = "fileshare-sdk-java/" + VERSION;
}
