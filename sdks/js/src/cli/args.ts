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
  retries: { type: 'string', value: 'N', description: 'retries of a failed request (429, 503, no connection); default 2' },
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

/** The command name: the first argument that is neither an option nor a global option's value. */
export function findCommand(argv: readonly string[]): string | undefined {
  const takesValue = withValue(GLOBAL_OPTIONS)
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    if (arg === '--') return argv[i + 1]
    if (arg.startsWith('-') && arg !== '-') {
      if (takesValue.has(arg)) i++
      continue
    }
    return arg
  }
  return undefined
}

function describeParseError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error)
  // parseArgs' messages are long ("... To specify a positional argument starting with a '-', place
  // it at the end of the command after '--', as in '-- \"-x\"'"): keep the first sentence.
  return message.split(/\.\s/)[0]!.replace(/\.$/, '')
}

/** Parses the whole command line against the global options plus the command's own. */
export function parseCommandLine(argv: readonly string[], command: string | undefined, options: OptionSpecs): ParsedCommandLine {
  const config: Record<string, { type: 'string' | 'boolean'; short?: string }> = {}
  for (const [name, spec] of Object.entries<OptionSpec>({ ...GLOBAL_OPTIONS, ...options })) {
    config[name] = spec.short ? { type: spec.type, short: spec.short } : { type: spec.type }
  }
  let parsed
  try {
    parsed = parseArgs({ args: [...argv], options: config, allowPositionals: true, strict: true })
  } catch (error) {
    throw new UsageError(describeParseError(error))
  }
  const positionals = [...parsed.positionals]
  // The command is the first positional (findCommand skips the global options' values).
  if (command !== undefined && positionals[0] === command) positionals.shift()
  return { values: parsed.values as ParsedCommandLine['values'], positionals }
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

/** A file id: a positive integer. */
export function fileIdArgument(value: string): number {
  if (!/^[1-9]\d{0,15}$/.test(value) || !Number.isSafeInteger(Number(value))) {
    throw new UsageError(`a file ID is a positive integer, got ${JSON.stringify(value).slice(0, 60)}`)
  }
  return Number(value)
}
