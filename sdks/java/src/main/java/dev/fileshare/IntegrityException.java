package dev.fileshare;

/**
 * The bytes do not match their SHA-256: an upload whose stored {@code sha256} differs from the
 * bytes sent, or a download whose bytes differ from the link's {@code ETag}.
 */
public class IntegrityException extends FileshareException {
    private static final long serialVersionUID = 1L;

    /** The expected SHA-256. */
    private final String expected;
    /** The SHA-256 of the bytes. */
    private final String actual;

    IntegrityException(String message, String expected, String actual) {
        super(message);
        this.expected = expected;
        this.actual = actual;
    }

    /** @return the SHA-256 (hex) the SDK expected: the server's, or the link's ETag */
    public String expected() {
        return expected;
    }

    /** @return the SHA-256 (hex) of the bytes the SDK sent or received */
    public String actual() {
        return actual;
    }
}
