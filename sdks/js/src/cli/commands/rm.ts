// fshare rm ID...
import { fileIdArgument } from '../args.js'
import type { Command } from '../command.js'
import { forEachId } from './each-id.js'

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
  run: (context) =>
    forEachId(context, { command: 'rm', argument: 'ID', parse: fileIdArgument, done: 'deleted', field: 'file_id' }, (client, id) =>
      client.files.delete(id, { signal: context.signal }),
    ),
}
