package dev.fileshare;

final class TestKeys {
    private TestKeys() {}

    /** A well-formed key the fake servers accept; never a real one. */
    static final String FAKE_KEY = "fsk_TESTtestTESTtestTESTtestTESTtestTESTtest123";
}
