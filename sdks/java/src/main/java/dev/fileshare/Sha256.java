package dev.fileshare;

import java.io.IOException;
import java.io.InputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.HexFormat;

final class Sha256 {
    private Sha256() {}

    static MessageDigest newDigest() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }

    static String hex(byte[] digest) {
        return HexFormat.of().formatHex(digest);
    }

    /** The hex SHA-256 of a source read from its start (a path or bytes). */
    static String hex(UploadSource source) {
        MessageDigest d = newDigest();
        byte[] buffer = new byte[MultipartBodyPublisher.BUFFER_SIZE];
        try (InputStream in = source.open()) {
            for (int n; (n = in.read(buffer)) > 0; ) d.update(buffer, 0, n);
        } catch (IOException e) {
            throw new FileshareException("could not read the upload source: " + e.getMessage(), e);
        }
        return hex(d.digest());
    }

    static String base64(byte[] data, int offset, int length) {
        MessageDigest d = newDigest();
        d.update(data, offset, length);
        return Base64.getEncoder().encodeToString(d.digest());
    }
}
