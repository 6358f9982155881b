// fshare link create|list|revoke|rotate: a file's links, each with its own expiry, download limit
// and password.
import { durationOption, fileIdArgument, integerOption, linkIdArgument } from '../args.js'
import type { Command } from '../command.js'
import { PASSWORD_STDIN, type Context } from '../context.js'
import { EXIT_OK, UsageError } from '../exit-codes.js'
import { keyValues, printable, table } from '../output.js'
import type { Link, LinkOptions } from '../../types.js'
import { forEachId } from './each-id.js'

/** What `fshare link --help` says before the list of its commands. */
export const LINK_GROUP = [
  'A file has a default link (its public link) and may have more, each with its own token,',
  'expiry, download limit and password, revoked or rotated on its own. A link with a limit or',
  'a password is downloaded with a POST (fshare get does it), so link previews and bots never',
  'use it up.',
].join('\n')

function downloads(link: Link): string {
  return link.max_downloads === null ? String(link.download_count) : `${link.download_count} of ${link.max_downloads}`
}

function expires(link: Link): string {
  return link.expires_at === null ? 'never' : `${link.expires_at} UTC`
}

/** One link as key/value lines (create, rotate). */
function describe(link: Link): string {
  return keyValues([
    ['link', String(link.link_id)],
    ['url', link.url],
    ['file', String(link.file_id)],
    ['status', link.status + (link.default ? ' (the default link)' : '')],
    ['downloads', downloads(link)],
    ['expires', expires(link)],
    ['password', link.password_protected ? 'yes' : 'no'],
    ['label', link.label === null ? '-' : printable(link.label)],
  ])
}

/** The one positional a command takes. */
function single(context: Context, what: string, usage: string): string {
  const [raw, ...rest] = context.args.positionals
  if (raw === undefined || rest.length > 0) throw new UsageError(`${usage} needs exactly one ${what}`)
  return raw
}

function printLink(context: Context, link: Link): number {
  context.out.jsonLine(link)
  context.out.result(describe(link))
  return EXIT_OK
}

const RECORD_JSON =
  '--json: the link record, one object {"link_id","file_id","url","default","label","expires_at",\n"max_downloads","download_count","password_protected","status","created_at"}.'

export const linkCreate: Command = {
  name: 'link create',
  summary: 'make a new link to a file, with an expiry, a download limit, a password',
  usage: 'link create FILE_ID [--expires-in D] [--max-downloads N] [--password-stdin] [--label TEXT]',
  description: [
    'Makes a new link to file FILE_ID and prints it. Without options the link works like the',
    'public link; each option adds a policy. A file has at most 100 links that are not revoked.',
    'D is a duration: seconds (3600) or with a unit (30s, 15m, 12h, 7d, 2w; 1h30m).',
    RECORD_JSON,
  ].join('\n'),
  options: {
    'expires-in': { type: 'string', value: 'D', description: 'the link stops working after D (30s, 15m, 12h, 7d, or seconds)' },
    'max-downloads': { type: 'string', value: 'N', description: 'the link stops working after N downloads (1 to 1000000)' },
    'password-stdin': PASSWORD_STDIN,
    label: { type: 'string', value: 'TEXT', description: 'a note for you (up to 100 characters, one line)' },
  },
  examples: [
    'fshare link create 12 --expires-in 7d --max-downloads 3 --label "for the auditors"',
    'printf \'%s\' "$PASSWORD" | fshare link create 12 --password-stdin --json | jq -r .url',
  ],
  async run(context) {
    const fileId = fileIdArgument(single(context, 'FILE_ID', 'link create'))
    const { values } = context.args
    const options: LinkOptions = {}
    const expiresIn = durationOption(values['expires-in'], 'expires-in')
    if (expiresIn !== undefined) options.expires_in = expiresIn
    const maxDownloads = integerOption(values['max-downloads'], 'max-downloads', 1)
    if (maxDownloads !== undefined) options.max_downloads = maxDownloads
    if (typeof values.label === 'string') options.label = values.label
    const password = await context.passwordFromStdin()
    if (password !== undefined) options.password = password
    const link = await context.client().links.create(fileId, { ...options, signal: context.signal })
    return printLink(context, link)
  },
}

export const linkList: Command = {
  name: 'link list',
  summary: "list a file's links, with their status and counts",
  usage: 'link list FILE_ID',
  description: [
    "Lists file FILE_ID's links: the default link first, then the newest first. Revoked links",
    'stay listed for 30 days. STATUS is active, expired, exhausted (no downloads left) or revoked.',
    '--json: one object {"links":[link records]}.',
  ].join('\n'),
  options: {},
  examples: ['fshare link list 12', 'fshare link list 12 --json | jq -r \'.links[] | select(.status == "active") | .url\''],
  async run(context) {
    const fileId = fileIdArgument(single(context, 'FILE_ID', 'link list'))
    const links = await context.client().links.list(fileId, { signal: context.signal })
    context.out.jsonLine({ links })
    const rows = links.map((link) => [
      String(link.link_id),
      link.default ? 'yes' : '',
      link.status,
      downloads(link),
      link.expires_at ?? 'never',
      link.password_protected ? 'yes' : '',
      link.label === null ? '-' : printable(link.label),
      link.url,
    ])
    const header = ['ID', 'DEFAULT', 'STATUS', 'DOWNLOADS', 'EXPIRES (UTC)', 'PASSWORD', 'LABEL', 'URL']
    context.out.result(table(header, rows, new Set([0, 3])))
    context.out.result(`${links.length} link${links.length === 1 ? '' : 's'}`)
    return EXIT_OK
  },
}

export const linkRevoke: Command = {
  name: 'link revoke',
  summary: 'make links stop working',
  usage: 'link revoke LINK_ID...',
  description: [
    'Revokes each link in turn: its URL stops working at once (it stays listed for 30 days). A',
    "file's default link cannot be revoked (exit 7, default_link_required): rotate it. An ID that",
    'fails is reported and the next one is tried; the exit code is that of the first failure.',
    '--json: one line per ID: {"ok":true,"link_id":12} or {"ok":false,"link_id":12,"error":{…}}.',
  ].join('\n'),
  options: {},
  examples: [
    'fshare link revoke 31',
    "fshare link list 12 --json | jq -r '.links[] | select(.default | not) | .link_id' | xargs fshare link revoke",
  ],
  run: (context) =>
    forEachId(
      context,
      { command: 'link revoke', argument: 'LINK_ID', parse: linkIdArgument, done: 'revoked', field: 'link_id' },
      (client, id) => client.links.delete(id, { signal: context.signal }),
    ),
}

export const linkRotate: Command = {
  name: 'link rotate',
  summary: 'give a link a new URL; the old one stops working',
  usage: 'link rotate LINK_ID',
  description: [
    'Gives link LINK_ID a new URL and prints it: the old URL stops working at once; the policy and',
    "the counts stay. Rotating a file's default link changes its public link.",
    RECORD_JSON,
  ].join('\n'),
  options: {},
  examples: ['fshare link rotate 31', 'fshare link rotate 31 --json | jq -r .url'],
  async run(context) {
    const linkId = linkIdArgument(single(context, 'LINK_ID', 'link rotate'))
    return printLink(context, await context.client().links.rotate(linkId, { signal: context.signal }))
  },
}
