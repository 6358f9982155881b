// fshare zip ID... [-o PATH]
import { statSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { fileIdArgument } from '../args.js'
import type { Command } from '../command.js'
import { EXIT_OK, InterruptedError, UsageError } from '../exit-codes.js'
import { MAX_ARCHIVE_FILES } from '../../archive.js'
import { formatBytes, printable } from '../output.js'

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory()
  } catch {
    return false
  }
}

/** `files-20261127-233000.zip`, as the server names an archive (UTC). */
function defaultName(now = new Date()): string {
  return `files-${now.toISOString().slice(0, 19).replace(/[-:]/g, '').replace('T', '-')}.zip`
}

export const zip: Command = {
  name: 'zip',
  summary: 'download several files as one ZIP',
  usage: 'zip ID... [-o PATH]',
  description: [
    `Downloads up to ${MAX_ARCHIVE_FILES} files of the account as one ZIP archive, made by the server as it`,
    'streams (no compression: most shared files are compressed already). One entry per ID, in the',
    'order given; a name used twice gets " (2)" before its extension. An ID that is not the',
    "account's refuses the whole archive (exit 6, not_found) before any byte. PATH defaults to",
    'files-YYYYMMDD-HHMMSS.zip in the current folder (-o FOLDER puts it there, -o - writes to stdout).',
    'An archive cut off is fetched again from its start; one that cannot be finished is removed.',
    'Counts no download. --json: one object {"path","size","files"}.',
  ].join('\n'),
  options: {
    output: { type: 'string', short: 'o', value: 'PATH', description: 'where to write (default: files-….zip; - for stdout)' },
  },
  examples: [
    'fshare zip 12 13 14',
    'fshare zip 12 13 -o ~/Downloads/',
    'fshare ls --all --json | jq -r .file_id | head -100 | xargs fshare zip -o all.zip',
  ],
  async run(context) {
    const { values, positionals } = context.args
    if (positionals.length === 0) throw new UsageError('zip needs at least one ID')
    if (positionals.length > MAX_ARCHIVE_FILES) throw new UsageError(`zip takes at most ${MAX_ARCHIVE_FILES} IDs`)
    const ids = positionals.map(fileIdArgument)
    if (new Set(ids).size !== ids.length) throw new UsageError('each ID once: an archive holds a file once')
    const output = typeof values.output === 'string' ? values.output : undefined
    if (output === '') throw new UsageError('-o needs a path')
    const toStdout = output === '-'
    if (toStdout && context.json) throw new UsageError('-o - and --json both want stdout: use one of them')
    let path = '-'
    if (!toStdout) {
      if (output === undefined) path = defaultName()
      else if (isDirectory(output) || /[\\/]$/.test(output)) path = join(output, defaultName())
      else path = output
      if (!isDirectory(dirname(path))) {
        // Checked here: the SDK would report a failed write as a dropped connection.
        throw Object.assign(new Error(`no folder ${dirname(path)} to write ${basename(path)} in`), { code: 'ENOENT' })
      }
    }
    const client = context.client()
    const progress = context.progress(printable(basename(path === '-' ? 'stdout' : path)).slice(0, 40))
    let result
    try {
      result = await client.files.downloadArchive(ids, toStdout ? context.io.stdout : path, {
        onProgress: (done, total) => progress.update(done, total),
        signal: context.signal,
      })
      progress.finish()
    } catch (error) {
      progress.fail()
      if (error instanceof InterruptedError && !toStdout) throw new InterruptedError(`interrupted: ${printable(path)} was removed`)
      throw error
    }
    context.out.jsonLine({ path, size: result.size, files: ids.length })
    const summary = `saved ${printable(path === '-' ? 'to stdout' : path)} (${ids.length} file${ids.length === 1 ? '' : 's'}, ${formatBytes(result.size)})`
    if (toStdout) context.out.note(summary)
    else context.out.result(summary)
    return EXIT_OK
  },
}
