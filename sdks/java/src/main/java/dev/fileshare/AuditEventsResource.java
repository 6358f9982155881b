package dev.fileshare;

import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;

/**
 * The account's audit log: {@link #list list} one page, {@link #iterate iterate} every event. Obtain
 * it with {@link FileshareClient#auditEvents()}. Needs a key with the scope {@code audit:read}
 * (else {@link InsufficientScopeException}). Thread-safe.
 *
 * <pre>{@code
 * for (AuditEvent e : client.auditEvents().iterate(AuditEventListParams.builder().action("file.deleted").build())) {
 *     System.out.println(e.at() + " " + e.actor().type() + " " + e.actor().name() + " deleted " + e.details().get("filename"));
 * }
 * }</pre>
 */
public final class AuditEventsResource {
    /** Events per request of {@link #iterate()} and of {@link #iterate(AuditEventListParams)} without a limit. */
    static final int ITERATE_LIMIT = 100;

    private final Transport transport;

    AuditEventsResource(Transport transport) {
        this.transport = transport;
    }

    /**
     * One page of events, newest first.
     *
     * <pre>{@code
     * AuditEventList page = client.auditEvents().list(AuditEventListParams.builder().limit(50).build());
     * while (page.pagination().nextBeforeId() != null) {
     *     page = client.auditEvents().list(AuditEventListParams.builder().limit(50)
     *             .beforeId(page.pagination().nextBeforeId()).build());
     * }
     * }</pre>
     *
     * @param params limit, beforeId, action, since (null: none)
     * @return the events and the pagination
     * @throws InsufficientScopeException 403 {@code insufficient_scope}: the key lacks {@code audit:read}
     * @throws BadRequestException 400 {@code invalid_parameter} for a value out of range
     */
    public AuditEventList list(AuditEventListParams params) {
        AuditEventListParams p = params == null ? AuditEventListParams.none() : params;
        return page(p, null, null);
    }

    /**
     * The newest page, of the server's default size (20).
     *
     * @return the events and the pagination
     */
    public AuditEventList list() {
        return list(AuditEventListParams.none());
    }

    private AuditEventList page(AuditEventListParams params, Long beforeId, Integer limit) {
        var query = params.query(beforeId, limit);
        return Json.auditEventList(transport.requestJson(
                () -> transport.request(transport.url("/audit-events", query), true).GET().build()).body());
    }

    /**
     * Every event that matches {@code params}, newest first, fetched lazily a page at a time: the
     * first page, then each next one by {@code before_id} (the server's {@code next_before_id}) until
     * it is null. No event is skipped or yielded twice; events recorded during the iteration are newer
     * than where it stands and are not yielded. Each call of {@link Iterable#iterator()} starts again.
     *
     * @param params the page size (default 100 here), action, since; a {@code beforeId} starts the
     *     iteration below that id (null: every event)
     * @return the events, newest first
     */
    public AutoPagingIterable<AuditEvent> iterate(AuditEventListParams params) {
        AuditEventListParams p = params == null ? AuditEventListParams.none() : params;
        Integer limit = p.limit() != null ? p.limit() : ITERATE_LIMIT;
        return () -> new Iterator<>() {
            private List<AuditEvent> current = List.of();
            private int index;
            private boolean more = true;
            /** The next request's {@code before_id} (null: the params' own, for the first page). */
            private Long beforeId;

            @Override
            public boolean hasNext() {
                while (index >= current.size()) {
                    if (!more) return false;
                    fetch();
                }
                return true;
            }

            private void fetch() {
                AuditEventList page = page(p, beforeId, limit);
                Long after = page.pagination().nextBeforeId();
                Long asked = beforeId != null ? beforeId : p.beforeId();
                if (after != null && asked != null && after >= asked) {
                    throw new FileshareException("the server's next_before_id " + after + " does not go below " + asked);
                }
                beforeId = after;
                more = after != null;
                current = page.events();
                index = 0;
            }

            @Override
            public AuditEvent next() {
                if (!hasNext()) throw new NoSuchElementException();
                return current.get(index++);
            }
        };
    }

    /**
     * {@link #iterate(AuditEventListParams)} of every event, 100 a request.
     *
     * @return the events, newest first
     */
    public AutoPagingIterable<AuditEvent> iterate() {
        return iterate(AuditEventListParams.none());
    }
}
