// fshare audit [--action A] [--since DATE] [--limit N] [--before-id ID]: the account's audit log,
// newest first (scope audit:read).
import { integerOption, parseDuration } from '../args.js'
import type { Command } from '../command.js'
import { EXIT_OK, UsageError } from '../exit-codes.js'
import { printable, table } from '../output.js'
import { FileshareError } from '../../errors.js'
import type { AuditEvent } from '../../types.js'

/** What the server takes as `since`: `YYYY-MM-DD`, `YYYY-MM-DD HH:MM:SS`, `YYYY-MM-DDTHH:MM:SSZ` (UTC). */
const SINCE = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}:\d{2}Z?)?$/

/** `--since`: a UTC date or time as the server takes it, or a duration back from now (`7d`, `12h`). */
export function sinceOption(value: string | boolean | undefined, now = Date.now()): Date | string | undefined {
  if (value === undefined || typeof value === 'boolean') return undefined
  if (SINCE.test(value)) return value
  const seconds = /\d[smhdw]$/i.test(value.trim()) ? parseDuration(value) : undefined
  if (seconds !== undefined && Number.isSafeInteger(seconds) && seconds >= 1) return new Date(now - seconds * 1000)
  throw new UsageError(
    `--since must be a UTC date or time (2026-11-27, "2026-11-27 10:00:00", 2026-11-27T10:00:00Z) or a time back from now (30m, 12h, 7d), got ${JSON.stringify(value).slice(0, 60)}`,
  )
}

function actor(event: AuditEvent): string {
  const { type, id, name } = event.actor
  const who = [type, id === null ? '' : String(id), name ? `(${name})` : ''].filter(Boolean).join(' ')
  return printable(who)
}

function target(event: AuditEvent): string {
  if (event.target === null) return '-'
  return printable(event.target.id === null ? event.target.type : `${event.target.type} ${event.target.id}`)
}

/** `filename=a.txt size=6`: the details on one line. */
function details(event: AuditEvent): string {
  const pairs = Object.entries(event.details ?? {}).map(
    ([name, value]) => `${name}=${typeof value === 'string' ? value : JSON.stringify(value)}`,
  )
  return pairs.length === 0 ? '-' : printable(pairs.join(' '))
}

const HEADER = ['ID', 'AT (UTC)', 'ACTION', 'ACTOR', 'TARGET', 'IP', 'DETAILS']

export const audit: Command = {
  name: 'audit',
  summary: "show the account's audit log, newest first",
  usage: 'audit [--action A] [--since DATE] [--limit N] [--before-id ID]',
  description: [
    "Shows the account's audit log, newest first, one line per event: uploads, changes,",
    'deletions, link changes, sign-ins, keys made or revoked, webhooks changed (reads are not',
    'recorded). Needs a key with the audit:read scope (else exit 4). --action: one action',
    '(file.deleted) or a family (file.*). --since: events at or after a UTC date or time',
    '(2026-11-27, "2026-11-27 10:00:00", 2026-11-27T10:00:00Z) or that long ago (30m, 12h, 7d).',
    '--limit: at most N events (default 20), fetched 100 at a time; the last line names the',
    '--before-id of the older ones.',
    '--json: one audit event per line (JSON lines), as the API gives it: {"event_id","at","action",',
    '"actor":{"type","id","name"},"ip","user_agent","target":{"type","id"},"details"}.',
  ].join('\n'),
  options: {
    action: { type: 'string', value: 'A', description: 'only this action (file.deleted) or family (file.*)' },
    since: { type: 'string', value: 'DATE', description: 'only events at or after DATE (UTC: 2026-11-27, …) or that long ago (7d)' },
    limit: { type: 'string', value: 'N', description: 'at most N events (default 20)' },
    'before-id': { type: 'string', value: 'ID', description: 'the events older than event ID (the last line said which ID)' },
  },
  examples: [
    'fshare audit',
    "fshare audit --action 'file.*' --since 7d",
    'fshare audit --action file.deleted --since 2026-11-01 --limit 500 --json | jq -r .details.filename',
  ],
  async run(context) {
    const { values, positionals } = context.args
    if (positionals.length > 0) throw new UsageError(`audit takes no arguments, got ${JSON.stringify(positionals[0])}`)
    const limit = integerOption(values.limit, 'limit', 1) ?? 20
    let beforeId = integerOption(values['before-id'], 'before-id', 1)
    const since = sinceOption(values.since)
    const action = typeof values.action === 'string' ? values.action : undefined
    const client = context.client()
    const events: AuditEvent[] = []
    let shown = 0
    let older: number | null = null
    while (shown < limit) {
      const page = await client.auditEvents.list({
        limit: Math.min(100, limit - shown),
        before_id: beforeId,
        action,
        since,
        signal: context.signal,
      })
      for (const event of page.events) {
        context.out.jsonLine(event)
        if (!context.json) events.push(event)
      }
      shown += page.events.length
      older = page.pagination.next_before_id
      if (older === null || page.events.length === 0) break
      if (beforeId !== undefined && older >= beforeId) {
        throw new FileshareError(`the server's next_before_id ${older} does not move past ${beforeId}`)
      }
      beforeId = older
    }
    if (events.length > 0) {
      const rows = events.map((e) => [String(e.event_id), e.at, printable(e.action), actor(e), target(e), e.ip ?? '-', details(e)])
      context.out.result(table(HEADER, rows, new Set([0])))
    }
    const count = shown === 0 ? 'no events' : `${shown} event${shown === 1 ? '' : 's'}`
    context.out.result(older === null ? count : `${count}; older: --before-id ${older}`)
    return EXIT_OK
  },
}
