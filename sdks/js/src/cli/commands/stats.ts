// fshare stats
import type { Command } from '../command.js'
import { EXIT_OK, UsageError } from '../exit-codes.js'
import { formatBytes, keyValues, printable } from '../output.js'

/** `100 GiB (99.9 GiB free)`, or `unlimited`. */
function quota(taken: number, max: number | null | undefined): string {
  if (max === null || max === undefined) return 'unlimited'
  return `${formatBytes(max)} (${formatBytes(Math.max(0, max - taken))} free)`
}

export const stats: Command = {
  name: 'stats',
  summary: "show the account's usage, limits and plan",
  usage: 'stats',
  description: [
    "Shows the account's plan, usage (files, bytes, downloads, uploads today), its storage (bytes",
    'stored, bytes reserved by uploads in progress, the quota and what is free of it) and limits.',
    '--json: the API\'s object, one object: {"stats":{…},"limits":{…},"plan":"pro"}.',
  ].join('\n'),
  options: {},
  examples: ['fshare stats', 'fshare stats --json | jq .limits.max_storage'],
  async run(context) {
    if (context.args.positionals.length > 0) throw new UsageError('stats takes no arguments')
    const result = await context.client().stats({ signal: context.signal })
    context.out.jsonLine(result)
    const { stats: s, limits: l } = result
    context.out.result(
      keyValues([
        ['plan', printable(String(result.plan))],
        ['files', `${s.total_files} (${formatBytes(s.total_size)})`],
        ['downloads', String(s.total_downloads)],
        ['uploads today', `${s.uploads_today} of ${l.daily_uploads}`],
        ['storage', `${formatBytes(s.total_size)} used, ${formatBytes(s.storage_reserved)} reserved by uploads in progress`],
        ['storage quota', quota(s.total_size + s.storage_reserved, l.max_storage)],
        ['max file size', formatBytes(l.max_file_size)],
        ['requests', `${l.requests_per_minute} a minute, ${l.requests_per_day} a day`],
      ]),
    )
    return EXIT_OK
  },
}
