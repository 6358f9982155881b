// The text of `fshare --help` and `fshare COMMAND --help` (on stdout, exit 0).
import { GLOBAL_OPTIONS, type OptionSpecs } from './args.js'
import type { Command } from './command.js'
import { EXIT_CODES } from './exit-codes.js'
import { VERSION } from '../version.js'

function optionLines(specs: OptionSpecs): string[] {
  const entries = Object.entries(specs).map(([name, spec]) => {
    const flag = `${spec.short ? `-${spec.short}, ` : '    '}--${name}${spec.value ? ` ${spec.value}` : ''}`
    return [flag, spec.multiple ? `${spec.description} (repeatable: any of)` : spec.description] as const
  })
  const width = Math.max(...entries.map(([flag]) => flag.length))
  return entries.map(([flag, description]) => `  ${flag.padEnd(width)}  ${description}`)
}

/** The usage column stops here: a longer usage has its summary on the next line. */
const USAGE_COLUMN = 54

/** `  usage  summary` lines, the summaries aligned. */
function commandLines(commands: readonly Command[]): string[] {
  const width = Math.max(...commands.map((c) => c.usage.length).filter((length) => length <= USAGE_COLUMN))
  return commands.flatMap((c) =>
    c.usage.length <= width ? [`  ${c.usage.padEnd(width)}  ${c.summary}`] : [`  ${c.usage}`, `  ${''.padEnd(width)}  ${c.summary}`],
  )
}

export function mainHelp(commands: ReadonlyMap<string, Command>): string {
  return [
    `fshare ${VERSION}: the Fileshare command line (@fileshare/sdk)`,
    '',
    'Usage: fshare COMMAND [ARGS] [OPTIONS]',
    '',
    'Commands:',
    ...commandLines([...commands.values()]),
    '',
    'Options (every command):',
    ...optionLines(GLOBAL_OPTIONS),
    '',
    'Environment:',
    '  FILESHARE_API_KEY   the API key (or --api-key); never printed',
    '  FILESHARE_BASE_URL  the API base URL, e.g. https://files.example.com/api/v1 (or --base-url)',
    '',
    'Output: results on stdout, progress and errors on stderr. Progress bars on a terminal, plain',
    "lines otherwise. --json: JSON only on stdout (see each command's --help for its shape).",
    '',
    'Exit codes:',
    ...EXIT_CODES.map((e) => `  ${String(e.code).padStart(3)}  ${e.name.padEnd(21)}  ${e.meaning}`),
    "With several FILEs or IDs (upload, rm, link revoke, webhook delete, request close) every one is tried; the exit code is the first failure's.",
    '',
    "Run 'fshare COMMAND --help' for a command's options and examples.",
    '',
  ].join('\n')
}

/** `fshare link --help`: the group's commands. */
export function groupHelp(group: string, description: string, commands: ReadonlyMap<string, Command>): string {
  const members = [...commands.values()].filter((c) => c.name.startsWith(`${group} `))
  return [
    `Usage: fshare ${group} COMMAND [ARGS] [OPTIONS]`,
    '',
    description,
    '',
    'Commands:',
    ...commandLines(members),
    '',
    `Run 'fshare ${group} COMMAND --help' for a command's options and examples.`,
    '',
  ].join('\n')
}

export function commandHelp(command: Command): string {
  const own = Object.keys(command.options).length > 0
  return [
    `Usage: fshare ${command.usage} [OPTIONS]`,
    '',
    command.description,
    '',
    ...(own ? ['Options:', ...optionLines(command.options), ''] : []),
    'Options (every command):',
    ...optionLines(GLOBAL_OPTIONS),
    '',
    'Examples:',
    ...command.examples.map((example) => `  ${example}`),
    '',
    "Exit codes: 0 ok, 2 usage, 3-12 one per error class; 'fshare --help' lists them.",
    '',
  ].join('\n')
}
