// fshare ls [--search TEXT] [--type TYPE]... [--state STATE]... [--sort FIELD] [--order asc|desc] [--page N | --before-id ID] [--limit N] | --all
import { integerOption } from '../args.js'
import type { Command } from '../command.js'
import { EXIT_OK, UsageError } from '../exit-codes.js'
import { formatBytes, formatScan, printable, table } from '../output.js'
import {
  FILE_SORTS,
  FILE_STATES,
  SORT_ORDERS,
  type FileList,
  type FileQuery,
  type FileRecord,
  type FileSort,
  type FileState,
  type SortOrder,
} from '../../types.js'

/** The SCAN column is there when a file of the table has a scan (the server scans). */
function scanned(files: readonly FileRecord[]): boolean {
  return files.some((file) => file.scan != null)
}

function rows(files: readonly FileRecord[], withScan: boolean): string[][] {
  return files.map((file) => [
    String(file.file_id),
    printable(file.filename),
    formatBytes(file.size),
    file.upload_date,
    String(file.download_count),
    ...(withScan ? [formatScan(file.scan, true)] : []),
    file.public_link,
  ])
}

/**
 * `page 1 of 3, 20 shown, 45 files in all; older: --before-id 812` (or `20 shown older than 850, …`;
 * oldest first, `newer`). Only the upload order pages by --before-id: the other sorts say no ID.
 */
function summary(shown: number, p: FileList['pagination'], beforeId: number | undefined, order: SortOrder | undefined): string {
  if (p.total === 0) return 'no files'
  const past = order === 'asc' ? 'newer' : 'older'
  const where = beforeId === undefined ? `page ${p.page} of ${p.pages}, ${shown} shown` : `${shown} shown ${past} than ${beforeId}`
  const more = typeof p.next_before_id === 'number' ? `; ${past}: --before-id ${p.next_before_id}` : ''
  return `${where}, ${p.total} file${p.total === 1 ? '' : 's'} in all${more}`
}

/** A value of --sort, --order or --state: one of `allowed`. */
function choice<T extends string>(value: string | boolean | undefined, name: string, allowed: readonly T[]): T | undefined {
  if (value === undefined || typeof value === 'boolean') return undefined
  if (!(allowed as readonly string[]).includes(value)) {
    throw new UsageError(`--${name} must be one of ${allowed.join(', ')}, got ${JSON.stringify(value).slice(0, 60)}`)
  }
  return value as T
}

/** The values of a repeated --state, each one of FILE_STATES. */
function states(values: readonly string[] | undefined): FileState[] | undefined {
  return values?.map((value) => choice<FileState>(value, 'state', FILE_STATES)!)
}

const HEADER = ['ID', 'NAME', 'SIZE', 'UPLOADED (UTC)', 'DOWNLOADS', 'LINK']
const HEADER_WITH_SCAN = ['ID', 'NAME', 'SIZE', 'UPLOADED (UTC)', 'DOWNLOADS', 'SCAN', 'LINK']
const RIGHT = new Set([0, 2, 4])

function fileTable(files: readonly FileRecord[]): string {
  const withScan = scanned(files)
  return table(withScan ? HEADER_WITH_SCAN : HEADER, rows(files, withScan), RIGHT)
}

export const ls: Command = {
  name: 'ls',
  summary: 'list files, newest first, or found by name and sorted',
  usage:
    'ls [--search TEXT] [--type TYPE]... [--state STATE]... [--sort FIELD] [--order asc|desc] [--page N | --before-id ID] [--limit N] | ls --all [...]',
  description: [
    'Lists the files of the account, newest first: one page (--page, --limit), the files older',
    'than file ID (--before-id: the next page, which uploads and deletions meanwhile do not shift;',
    'each page says the ID to pass for the one after it), or every file (--all, fetched 100 at a',
    'time by --before-id, never one twice).',
    '--search TEXT lists only the files whose name contains TEXT, in any case. --sort orders by',
    'upload_date (the default), filename, size or download_count, --order desc (the default) or asc;',
    'ties by file ID. --before-id pages in upload order only (oldest first with --order asc: the',
    'files newer than ID); the other sorts page by --page, and --all goes through their pages.',
    '--type lists only the files of a media type (image: image/png, image/jpeg, ...) or an exact',
    'type/subtype (application/pdf); --state only those expiring (with an expiry), with expired_links',
    '(a link expired or used up; revoked ones do not count) or from_upload_request. Each may be',
    'repeated: any of its values; different options: all of them.',
    "When the server scans files for viruses, a SCAN column shows each file's scan status (pending,",
    'clean, error, skipped; "-" for a file stored before scanning); files found infected are not listed.',
    '--json: one page is one object {"files":[file records],"pagination":{"page","limit","total",',
    '"pages","next_before_id"}} ("page" is null with --before-id; "next_before_id" is null on the',
    'last page); with --all, one file record per line (JSON lines), printed as the pages arrive.',
  ].join('\n'),
  options: {
    page: { type: 'string', value: 'N', description: 'page number, from 1 (default 1)' },
    'before-id': { type: 'string', value: 'ID', description: 'the files older than file ID (the last page said which ID)' },
    limit: { type: 'string', value: 'N', description: 'files per page, 1 to 100 (default 20)' },
    all: { type: 'boolean', short: 'a', description: 'every file, across all pages' },
    search: { type: 'string', short: 'q', value: 'TEXT', description: 'only the files whose name contains TEXT (any case)' },
    sort: { type: 'string', value: 'FIELD', description: `order by ${FILE_SORTS.join(', ')} (default upload_date)` },
    order: { type: 'string', value: 'DIR', description: 'desc (default) or asc' },
    type: { type: 'string', value: 'TYPE', multiple: true, description: 'only files of this media type or type/subtype' },
    state: { type: 'string', value: 'STATE', multiple: true, description: `only files ${FILE_STATES.join(', ')}` },
  },
  examples: [
    'fshare ls',
    'fshare ls --page 2 --limit 50',
    'fshare ls --before-id 1234',
    'fshare ls --search invoice --sort size',
    'fshare ls --type image --type application/pdf --state expiring',
    'fshare ls --all --sort filename --order asc --json | jq -r .filename',
    'fshare ls --all --json | jq -r .public_link',
  ],
  async run(context) {
    const { values, positionals } = context.args
    if (positionals.length > 0) throw new UsageError(`ls takes no arguments, got ${JSON.stringify(positionals[0])}`)
    const page = integerOption(values.page, 'page', 1)
    const limit = integerOption(values.limit, 'limit', 1, 100)
    const beforeId = integerOption(values['before-id'], 'before-id', 1)
    if (beforeId !== undefined && page !== undefined) throw new UsageError('--before-id and --page do not go together')
    const query: FileQuery = {
      q: typeof values.search === 'string' ? values.search : undefined,
      sort: choice<FileSort>(values.sort, 'sort', FILE_SORTS),
      order: choice<SortOrder>(values.order, 'order', SORT_ORDERS),
      type: context.args.lists.type,
      state: states(context.args.lists.state),
    }
    if (beforeId !== undefined && (query.sort ?? 'upload_date') !== 'upload_date') {
      throw new UsageError('--before-id pages only in upload order (--sort upload_date): use --page')
    }
    const client = context.client()
    if (values.all === true) {
      if (page !== undefined) throw new UsageError('--all and --page do not go together')
      if (beforeId !== undefined) throw new UsageError('--all and --before-id do not go together')
      const files: FileRecord[] = []
      for await (const file of client.files.iterate({ ...query, limit: limit ?? 100, signal: context.signal })) {
        context.out.jsonLine(file)
        if (!context.json) files.push(file)
      }
      if (files.length > 0) context.out.result(fileTable(files))
      context.out.result(`${files.length} file${files.length === 1 ? '' : 's'}`)
      return EXIT_OK
    }
    const list = await client.files.list({ ...query, page, limit, before_id: beforeId, signal: context.signal })
    context.out.jsonLine(list)
    const { pagination: p } = list
    if (list.files.length > 0) context.out.result(fileTable(list.files))
    context.out.result(summary(list.files.length, p, beforeId, query.order))
    return EXIT_OK
  },
}
