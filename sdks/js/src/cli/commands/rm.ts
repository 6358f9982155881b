// fshare rm ID...
import { fileIdArgument } from '../args.js'
import type { Command } from '../command.js'
import { EXIT_OK, InterruptedError, UsageError, exitCodeFor } from '../exit-codes.js'
import { errorJson } from '../output.js'

export const rm: Command = {
  name: 'rm',
  summary: 'delete files',
  usage: 'rm ID...',
  description: [
    'Deletes each file in turn; its public link stops working at once. An ID that fails is',
    'reported and the next one is tried; the exit code is that of the first failure.',
    '--json: one line per ID: {"ok":true,"file_id":12} or {"ok":false,"file_id":12,"error":{…}}.',
  ].join('\n'),
  options: {},
  examples: ['fshare rm 12 13', 'fshare ls --all --json | jq -r "select(.size > 1e9) | .file_id" | xargs fshare rm'],
  async run(context) {
    const raw = context.args.positionals
    if (raw.length === 0) throw new UsageError('rm needs at least one ID')
    const ids = raw.map(fileIdArgument) // every ID is checked before any is deleted
    const client = context.client()
    let exitCode = EXIT_OK
    for (const id of ids) {
      try {
        await client.files.delete(id, { signal: context.signal })
        context.out.result(`deleted ${id}`)
        context.out.jsonLine({ ok: true, file_id: id })
      } catch (error) {
        if (error instanceof InterruptedError) throw error
        context.out.error(error, `rm ${id}`)
        context.out.jsonLine({ ok: false, file_id: id, error: errorJson(error) })
        if (exitCode === EXIT_OK) exitCode = exitCodeFor(error)
      }
    }
    return exitCode
  },
}
