// fshare info ID
import { fileIdArgument } from '../args.js'
import type { Command } from '../command.js'
import { EXIT_OK, UsageError } from '../exit-codes.js'
import { formatBytes, formatScan, keyValues, printable } from '../output.js'

export const info: Command = {
  name: 'info',
  summary: "show a file's record",
  usage: 'info ID',
  description: [
    "Shows one file's record, its virus scan among it (pending, clean, infected with the signature",
    'found, error, skipped; "not scanned" when the server does not scan). A file found infected is',
    'gone (no link, not listed); info still shows its record until rm removes it.',
    '--json: the file record, one object.',
  ].join('\n'),
  options: {},
  examples: ['fshare info 12', 'fshare info 12 --json | jq -r .public_link'],
  async run(context) {
    const [raw, ...rest] = context.args.positionals
    if (raw === undefined || rest.length > 0) throw new UsageError('info needs exactly one ID')
    const id = fileIdArgument(raw)
    const file = await context.client().files.get(id, { signal: context.signal })
    context.out.jsonLine(file)
    context.out.result(
      keyValues([
        ['id', String(file.file_id)],
        ['name', printable(file.filename)],
        ['size', `${formatBytes(file.size)} (${file.size} bytes)`],
        ['type', printable(file.content_type)],
        ['uploaded', `${file.upload_date} UTC`],
        ['downloads', String(file.download_count)],
        ['expires', file.expires_at ? `${file.expires_at} UTC` : 'never'],
        ['sha256', file.sha256],
        ['scan', formatScan(file.scan)],
        ['link', file.public_link],
      ]),
    )
    return EXIT_OK
  },
}
