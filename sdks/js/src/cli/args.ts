// Command-line parsing with node:util parseArgs (no dependency: the grammar is small, and
// parseArgs gives strict checking of unknown options and missing values for free).
//
// Grammar: fshare [GLOBAL OPTIONS] COMMAND [ARGS] [OPTIONS]. Global options may stand anywhere
// (before or after the command); `--` ends the options.
import { parseArgs } from 'node:util'
import { UsageError } from './exit-codes.js'

export interface OptionSpec {
  readonly type: 'string' | 'boolean'
  readonly short?: string
  /** The placeholder shown in help (`N`, `PATH`). */
  readonly value?: string
  /** A string option that may be given several times: all its values, in `lists`. */
  readonly multiple?: true
  readonly description: string
}

export type OptionSpecs = Readonly<Record<string, OptionSpec>>

/**
 * Options every command takes. The key's description never shows a value: `--help` prints no
 * default for it, whatever the environment holds.
 */
export const GLOBAL_OPTIONS = {
  'api-key': { type: 'string', value: 'KEY', description: 'API key (fsk_…); default: $FILESHARE_API_KEY. Never printed' },
  'base-url': {
    type: 'string',
    value: 'URL',
    description: 'API base URL ending in /api/v1; default: $FILESHARE_BASE_URL',
  },
  json: { type: 'boolean', description: 'machine-readable JSON on stdout (no progress, no tables)' },
  'no-progress': { type: 'boolean', description: 'no progress bars or progress lines' },
  retries: { type: 'string', value: 'N', description: 'retries of a failed request (429, 5xx, no connection); default 2' },
  help: { type: 'boolean', short: 'h', description: 'show help' },
  version: { type: 'boolean', short: 'V', description: 'show the version' },
} as const satisfies OptionSpecs

export type GlobalValues = {
  'api-key'?: string | undefined
  'base-url'?: string | undefined
  json?: boolean | undefined
  'no-progress'?: boolean | undefined
  retries?: string | undefined
  help?: boolean | undefined
  version?: boolean | undefined
}

export interface ParsedCommandLine {
  values: GlobalValues & Record<string, string | boolean | undefined>
  /** The values of each option that may be repeated (`multiple`), in the order given; none: absent. */
  lists: Record<string, string[] | undefined>
  /** Positionals after the command name. */
  positionals: string[]
}

function withValue(specs: OptionSpecs): Set<string> {
  const names = new Set<string>()
  for (const [name, spec] of Object.entries(specs)) {
    if (spec.type !== 'string') continue
    names.add(`--${name}`)
    if (spec.short) names.add(`-${spec.short}`)
  }
  return names
}

/**
 * The command name: the first argument from `from` on that is neither an option nor a global
 * option's value, and where it stands.
 */
export function findCommandAt(argv: readonly string[], from = 0): { name: string; index: number } | undefined {
  const takesValue = withValue(GLOBAL_OPTIONS)
  for (let i = from; i < argv.length; i++) {
    const arg = argv[i]!
    if (arg === '--') return i + 1 < argv.length ? { name: argv[i + 1]!, index: i + 1 } : undefined
    if (arg.startsWith('-') && arg !== '-') {
      if (takesValue.has(arg)) i++
      continue
    }
    return { name: arg, index: i }
  }
  return undefined
}

/** The command name: the first argument that is neither an option nor a global option's value. */
export function findCommand(argv: readonly string[]): string | undefined {
  return findCommandAt(argv)?.name
}

function describeParseError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error)
  // parseArgs' messages are long ("... To specify a positional argument starting with a '-', place
  // it at the end of the command after '--', as in '-- \"-x\"'"): keep the first sentence.
  return message.split(/\.\s/)[0]!.replace(/\.$/, '')
}

/**
 * Parses the whole command line against the global options plus the command's own. `command`:
 * its name (`rm`, or `link create` for a command of a group), which is not a positional.
 */
export function parseCommandLine(argv: readonly string[], command: string | undefined, options: OptionSpecs): ParsedCommandLine {
  const config: Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }> = {}
  for (const [name, spec] of Object.entries<OptionSpec>({ ...GLOBAL_OPTIONS, ...options })) {
    config[name] = { type: spec.type, ...(spec.short ? { short: spec.short } : {}), ...(spec.multiple ? { multiple: true } : {}) }
  }
  let parsed
  try {
    parsed = parseArgs({ args: [...argv], options: config, allowPositionals: true, strict: true })
  } catch (error) {
    throw new UsageError(describeParseError(error))
  }
  const positionals = [...parsed.positionals]
  // The command's words are the first positionals (findCommand skips the global options' values).
  for (const word of command?.split(' ') ?? []) if (positionals[0] === word) positionals.shift()
  const values: ParsedCommandLine['values'] = {}
  const lists: ParsedCommandLine['lists'] = {}
  for (const [name, value] of Object.entries(parsed.values)) {
    if (Array.isArray(value)) lists[name] = value.map(String)
    else values[name] = value
  }
  return { values, lists, positionals }
}

/** An integer option within [min, max]; `undefined` when the option was not given. */
export function integerOption(
  value: string | boolean | undefined,
  name: string,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): number | undefined {
  if (value === undefined || typeof value === 'boolean') return undefined
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new UsageError(
      `--${name} must be an integer from ${min}${max === Number.MAX_SAFE_INTEGER ? ' up' : ` to ${max}`}, got ${JSON.stringify(value)}`,
    )
  }
  return Number(value)
}

function idArgument(value: string, what: 'file' | 'link' | 'webhook' | 'delivery' | 'request'): number {
  if (!/^[1-9]\d{0,15}$/.test(value) || !Number.isSafeInteger(Number(value))) {
    throw new UsageError(`a ${what} ID is a positive integer, got ${JSON.stringify(value).slice(0, 60)}`)
  }
  return Number(value)
}

/** A file id: a positive integer. */
export function fileIdArgument(value: string): number {
  return idArgument(value, 'file')
}

/** A link id: a positive integer. */
export function linkIdArgument(value: string): number {
  return idArgument(value, 'link')
}

/** A webhook endpoint's id: a positive integer. */
export function webhookIdArgument(value: string): number {
  return idArgument(value, 'webhook')
}

/** A webhook delivery's id: a positive integer. */
export function deliveryIdArgument(value: string): number {
  return idArgument(value, 'delivery')
}

/** An upload request's id: a positive integer. */
export function requestIdArgument(value: string): number {
  return idArgument(value, 'request')
}

const UNIT_SECONDS: Readonly<Record<string, number>> = { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 }
/** The longest expiry the API takes: 10 years, in seconds. */
export const MAX_EXPIRES_IN = 315_360_000

/**
 * A duration in seconds: plain seconds (`3600`) or numbers with units `s`, `m`, `h`, `d`, `w`,
 * one or more (`30s`, `15m`, `12h`, `7d`, `1h30m`). Undefined for an empty or malformed text.
 */
export function parseDuration(text: string): number | undefined {
  const value = text.trim().toLowerCase()
  if (/^\d+$/.test(value)) return Number(value)
  if (!/^(\d+[smhdw])+$/.test(value)) return undefined
  let seconds = 0
  for (const [, amount, unit] of value.matchAll(/(\d+)([smhdw])/g)) seconds += Number(amount) * UNIT_SECONDS[unit!]!
  return seconds
}

/** An expiry option (`--expires-in 7d`) in seconds, from 1 s to 10 years; `undefined` when not given. */
export function durationOption(value: string | boolean | undefined, name: string): number | undefined {
  if (value === undefined || typeof value === 'boolean') return undefined
  const seconds = parseDuration(value)
  if (seconds === undefined || !Number.isSafeInteger(seconds) || seconds < 1 || seconds > MAX_EXPIRES_IN) {
    throw new UsageError(
      `--${name} must be a duration from 1 second to 10 years: seconds (3600) or with a unit (30s, 15m, 12h, 7d, 2w), got ${JSON.stringify(value).slice(0, 60)}`,
    )
  }
  return seconds
}

const SIZE_UNITS: Readonly<Record<string, number>> = { '': 1, b: 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4 }

/**
 * A size in bytes: plain bytes (`1048576`) or a number with a binary unit, `K`, `M`, `G`, `T`
 * (also `KiB`, `MiB`, … and `B`; any case): `500K`, `10MiB`, `1.5G` (rounded down to a whole
 * byte). Undefined for an empty or malformed text.
 */
export function parseSize(text: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)\s*(?:([kmgt])(?:i?b)?|(b))?$/i.exec(text.trim())
  if (!match) return undefined
  const unit = (match[2] ?? match[3] ?? '').toLowerCase()
  if (match[1]!.includes('.') && unit === '') return undefined
  return Math.floor(Number(match[1]) * SIZE_UNITS[unit === 'b' ? 'b' : unit]!)
}

/** A size option (`--max-file-size 10M`) in bytes, at least 1; `undefined` when not given. */
export function sizeOption(value: string | boolean | undefined, name: string): number | undefined {
  if (value === undefined || typeof value === 'boolean') return undefined
  const bytes = parseSize(value)
  if (bytes === undefined || !Number.isSafeInteger(bytes) || bytes < 1) {
    throw new UsageError(
      `--${name} must be a size of at least 1 byte: bytes (1048576) or with a unit (500K, 10M, 2G; KiB, MiB, GiB), got ${JSON.stringify(value).slice(0, 60)}`,
    )
  }
  return bytes
}

/** A UTC time as the CLI takes it: `YYYY-MM-DD HH:MM:SS`, `YYYY-MM-DDTHH:MM:SSZ`, or `YYYY-MM-DD` (midnight). */
const UTC_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2}))?Z?)?$/

/** A time option (`--expires-at "2026-12-04 10:00:00"`, UTC) as a `Date`; `undefined` when not given. */
export function timeOption(value: string | boolean | undefined, name: string): Date | undefined {
  if (value === undefined || typeof value === 'boolean') return undefined
  const match = UTC_TIME.exec(value.trim())
  const date = match
    ? new Date(Date.UTC(+match[1]!, +match[2]! - 1, +match[3]!, +(match[4] ?? 0), +(match[5] ?? 0), +(match[6] ?? 0)))
    : undefined
  // Date.UTC rolls 2026-02-31 over into March: such a day is refused, not moved.
  const inRange = match !== null && +(match[4] ?? 0) <= 23 && +(match[5] ?? 0) <= 59 && +(match[6] ?? 0) <= 59
  if (!date || !inRange || date.getUTCDate() !== +match[3]! || date.getUTCMonth() !== +match[2]! - 1) {
    throw new UsageError(
      `--${name} must be a UTC date or time (2026-12-04, "2026-12-04 10:00:00", 2026-12-04T10:00:00Z), got ${JSON.stringify(value).slice(0, 60)}`,
    )
  }
  return date
}
