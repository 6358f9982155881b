// fshare key: the key fshare calls with (GET /key), whatever its scopes.
import type { Command } from '../command.js'
import { EXIT_OK, UsageError } from '../exit-codes.js'
import { keyValues, printable } from '../output.js'

export const key: Command = {
  name: 'key',
  summary: 'show the API key in use: its name, scopes, addresses, expiry, plan',
  usage: 'key',
  description: [
    'Shows the key fshare calls with: its name, prefix (its first characters, never the key), the',
    'scopes it holds, the addresses it may be used from, its expiry, when it was last used, and the',
    "account's plan. Any valid key may ask, whatever its scopes.",
    '--json: one object {"key_id","name","prefix","scopes","allowed_ips","created_at","expires_at",',
    '"last_used_at","plan"} (times UTC; expires_at and last_used_at may be null).',
  ].join('\n'),
  options: {},
  examples: ['fshare key', "fshare key --json | jq -r '.scopes[]'"],
  async run(context) {
    if (context.args.positionals.length > 0) throw new UsageError('key takes no arguments')
    const current = await context.client().key({ signal: context.signal })
    context.out.jsonLine(current)
    context.out.result(
      keyValues([
        ['key', String(current.key_id)],
        ['name', printable(current.name)],
        ['prefix', `${printable(current.prefix)}…`],
        ['scopes', current.scopes.length === 0 ? 'none' : current.scopes.map(printable).join(', ')],
        ['addresses', current.allowed_ips.length === 0 ? 'any' : current.allowed_ips.map(printable).join(', ')],
        ['created', `${current.created_at} UTC`],
        ['expires', current.expires_at === null ? 'never' : `${current.expires_at} UTC`],
        ['last used', current.last_used_at === null ? 'never' : `${current.last_used_at} UTC`],
        ['plan', printable(String(current.plan))],
      ]),
    )
    return EXIT_OK
  },
}
