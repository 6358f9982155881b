package dev.fileshare;

import java.time.OffsetDateTime;
import java.util.Map;

/**
 * One event of the account's audit log ({@code GET /audit-events}): something that changed, who
 * did it and from where. Reads are not audited. Listed by {@link AuditEventsResource}.
 *
 * @param eventId positive and increasing: a later event has a larger id
 * @param at UTC, {@code YYYY-MM-DD HH:MM:SS}; see {@link #atTime()}
 * @param action what happened, e.g. {@code file.uploaded}, {@code file.updated}, {@code file.deleted},
 *     {@code link.created}, {@code link.revoked}, {@code key.created}, {@code session.signed_in},
 *     {@code upload_request.created}, {@code upload_request.updated}, {@code upload_request.closed},
 *     {@code upload_request.deleted}, {@code scan.infected} (the virus scanner found malware and the
 *     file was removed: actor {@code system}, target the file, details {@code filename}, {@code size},
 *     {@code signature})
 * @param actor who did it
 * @param ip the address it came from, truncated by default (IPv4 to its /24, IPv6 to its /48), or
 *     null when the server records none
 * @param userAgent the client's {@code User-Agent} (at most 200 characters), or null
 * @param target what it was done to, or null
 * @param details a small object about the event (e.g. {@code filename}, {@code size}), never a
 *     secret; empty when there is nothing to add (unmodifiable)
 * @param extra fields of the API's object this SDK does not know yet (never null)
 */
public record AuditEvent(
        long eventId,
        String at,
        String action,
        Actor actor,
        String ip,
        String userAgent,
        Target target,
        Map<String, Object> details,
        Map<String, Object> extra) {

    /**
     * Keeps {@code details} and {@code extra} unmodifiable and never null.
     *
     * @param eventId positive and increasing
     * @param at UTC, {@code YYYY-MM-DD HH:MM:SS}
     * @param action what happened
     * @param actor who did it
     * @param ip the address it came from, or null
     * @param userAgent the client's {@code User-Agent}, or null
     * @param target what it was done to, or null
     * @param details a small object about the event (never null)
     * @param extra fields this SDK does not know yet (never null)
     */
    public AuditEvent {
        details = Json.copyExtra(details);
        extra = Json.copyExtra(extra);
    }

    /**
     * {@link #at()} as a date-time in UTC.
     *
     * @return when it happened (offset {@code Z}), or null if the API's value cannot be read
     */
    public OffsetDateTime atTime() {
        return ApiTime.parse(at);
    }

    /**
     * Who did it.
     *
     * @param type {@code key} (an API key), {@code session} (the dashboard), {@code operator} (the
     *     CLI), {@code public} (someone with a link), {@code guest} (someone who sent a file through an
     *     upload request: the {@code file.uploaded} of its files) or {@code system} (the server itself,
     *     e.g. an expiry)
     * @param id the key's or account's id; for {@code guest}, the upload request's id; or null
     * @param name the key's name or the account's e-mail, when known; else null
     */
    public record Actor(String type, Long id, String name) {}

    /**
     * What an event was done to.
     *
     * @param type e.g. {@code file}, {@code link}, {@code key}, {@code webhook}
     * @param id its id, or null
     */
    public record Target(String type, Long id) {}
}
