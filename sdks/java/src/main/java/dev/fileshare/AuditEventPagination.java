package dev.fileshare;

/**
 * Where a page of the audit log stands.
 *
 * @param limit the page size used
 * @param nextBeforeId the {@code before_id} of the next (older) page when more events follow, else
 *     null: pass it to {@link AuditEventListParams.Builder#beforeId(long)}
 */
public record AuditEventPagination(long limit, Long nextBeforeId) {}
