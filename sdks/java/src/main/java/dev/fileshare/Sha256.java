package dev.fileshare;

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

    static String base64(byte[] data, int offset, int length) {
        MessageDigest d = newDigest();
        d.update(data, offset, length);
        return Base64.getEncoder().encodeToString(d.digest());
    }
}
