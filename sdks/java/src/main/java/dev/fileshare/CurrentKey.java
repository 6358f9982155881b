package dev.fileshare;

import java.time.OffsetDateTime;
import java.util.List;
import java.util.Map;

/**
 * The API key the client uses, as {@code GET /key} describes it: {@link FileshareClient#key()}.
 * Which scopes it holds, where it may be used from, when it expires, and the account's plan.
 *
 * <pre>{@code
 * CurrentKey key = client.key();
 * if (!key.scopes().contains("files:delete")) System.out.println(key.name() + " cannot delete files");
 * }</pre>
 *
 * @param keyId the key's id
 * @param name the key's name, as given when it was made (may be null)
 * @param prefix the first characters of the key ({@code fsk_Ab12Cd}), to recognise it; never the key
 * @param scopes the scope names it holds, in the API's order ({@code files:read}, {@code files:write},
 *     {@code files:delete}, {@code links:read}, {@code links:write}, {@code stats:read},
 *     {@code webhooks:manage}, {@code requests:manage}, {@code audit:read}); all nine for a full key
 *     (unmodifiable)
 * @param allowedIps the addresses and CIDR ranges it may be used from; empty: anywhere (unmodifiable)
 * @param createdAt UTC, {@code YYYY-MM-DD HH:MM:SS}; see {@link #createdAtTime()}
 * @param expiresAt UTC, {@code YYYY-MM-DD HH:MM:SS}, when the key stops working, or null when it
 *     does not expire; see {@link #expiresAtTime()}
 * @param lastUsedAt UTC, {@code YYYY-MM-DD HH:MM:SS}, of its last use, or null; see {@link #lastUsedAtTime()}
 * @param plan the account's plan, lower case ({@code pro}, {@code business}, {@code enterprise})
 * @param extra fields of the answer (its {@code key} object, then the answer itself) this SDK does
 *     not know yet (never null)
 */
public record CurrentKey(
        long keyId,
        String name,
        String prefix,
        List<String> scopes,
        List<String> allowedIps,
        String createdAt,
        String expiresAt,
        String lastUsedAt,
        String plan,
        Map<String, Object> extra) {

    /**
     * Keeps the lists and {@code extra} unmodifiable and never null.
     *
     * @param keyId the key's id
     * @param name the key's name (may be null)
     * @param prefix the first characters of the key
     * @param scopes the scope names it holds
     * @param allowedIps the addresses and ranges it may be used from; empty: anywhere
     * @param createdAt UTC, {@code YYYY-MM-DD HH:MM:SS}
     * @param expiresAt when the key stops working (UTC, {@code YYYY-MM-DD HH:MM:SS}), or null
     * @param lastUsedAt its last use (UTC, {@code YYYY-MM-DD HH:MM:SS}), or null
     * @param plan the account's plan
     * @param extra fields this SDK does not know yet (never null)
     */
    public CurrentKey {
        scopes = scopes == null ? List.of() : List.copyOf(scopes);
        allowedIps = allowedIps == null ? List.of() : List.copyOf(allowedIps);
        extra = Json.copyExtra(extra);
    }

    /**
     * {@link #createdAt()} as a date-time in UTC.
     *
     * @return when the key was made (offset {@code Z}), or null if the API's value cannot be read
     */
    public OffsetDateTime createdAtTime() {
        return ApiTime.parse(createdAt);
    }

    /**
     * {@link #expiresAt()} as a date-time in UTC.
     *
     * @return when the key stops working (offset {@code Z}), or null when it does not expire
     */
    public OffsetDateTime expiresAtTime() {
        return ApiTime.parse(expiresAt);
    }

    /**
     * {@link #lastUsedAt()} as a date-time in UTC.
     *
     * @return the key's last use (offset {@code Z}), or null
     */
    public OffsetDateTime lastUsedAtTime() {
        return ApiTime.parse(lastUsedAt);
    }
}
