// fshare ls [--page N] [--limit N] | --all
import { integerOption } from '../args.js'
import type { Command } from '../command.js'
import { EXIT_OK, UsageError } from '../exit-codes.js'
import { formatBytes, printable, table } from '../output.js'
import type { FileRecord } from '../../types.js'

function rows(files: readonly FileRecord[]): string[][] {
  return files.map((file) => [
    String(file.file_id),
    printable(file.filename),
    formatBytes(file.size),
    file.upload_date,
    String(file.download_count),
    file.public_link,
  ])
}

const HEADER = ['ID', 'NAME', 'SIZE', 'UPLOADED (UTC)', 'DOWNLOADS', 'LINK']
const RIGHT = new Set([0, 2, 4])

export const ls: Command = {
  name: 'ls',
  summary: 'list files, newest first',
  usage: 'ls [--page N] [--limit N] | ls --all',
  description: [
    'Lists the files of the account, newest first: one page (--page, --limit), or every file',
    '(--all, fetched 100 at a time, never one twice).',
    '--json: one page is one object {"files":[file records],"pagination":{"page","limit","total","pages"}};',
    'with --all, one file record per line (JSON lines), printed as the pages arrive.',
  ].join('\n'),
  options: {
    page: { type: 'string', value: 'N', description: 'page number, from 1 (default 1)' },
    limit: { type: 'string', value: 'N', description: 'files per page, 1 to 100 (default 20)' },
    all: { type: 'boolean', short: 'a', description: 'every file, across all pages' },
  },
  examples: ['fshare ls', 'fshare ls --page 2 --limit 50', 'fshare ls --all --json | jq -r .public_link'],
  async run(context) {
    const { values, positionals } = context.args
    if (positionals.length > 0) throw new UsageError(`ls takes no arguments, got ${JSON.stringify(positionals[0])}`)
    const page = integerOption(values.page, 'page', 1)
    const limit = integerOption(values.limit, 'limit', 1, 100)
    const client = context.client()
    if (values.all === true) {
      if (page !== undefined) throw new UsageError('--all and --page do not go together')
      const files: FileRecord[] = []
      for await (const file of client.files.iterate({ limit: limit ?? 100, signal: context.signal })) {
        context.out.jsonLine(file)
        if (!context.json) files.push(file)
      }
      if (files.length > 0) context.out.result(table(HEADER, rows(files), RIGHT))
      context.out.result(`${files.length} file${files.length === 1 ? '' : 's'}`)
      return EXIT_OK
    }
    const list = await client.files.list({ page, limit, signal: context.signal })
    context.out.jsonLine(list)
    const { pagination: p } = list
    if (list.files.length > 0) context.out.result(table(HEADER, rows(list.files), RIGHT))
    context.out.result(
      p.total === 0
        ? 'no files'
        : `page ${p.page} of ${p.pages}, ${list.files.length} shown, ${p.total} file${p.total === 1 ? '' : 's'} in all`,
    )
    return EXIT_OK
  },
}
