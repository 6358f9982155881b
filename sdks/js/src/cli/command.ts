// What a command is: its name, help, options and what it does.
import type { OptionSpecs } from './args.js'
import type { Context } from './context.js'

export interface Command {
  readonly name: string
  /** One line for the command list. */
  readonly summary: string
  /** `upload FILE... [--resumable]` (without `fshare`). */
  readonly usage: string
  /** A few lines for `fshare COMMAND --help`, including what --json prints. */
  readonly description: string
  readonly options: OptionSpecs
  readonly examples: readonly string[]
  /** Runs the command; resolves to the exit code. Errors it throws are reported by main. */
  run(context: Context): Promise<number>
}
