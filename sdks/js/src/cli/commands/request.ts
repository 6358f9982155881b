// fshare request create|list|close|files: upload requests, the links that let someone without an
// account send files to this account (scope requests:manage).
import { durationOption, integerOption, requestIdArgument, sizeOption, timeOption } from '../args.js'
import type { Command } from '../command.js'
import { PASSWORD_STDIN, type Context } from '../context.js'
import { EXIT_OK, UsageError } from '../exit-codes.js'
import { formatBytes, keyValues, printable, table } from '../output.js'
import type { FileRecord, UploadRequest, UploadRequestCreateParams } from '../../types.js'
import { forEachId } from './each-id.js'

/** What `fshare request --help` says before the list of its commands. */
export const REQUEST_GROUP = [
  'Upload requests: a link (https://…/r/<token>) you give to someone without an account (a client,',
  'a supplier) so they can send you files. What they send lands in this account (source',
  'upload_request); a request stops taking files when it expires, is full (--max-files,',
  '--max-total-size) or is closed. Needs a key with the requests:manage scope.',
].join('\n')

function files(request: UploadRequest): string {
  return request.max_files === null ? String(request.files_received) : `${request.files_received} of ${request.max_files}`
}

function bytes(request: UploadRequest): string {
  const received = formatBytes(request.bytes_received)
  return request.max_total_size === null ? received : `${received} of ${formatBytes(request.max_total_size)}`
}

/** One request as key/value lines. */
function describe(request: UploadRequest): string {
  return keyValues([
    ['request', String(request.request_id)],
    ['url', printable(request.url)],
    ['label', printable(request.label)],
    ['status', request.status],
    ['expires', `${request.expires_at} UTC`],
    ['files', files(request)],
    ['bytes', bytes(request)],
    ['max file size', request.max_file_size === null ? "the plan's" : formatBytes(request.max_file_size)],
    ['file expiry', request.file_expires_in === null ? 'never' : `${request.file_expires_in} s after each upload`],
    ['password', request.password_protected ? 'yes' : 'no'],
    ['message', request.message === null ? '-' : printable(request.message)],
    ['created', `${request.created_at} UTC`],
  ])
}

/** The one positional a command takes. */
function single(context: Context, what: string, usage: string): string {
  const [raw, ...rest] = context.args.positionals
  if (raw === undefined || rest.length > 0) throw new UsageError(`${usage} needs exactly one ${what}`)
  return raw
}

const RECORD_JSON = [
  '"request_id","url","label","message","expires_at","max_files","max_file_size","max_total_size",',
  '"file_expires_in","password_protected","files_received","bytes_received","status","created_at"',
]

export const requestCreate: Command = {
  name: 'request create',
  summary: 'make an upload request; prints the URL to give the guest',
  usage: 'request create --label TEXT --expires-in D|--expires-at TIME',
  description: [
    'Makes an upload request and prints it with its url: give that URL to the person who is to',
    'send you files (no account or key needed). --label (what they see as the title) and one of',
    '--expires-in / --expires-at (at most 90 days unless the operator allows more) are required.',
    'D is a duration: seconds (3600) or with a unit (30s, 15m, 12h, 7d, 2w; 1h30m). TIME is UTC:',
    '2026-12-04, "2026-12-04 10:00:00" or 2026-12-04T10:00:00Z. SIZE is bytes or with a unit',
    '(500K, 10M, 2G: binary units, also KiB, MiB, GiB). A value the server refuses is exit 7.',
    '--json: the request, one object {',
    `${RECORD_JSON.join('\n')}}.`,
  ].join('\n'),
  options: {
    label: { type: 'string', value: 'TEXT', description: 'the title the guest sees, 1 to 200 characters, one line (required)' },
    message: { type: 'string', value: 'TEXT', description: 'a note for the guest, up to 2,000 characters' },
    'expires-in': { type: 'string', value: 'D', description: 'the request takes files for D (7d, 12h, or seconds)' },
    'expires-at': { type: 'string', value: 'TIME', description: 'the request takes files until TIME (UTC)' },
    'max-files': { type: 'string', value: 'N', description: 'at most N files (1 to 10000)' },
    'max-file-size': { type: 'string', value: 'SIZE', description: "at most SIZE per file (default: the plan's maximum)" },
    'max-total-size': { type: 'string', value: 'SIZE', description: 'at most SIZE for all the files together' },
    'file-expires-in': { type: 'string', value: 'D', description: 'each file received expires D after its upload' },
    'password-stdin': PASSWORD_STDIN,
  },
  examples: [
    'fshare request create --label "Invoices for March" --expires-in 7d --max-files 10 --max-file-size 20M',
    'printf \'%s\' "$PASSWORD" | fshare request create --label "Scans" --expires-at 2026-12-31 --password-stdin --json | jq -r .url',
  ],
  async run(context) {
    const { values, positionals } = context.args
    if (positionals.length > 0) throw new UsageError(`request create takes no arguments, got ${JSON.stringify(positionals[0])}`)
    if (typeof values.label !== 'string') throw new UsageError('request create needs --label TEXT')
    const expiresIn = durationOption(values['expires-in'], 'expires-in')
    const expiresAt = timeOption(values['expires-at'], 'expires-at')
    if (expiresIn === undefined && expiresAt === undefined) {
      throw new UsageError('request create needs --expires-in D or --expires-at TIME')
    }
    if (expiresIn !== undefined && expiresAt !== undefined) throw new UsageError('--expires-in and --expires-at do not go together')
    const params: UploadRequestCreateParams = { label: values.label }
    if (typeof values.message === 'string') params.message = values.message
    if (expiresIn !== undefined) params.expires_in = expiresIn
    if (expiresAt !== undefined) params.expires_at = expiresAt
    const maxFiles = integerOption(values['max-files'], 'max-files', 1)
    if (maxFiles !== undefined) params.max_files = maxFiles
    const maxFileSize = sizeOption(values['max-file-size'], 'max-file-size')
    if (maxFileSize !== undefined) params.max_file_size = maxFileSize
    const maxTotalSize = sizeOption(values['max-total-size'], 'max-total-size')
    if (maxTotalSize !== undefined) params.max_total_size = maxTotalSize
    const fileExpiresIn = durationOption(values['file-expires-in'], 'file-expires-in')
    if (fileExpiresIn !== undefined) params.file_expires_in = fileExpiresIn
    const password = await context.passwordFromStdin()
    if (password !== undefined) params.password = password
    const request = await context.client().uploadRequests.create({ ...params, signal: context.signal })
    context.out.jsonLine(request)
    context.out.result(describe(request))
    return EXIT_OK
  },
}

export const requestList: Command = {
  name: 'request list',
  summary: "list the account's upload requests, newest first",
  usage: 'request list',
  description: [
    "Lists the account's upload requests, newest first, whatever their status: active (it takes",
    'files), full (--max-files or --max-total-size reached), expired or closed. FILES and BYTES',
    'are what it received (of its limit, when it has one).',
    '--json: one object {"upload_requests":[{',
    `${RECORD_JSON.join('\n')}}]}.`,
  ].join('\n'),
  options: {},
  examples: ['fshare request list', 'fshare request list --json | jq -r \'.upload_requests[] | select(.status == "active") | .url\''],
  async run(context) {
    if (context.args.positionals.length > 0) throw new UsageError('request list takes no arguments')
    const requests = await context.client().uploadRequests.list({ signal: context.signal })
    context.out.jsonLine({ upload_requests: requests })
    const rows = requests.map((r) => [
      String(r.request_id),
      r.status,
      files(r),
      bytes(r),
      r.expires_at,
      r.password_protected ? 'yes' : '',
      printable(r.label),
      printable(r.url),
    ])
    const header = ['ID', 'STATUS', 'FILES', 'BYTES', 'EXPIRES (UTC)', 'PASSWORD', 'LABEL', 'URL']
    if (rows.length > 0) context.out.result(table(header, rows, new Set([0])))
    context.out.result(`${requests.length} upload request${requests.length === 1 ? '' : 's'}`)
    return EXIT_OK
  },
}

export const requestClose: Command = {
  name: 'request close',
  summary: 'stop upload requests taking files',
  usage: 'request close ID...',
  description: [
    'Closes each upload request in turn: its URL stops taking files at once; it stays listed, and',
    'the files it received stay in the account. Closing a closed request is no error. An ID that',
    'fails is reported and the next one is tried; the exit code is that of the first failure.',
    '--json: one line per ID: {"ok":true,"request_id":5} or {"ok":false,"request_id":5,"error":{…}}.',
  ].join('\n'),
  options: {},
  examples: [
    'fshare request close 5',
    'fshare request list --json | jq -r \'.upload_requests[] | select(.status == "active") | .request_id\' | xargs fshare request close',
  ],
  run: (context) =>
    forEachId(
      context,
      { command: 'request close', argument: 'ID', parse: requestIdArgument, done: 'closed upload request', field: 'request_id' },
      (client, id) => client.uploadRequests.close(id, { signal: context.signal }),
    ),
}

function fileRows(list: readonly FileRecord[]): string[][] {
  return list.map((file) => [
    String(file.file_id),
    printable(file.filename),
    formatBytes(file.size),
    file.upload_date,
    file.expires_at ?? 'never',
    file.public_link,
  ])
}

export const requestFiles: Command = {
  name: 'request files',
  summary: 'list the files an upload request received, newest first',
  usage: 'request files ID [--limit N] [--before-id FILE_ID]',
  description: [
    'Lists one page of the files upload request ID received (those not deleted since), newest',
    "first. They are the account's files: fshare info, get and rm take their IDs. The last line",
    'names the --before-id of the next page.',
    '--json: one object {"files":[file records],"pagination":{"limit","next_before_id"}}; each',
    'record has "source":{"type":"upload_request","request_id":5}.',
  ].join('\n'),
  options: {
    limit: { type: 'string', value: 'N', description: 'files per page, 1 to 100 (default 20)' },
    'before-id': { type: 'string', value: 'FILE_ID', description: 'the files older than file FILE_ID' },
  },
  examples: ['fshare request files 5', "fshare request files 5 --limit 100 --json | jq -r '.files[].file_id' | xargs -n1 fshare get"],
  async run(context) {
    const id = requestIdArgument(single(context, 'ID', 'request files'))
    const limit = integerOption(context.args.values.limit, 'limit', 1, 100)
    const beforeId = integerOption(context.args.values['before-id'], 'before-id', 1)
    const list = await context.client().uploadRequests.files(id, { limit, before_id: beforeId, signal: context.signal })
    context.out.jsonLine(list)
    const header = ['ID', 'NAME', 'SIZE', 'UPLOADED (UTC)', 'EXPIRES (UTC)', 'LINK']
    if (list.files.length > 0) context.out.result(table(header, fileRows(list.files), new Set([0, 2])))
    const n = list.files.length
    const count = n === 0 ? 'no files' : `${n} file${n === 1 ? '' : 's'}`
    const next = list.pagination.next_before_id
    context.out.result(next === null ? count : `${count}; older: --before-id ${next}`)
    return EXIT_OK
  },
}

export const REQUEST_COMMANDS: readonly Command[] = [requestCreate, requestList, requestClose, requestFiles]
