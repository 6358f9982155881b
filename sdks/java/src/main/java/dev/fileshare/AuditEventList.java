package dev.fileshare;

import java.util.List;

/**
 * One page of the audit log, newest first: {@link AuditEventsResource#list(AuditEventListParams)}.
 *
 * @param events the events of this page (unmodifiable)
 * @param pagination where this page stands
 */
public record AuditEventList(List<AuditEvent> events, AuditEventPagination pagination) {
    /**
     * Keeps {@code events} unmodifiable.
     *
     * @param events the events of this page
     * @param pagination where this page stands
     */
    public AuditEventList {
        events = List.copyOf(events);
    }
}
