// What rm and link revoke share: act on each ID in turn, report a failure and go on, exit with
// the first failure's code.
import type { Fileshare } from '../../client.js'
import type { Context } from '../context.js'
import { EXIT_OK, InterruptedError, UsageError, exitCodeFor } from '../exit-codes.js'
import { errorJson } from '../output.js'

/**
 * Runs `act` for each ID of the command line (all of them checked first). A success prints
 * `<done> <id>` (`deleted 12`) and, with --json, `{"ok":true,"<field>":12}`; a failure is reported
 * on stderr (`fshare: <command> 12: …`) and as `{"ok":false,"<field>":12,"error":{…}}`, and the
 * next ID is tried. Ctrl-C stops at once.
 */
export async function forEachId(
  context: Context,
  what: { command: string; argument: string; parse: (raw: string) => number; done: string; field: string },
  act: (client: Fileshare, id: number) => Promise<unknown>,
): Promise<number> {
  const raw = context.args.positionals
  if (raw.length === 0) throw new UsageError(`${what.command} needs at least one ${what.argument}`)
  const ids = raw.map(what.parse) // every ID is checked before anything is done
  const client = context.client()
  let exitCode = EXIT_OK
  for (const id of ids) {
    try {
      await act(client, id)
      context.out.result(`${what.done} ${id}`)
      context.out.jsonLine({ ok: true, [what.field]: id })
    } catch (error) {
      if (error instanceof InterruptedError) throw error
      context.out.error(error, `${what.command} ${id}`)
      context.out.jsonLine({ ok: false, [what.field]: id, error: errorJson(error) })
      if (exitCode === EXIT_OK) exitCode = exitCodeFor(error)
    }
  }
  return exitCode
}
