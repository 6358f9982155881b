// Output of `fshare`: human text (aligned tables, key/value lines) or JSON, on the right stream.
//
// - Results go to stdout; progress, notes and error messages go to stderr.
// - Human output never holds escape codes: only the progress bars on a terminal do (progress.ts).
// - `--json`: stdout holds JSON only: ONE object for info, ls (a page), get, stats, key and the
//   webhook and request commands; JSON lines (one object per line) for upload, rm, link revoke,
//   webhook delete and request close (one per FILE/ID), for `ls --all` (one file record per line)
//   and for audit (one event per line). A failure is `{"error":{…}}` (for the commands of several IDs a line with
//   `"ok":false`).
// - Every line written is scrubbed of the API key (it never shows, even if a message held it).
import { FileshareError, IntegrityError, RateLimitError } from '../errors.js'
import type { FileScan } from '../types.js'
import { errorTypeName, exitCodeFor } from './exit-codes.js'

export interface Writable {
  write(text: string): unknown
  readonly isTTY?: boolean | undefined
  readonly columns?: number | undefined
}

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB']

/** `512 B`, `1.5 KiB`, `12.3 MiB`, `5 GiB` (binary units). */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes)) return '?'
  let value = bytes
  let unit = 0
  while (Math.abs(value) >= 1024 && unit < UNITS.length - 1) {
    value /= 1024
    unit++
  }
  if (unit === 0) return `${value} B`
  const text = value >= 100 ? value.toFixed(0) : value.toFixed(1)
  return `${text} ${UNITS[unit]}`
}

/** `7s` (`0.4s` with tenths, under 10 s), `1m05s`, `2h03m`; `--` when unknown. */
export function formatDuration(seconds: number | undefined, tenths = false): string {
  if (seconds === undefined || !Number.isFinite(seconds) || seconds < 0) return '--'
  if (tenths && seconds < 10) return `${seconds.toFixed(1)}s`
  const s = Math.ceil(seconds)
  if (s < 60) return `${s}s`
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`
}

/** Rows as columns aligned with spaces; `right` lists the columns aligned right (numbers). */
export function table(header: readonly string[], rows: readonly (readonly string[])[], right: ReadonlySet<number> = new Set()): string {
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => (row[i] ?? '').length)))
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => (right.has(i) ? cell.padStart(widths[i]!) : i === cells.length - 1 ? cell : cell.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd()
  return [line(header), ...rows.map(line)].join('\n') + '\n'
}

/** Key/value lines with the keys aligned. */
export function keyValues(pairs: readonly (readonly [string, string])[]): string {
  const width = Math.max(...pairs.map(([key]) => key.length))
  return pairs.map(([key, value]) => `${key.padEnd(width)}  ${value}`).join('\n') + '\n'
}

/**
 * A file's virus scan for a person: `clean (2026-11-27 10:00:00 UTC)`, `pending`,
 * `infected: Win.Test.EICAR_HDB-1 (… UTC)`, `error (too large for the scanner)`,
 * `skipped (too large to scan)`; `not scanned` when the server does not scan (`scan: null`).
 * `short`: the status alone (`infected`), `-` for `null`, for a table column.
 */
export function formatScan(scan: FileScan | null | undefined, short = false): string {
  if (!scan) return short ? '-' : 'not scanned'
  const status = printable(String(scan.status))
  if (short) return status
  const at = scan.scanned_at ? ` (${scan.scanned_at} UTC)` : ''
  if (scan.status === 'infected') return `infected: ${printable(scan.signature ?? 'unknown signature')}${at}`
  if (scan.status === 'error') return `error: too large for the scanner, never served${at}`
  if (scan.status === 'skipped') return `skipped: too large to scan, served unscanned${at}`
  if (scan.status === 'pending') return 'pending: not scanned yet'
  return `${status}${at}`
}

/** Control characters (escape codes among them) of a server-chosen text, made visible. */
export function printable(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`)
}

/** The JSON form of an error (`--json`). Never holds the key (the SDK's messages never do). */
export function errorJson(error: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {
    type: errorTypeName(error),
    message: error instanceof Error ? error.message : String(error),
    exit_code: exitCodeFor(error),
  }
  if (error instanceof FileshareError) {
    out.status = error.status ?? null
    out.code = error.code ?? null
    out.request_id = error.requestId ?? null
    out.retry_after = error.retryAfter ?? null
  }
  if (error instanceof IntegrityError) {
    out.expected = error.expected ?? null
    out.actual = error.actual ?? null
  }
  if (error instanceof RateLimitError) out.rate_limit = { ...error.rateLimit }
  const code = (error as NodeJS.ErrnoException | undefined)?.code
  if (!(error instanceof FileshareError) && typeof code === 'string') out.code = code
  return out
}

/** One line for a person: `NotFoundError: 404 not_found: File not found. (request id …)`. */
export function errorText(error: unknown): string {
  const type = errorTypeName(error)
  let message = error instanceof Error ? error.message : String(error)
  const errno = error as NodeJS.ErrnoException | undefined
  if (!(error instanceof FileshareError) && errno?.syscall && errno.path) {
    // Node's file errors: "ENOENT: no such file or directory, stat 'x'" → "no such file or directory"
    message = message.replace(/^E[A-Z]+: /, '').replace(/, \w+ '.*'$/, '')
  }
  const notes: string[] = []
  if (error instanceof FileshareError) {
    if (error.retryAfter !== undefined) notes.push(`retry after ${error.retryAfter} s`)
    if (error.requestId) {
      // The SDK's message ends in the request id already: it goes with the other notes here.
      const suffix = ` (request id ${error.requestId})`
      if (message.endsWith(suffix)) message = message.slice(0, -suffix.length)
      notes.push(`request id ${error.requestId}`)
    }
  }
  const prefix = type === 'Error' || type === 'InterruptedError' ? '' : `${type}: `
  return `${prefix}${printable(message)}${notes.length ? ` (${notes.join(', ')})` : ''}`
}

/** A text with every secret (of 8 characters or more) replaced by `[redacted]`. */
export function scrub(text: string, secrets: readonly string[]): string {
  let out = text
  for (const secret of secrets) if (secret.length >= 8) out = out.split(secret).join('[redacted]')
  return out
}

export interface OutputOptions {
  json: boolean
  /** Strings that must never be written (the API key). */
  secrets: readonly string[]
}

/** Where a command writes: `result` (stdout), `note` and `error` (stderr), `json` (stdout). */
export class Output {
  readonly json: boolean
  readonly #secrets: string[]

  constructor(
    readonly stdout: Writable,
    readonly stderr: Writable,
    options: OutputOptions,
  ) {
    this.json = options.json
    this.#secrets = [...options.secrets]
  }

  /** A string never to write from now on (a password read from stdin). */
  protect(secret: string): void {
    this.#secrets.push(secret)
  }

  /** Removes every secret from a text. */
  scrub(text: string): string {
    return scrub(text, this.#secrets)
  }

  /** Human result text on stdout (ignored with --json). */
  result(text: string): void {
    if (!this.json) this.stdout.write(this.scrub(text.endsWith('\n') ? text : `${text}\n`))
  }

  /** One JSON value on one line of stdout (only with --json). */
  jsonLine(value: unknown): void {
    if (this.json) this.stdout.write(this.scrub(JSON.stringify(value)) + '\n')
  }

  /** A note for a person on stderr (ignored with --json). */
  note(text: string): void {
    if (!this.json) this.stderr.write(this.scrub(`${text}\n`))
  }

  /** An error message on stderr, with a prefix (`upload a.txt`), also with --json. */
  error(error: unknown, prefix?: string): void {
    this.stderr.write(this.scrub(`fshare: ${prefix ? `${prefix}: ` : ''}${errorText(error)}\n`))
  }
}
