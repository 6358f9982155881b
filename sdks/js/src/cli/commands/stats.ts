// fshare stats
import type { Command } from '../command.js'
import { EXIT_OK, UsageError } from '../exit-codes.js'
import { formatBytes, keyValues, printable } from '../output.js'

export const stats: Command = {
  name: 'stats',
  summary: "show the account's usage, limits and plan",
  usage: 'stats',
  description: [
    "Shows the account's plan, usage (files, bytes, downloads, uploads today) and limits.",
    '--json: the API\'s object, one object: {"stats":{…},"limits":{…},"plan":"pro"}.',
  ].join('\n'),
  options: {},
  examples: ['fshare stats', 'fshare stats --json | jq .limits.max_file_size'],
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
        ['max file size', formatBytes(l.max_file_size)],
        ['requests', `${l.requests_per_minute} a minute, ${l.requests_per_day} a day`],
      ]),
    )
    return EXIT_OK
  },
}
