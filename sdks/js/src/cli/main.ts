// The entry point of `fshare` (bin/fshare.js runs main()). run() does the work and returns the
// exit code; it takes its arguments, environment and streams as parameters.
import { VERSION } from '../version.js'
import { findCommandAt, parseCommandLine, type ParsedCommandLine } from './args.js'
import type { Command } from './command.js'
import { COMMANDS, GROUPS } from './commands/index.js'
import { Context, type CliIo } from './context.js'
import { EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, InterruptedError, UsageError, exitCodeFor } from './exit-codes.js'
import { commandHelp, groupHelp, mainHelp } from './help.js'
import { errorJson, errorText, scrub } from './output.js'

/** The key as given (environment, --api-key): never written, even inside a usage error. */
export function secretsOf(io: Pick<CliIo, 'argv' | 'env'>): string[] {
  const secrets = io.env.FILESHARE_API_KEY ? [io.env.FILESHARE_API_KEY] : []
  io.argv.forEach((arg, i) => {
    if (arg === '--api-key' && io.argv[i + 1] !== undefined) secrets.push(io.argv[i + 1]!)
    else if (arg.startsWith('--api-key=')) secrets.push(arg.slice('--api-key='.length))
  })
  return secrets
}

function usageError(io: CliIo, error: UsageError, command?: string): number {
  const text = `fshare: ${error.message}\nRun 'fshare ${command ? `${command} ` : ''}--help' for usage.\n`
  io.stderr.write(scrub(text, secretsOf(io)))
  return EXIT_USAGE
}

/** What a command line names: a command (`rm`, `link create`), a group alone (`link`), or nothing known. */
interface Named {
  /** The words as given (`link create`), for messages; undefined when there are none. */
  name: string | undefined
  command: Command | undefined
  /** A group named without one of its commands (`fshare link`, `fshare link --help`). */
  group: string | undefined
}

function resolve(words: readonly string[]): Named {
  const [first, second] = words
  if (first === undefined) return { name: undefined, command: undefined, group: undefined }
  if (!GROUPS.has(first)) return { name: first, command: COMMANDS.get(first), group: undefined }
  if (second === undefined) return { name: first, command: undefined, group: first }
  return { name: `${first} ${second}`, command: COMMANDS.get(`${first} ${second}`), group: first }
}

/** The command words of a command line: the first one, and the next one after a group's name. */
function commandWords(argv: readonly string[]): string[] {
  const first = findCommandAt(argv)
  if (!first) return []
  const second = GROUPS.has(first.name) ? findCommandAt(argv, first.index + 1) : undefined
  return second ? [first.name, second.name] : [first.name]
}

export async function run(io: CliIo): Promise<number> {
  const words = commandWords(io.argv)
  if (words[0] === 'help') {
    // `fshare help [COMMAND]`, `fshare help link [COMMAND]`
    const named = resolve(io.argv.filter((arg) => arg !== 'help' && !arg.startsWith('-')))
    if (named.name !== undefined && !named.command && !(named.group && named.name === named.group)) {
      return usageError(io, new UsageError(`unknown command ${JSON.stringify(named.name)}`))
    }
    io.stdout.write(
      named.command
        ? commandHelp(named.command)
        : named.group
          ? groupHelp(named.group, GROUPS.get(named.group)!, COMMANDS)
          : mainHelp(COMMANDS),
    )
    return EXIT_OK
  }
  const { name, command, group } = resolve(words)
  let args: ParsedCommandLine
  try {
    if (name !== undefined && !command && name !== group) throw new UsageError(`unknown command ${JSON.stringify(name)}`)
    args = parseCommandLine(io.argv, command?.name ?? group ?? name, command?.options ?? {})
  } catch (error) {
    if (error instanceof UsageError) return usageError(io, error, command?.name ?? group)
    throw error
  }
  if (args.values.version === true) {
    io.stdout.write(`fshare ${VERSION}\n`)
    return EXIT_OK
  }
  if (!command) {
    const help = group ? groupHelp(group, GROUPS.get(group)!, COMMANDS) : mainHelp(COMMANDS)
    if (args.values.help === true) {
      io.stdout.write(help)
      return EXIT_OK
    }
    io.stderr.write(help)
    return EXIT_USAGE
  }
  if (args.values.help === true) {
    io.stdout.write(commandHelp(command))
    return EXIT_OK
  }
  let context: Context
  try {
    context = new Context(io, args, secretsOf(io))
  } catch (error) {
    if (error instanceof UsageError) return usageError(io, error, command.name)
    throw error
  }
  try {
    return await command.run(context)
  } catch (error) {
    if (error instanceof UsageError) return usageError(io, error, command.name)
    if (io.signal.aborted && !(error instanceof InterruptedError) && (error as Error | undefined)?.name === 'AbortError') {
      error = io.signal.reason
    }
    context.out.error(error)
    context.out.jsonLine({ error: errorJson(error) })
    return exitCodeFor(error)
  }
}

/** Runs `fshare` in this process: argv, environment, stdio, Ctrl-C; sets the exit code. */
export async function main(): Promise<void> {
  const controller = new AbortController()
  let interrupts = 0
  const interrupt = () => {
    // The first Ctrl-C stops the transfer (a partial download stays and can be resumed); a second
    // one quits at once.
    if (++interrupts > 1) process.exit(EXIT_INTERRUPTED)
    controller.abort(new InterruptedError('interrupted'))
  }
  process.on('SIGINT', interrupt)
  process.on('SIGTERM', interrupt)
  // `fshare ls | head -1`: the reader went away; stop quietly.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    process.exit(error.code === 'EPIPE' ? EXIT_OK : 1)
  })
  try {
    process.exitCode = await run({
      argv: process.argv.slice(2),
      env: process.env,
      stdout: process.stdout,
      stderr: process.stderr,
      stdin: process.stdin,
      signal: controller.signal,
    })
  } catch (error) {
    // A bug of the CLI itself: say so without a stack trace full of paths.
    const secrets = secretsOf({ argv: process.argv.slice(2), env: process.env })
    process.stderr.write(scrub(`fshare: unexpected ${errorText(error)}\n`, secrets))
    process.exitCode = exitCodeFor(error)
  } finally {
    process.off('SIGINT', interrupt)
    process.off('SIGTERM', interrupt)
  }
}
