// The entry point of `fshare` (bin/fshare.js runs main()). run() does the work and returns the
// exit code; it takes its arguments, environment and streams as parameters.
import { VERSION } from '../version.js'
import { findCommand, parseCommandLine, type ParsedCommandLine } from './args.js'
import { COMMANDS } from './commands/index.js'
import { Context, type CliIo } from './context.js'
import { EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, InterruptedError, UsageError, exitCodeFor } from './exit-codes.js'
import { commandHelp, mainHelp } from './help.js'
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

export async function run(io: CliIo): Promise<number> {
  let name = findCommand(io.argv)
  if (name === 'help') {
    // `fshare help [COMMAND]`
    const rest = io.argv.filter((arg) => arg !== 'help' && !arg.startsWith('-'))
    const command = rest[0] === undefined ? undefined : COMMANDS.get(rest[0])
    if (rest[0] !== undefined && !command) return usageError(io, new UsageError(`unknown command ${JSON.stringify(rest[0])}`))
    io.stdout.write(command ? commandHelp(command) : mainHelp(COMMANDS))
    return EXIT_OK
  }
  const command = name === undefined ? undefined : COMMANDS.get(name)
  let args: ParsedCommandLine
  try {
    if (name !== undefined && !command) throw new UsageError(`unknown command ${JSON.stringify(name)}`)
    args = parseCommandLine(io.argv, name, command?.options ?? {})
  } catch (error) {
    if (error instanceof UsageError) return usageError(io, error, command?.name)
    throw error
  }
  if (args.values.version === true) {
    io.stdout.write(`fshare ${VERSION}\n`)
    return EXIT_OK
  }
  if (!command) {
    if (args.values.help === true) {
      io.stdout.write(mainHelp(COMMANDS))
      return EXIT_OK
    }
    io.stderr.write(mainHelp(COMMANDS))
    return EXIT_USAGE
  }
  if (args.values.help === true) {
    io.stdout.write(commandHelp(command))
    return EXIT_OK
  }
  name = command.name
  let context: Context
  try {
    context = new Context(io, args, secretsOf(io))
  } catch (error) {
    if (error instanceof UsageError) return usageError(io, error, name)
    throw error
  }
  try {
    return await command.run(context)
  } catch (error) {
    if (error instanceof UsageError) return usageError(io, error, name)
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
