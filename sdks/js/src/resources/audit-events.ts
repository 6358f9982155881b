// client.auditEvents: the account's audit log (scope audit:read), newest first.
import { FileshareError } from '../errors.js'
import { call, type APIPromise } from '../api-promise.js'
import type { Http } from '../http.js'
import { formatSince, toAuditEventList } from '../records.js'
import type { AuditEvent, AuditEventIterateOptions, AuditEventList, AuditEventListOptions, RequestOptions } from '../types.js'
import { beforeIdOption } from './params.js'

export class AuditEvents {
  /** @internal */
  constructor(private readonly http: Http) {}

  /**
   * One page of the account's audit events, newest first (`limit` 1 to 100, default 20): the
   * events older than `before_id` (a page's `pagination.next_before_id`), of one `action`
   * (`file.deleted`) or family (`file.*`), at or after `since`. Needs the `audit:read` scope
   * (else an {@link InsufficientScopeError}); values the server refuses are a `BadRequestError`
   * (`invalid_parameter`).
   */
  list(options: AuditEventListOptions & RequestOptions = {}): APIPromise<AuditEventList> {
    return call(this.http, options, async (http) => {
      const query = {
        limit: options.limit,
        before_id: beforeIdOption(options),
        action: options.action,
        since: options.since === undefined ? undefined : formatSince(options.since),
      }
      const { data } = await http.request<Parameters<typeof toAuditEventList>[0]>({
        method: 'GET',
        url: http.url('/audit-events', query),
        signal: options.signal,
      })
      return toAuditEventList(data)
    })
  }

  /**
   * Every audit event that matches `action` and `since`, newest first, `limit` per request
   * (default 100), each page asked for with the `next_before_id` of the one before: events
   * written meanwhile shift nothing, and no event is yielded twice.
   */
  async *iterate(options: AuditEventIterateOptions & RequestOptions = {}): AsyncGenerator<AuditEvent, void, undefined> {
    const { limit = 100, before_id: _before, beforeId: _camel, ...rest } = options as AuditEventListOptions & RequestOptions
    let result = await this.list({ ...rest, limit })
    let below: number | undefined // the last event yielded: every later one is older
    let asked: number | undefined
    for (;;) {
      for (const event of result.events) {
        if (below !== undefined && event.event_id >= below) continue
        below = event.event_id
        yield event
      }
      const next = result.pagination.next_before_id
      if (next === null || next === undefined) return
      if (asked !== undefined && next >= asked) throw new FileshareError(`the server's next_before_id ${next} does not move past ${asked}`)
      asked = next
      result = await this.list({ ...rest, limit, before_id: next })
    }
  }
}
