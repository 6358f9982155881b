// fshare get ID|LINK [-o PATH] [--no-resume] [--password-stdin]
import { statSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { fileIdArgument } from '../args.js'
import type { Command } from '../command.js'
import { PASSWORD_STDIN, type Context } from '../context.js'
import { EXIT_OK, InterruptedError, UsageError } from '../exit-codes.js'
import { errorFromResponse, IntegrityError } from '../../errors.js'
import { formatBytes, printable } from '../output.js'
import type { FileRecord } from '../../types.js'

/** A name that is safe as a file in the current folder: no folders, no control characters. */
export function safeFileName(name: string | undefined, fallback: string): string {
  const clean = basename((name ?? '').replace(/\\/g, '/')).replace(/[\u0000-\u001f\u007f]/g, '_')
  return clean === '' || clean === '.' || clean === '..' ? fallback : clean
}

/** The file name of a `Content-Disposition` header: `filename*=UTF-8''…` first, then `filename="…"`. */
export function dispositionFileName(header: string | null): string | undefined {
  if (!header) return undefined
  const star = /filename\*\s*=\s*UTF-8''([^;\s]+)/i.exec(header)
  if (star) {
    try {
      return decodeURIComponent(star[1]!)
    } catch {
      // fall through to the plain parameter
    }
  }
  const plain = /filename\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;\s]+))/i.exec(header)
  return plain ? (plain[1]?.replace(/\\(.)/g, '$1') ?? plain[2]) : undefined
}

/**
 * The name a link's file goes by, asked without counting a download: HEAD and its
 * Content-Disposition; for a link with a limit or a password, which answers HEAD and GET with a
 * description instead of the file, the description's `filename` (such a link never streams on GET).
 */
async function linkFileName(context: Context, link: URL): Promise<string> {
  const fallback = safeFileName(decodeURIComponent(link.pathname.split('/').pop() ?? ''), 'download')
  const signal = AbortSignal.any([context.signal, AbortSignal.timeout(30_000)])
  const ask = (method: string) => fetch(link, { method, signal, headers: { accept: 'application/json' } }).catch(() => undefined)
  const head = await ask('HEAD')
  // No answer: the download that follows reports the error (with its retries).
  if (!head) return fallback
  if (!head.ok) throw errorFromResponse(head.status, head.headers, '')
  const disposition = dispositionFileName(head.headers.get('content-disposition'))
  if (disposition !== undefined || !/^application\/json\b/.test(head.headers.get('content-type') ?? '')) {
    return safeFileName(disposition, fallback)
  }
  const described = (await (await ask('GET'))?.json().catch(() => undefined)) as { download?: { filename?: unknown } } | undefined
  const filename = described?.download?.filename
  return safeFileName(typeof filename === 'string' ? filename : undefined, fallback)
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory()
  } catch {
    return false
  }
}

export const get: Command = {
  name: 'get',
  summary: 'download a file by id or public link (resumes a partial file)',
  usage: 'get ID|LINK [-o PATH] [--no-resume] [--password-stdin]',
  description: [
    'Downloads a file of the account (ID) or any public link (LINK; no key needed) to PATH,',
    "by default the file's name in the current folder (-o FOLDER puts it there, -o - writes to",
    'stdout). When PATH already holds the beginning of the file (an interrupted download), the',
    'download continues from there (Range + If-Range); a dropped connection is continued too.',
    "The finished file is checked against the file's SHA-256 (exit 11 when it does not match).",
    'Each get counts one download of the link (a limited link has that many); the link then grants',
    'a URL that serves the file for an hour without counting again: an interrupted get names it,',
    'and `fshare get` of that URL resumes for free. A link with a password: --password-stdin',
    '(a wrong one is exit 3, invalid_password).',
    '--json: one object {"path","size","sha256","resumed_from","file_id"} (file_id null for a LINK).',
  ].join('\n'),
  options: {
    output: { type: 'string', short: 'o', value: 'PATH', description: "where to write (default: the file's name; - for stdout)" },
    'no-resume': { type: 'boolean', description: 'start from byte 0 even when PATH holds part of the file' },
    'password-stdin': PASSWORD_STDIN,
  },
  examples: [
    'fshare get 12',
    'fshare get https://files.example.com/download/AbC… -o report.pdf',
    'fshare get 12 -o - | tar x',
    'fshare get https://files.example.com/download/AbC… --password-stdin < password.txt',
  ],
  async run(context) {
    const { values, positionals } = context.args
    const [target, ...rest] = positionals
    if (target === undefined || rest.length > 0) throw new UsageError('get needs exactly one ID or LINK')
    const output = typeof values.output === 'string' ? values.output : undefined
    if (output === '') throw new UsageError('-o needs a path')
    const toStdout = output === '-'
    if (toStdout && context.json) throw new UsageError('-o - and --json both want stdout: use one of them')

    let link: URL | undefined
    let record: FileRecord | undefined
    let client
    if (/^https?:\/\//i.test(target)) {
      try {
        link = new URL(target)
      } catch {
        throw new UsageError(`not a link: ${JSON.stringify(target.slice(0, 100))}`)
      }
      client = context.linkClient(link)
    } else {
      const id = fileIdArgument(target)
      client = context.client()
      record = await client.files.get(id, { signal: context.signal })
    }

    let path = '-'
    if (!toStdout) {
      const name = async () => (record ? safeFileName(record.filename, `file-${record.file_id}`) : await linkFileName(context, link!))
      if (output === undefined) path = await name()
      else if (isDirectory(output) || /[\\/]$/.test(output)) path = join(output, await name())
      else path = output
    }

    if (!toStdout && !isDirectory(dirname(path))) {
      // Checked here: the SDK would report a failed write as a dropped connection.
      throw Object.assign(new Error(`no folder ${dirname(path)} to write ${basename(path)} in`), { code: 'ENOENT' })
    }
    const password = await context.passwordFromStdin()
    const progress = context.progress(printable(basename(path === '-' ? (record?.filename ?? 'stdout') : path)).slice(0, 40))
    let result
    let grant: string | undefined
    try {
      result = await client.download(record ?? link!.href, toStdout ? context.io.stdout : path, {
        resume: values['no-resume'] !== true,
        password,
        onGrant: (url) => void (grant = url),
        onProgress: (done, total) => progress.update(done, total),
        signal: context.signal,
      })
      progress.finish()
    } catch (error) {
      progress.fail()
      if (error instanceof InterruptedError && !toStdout) {
        // Getting the link again counts another download (a limited link may have none left); its grant does not.
        const how = grant
          ? `within the hour, fshare get ${grant} -o ${printable(path)} resumes it without counting another download`
          : 'the same get resumes it'
        throw new InterruptedError(`interrupted: ${printable(path)} keeps what came; ${how}`)
      }
      if (error instanceof IntegrityError && error.message.includes('resume: false')) {
        // The SDK's advice, in the CLI's words.
        const { expected, actual } = error
        throw new IntegrityError(error.message.replace('download again with resume: false', 'run again with --no-resume'), {
          ...(expected === undefined ? {} : { expected }),
          ...(actual === undefined ? {} : { actual }),
        })
      }
      throw error
    }
    context.out.jsonLine({
      path,
      size: result.size,
      sha256: result.sha256,
      resumed_from: result.resumedFrom,
      file_id: record?.file_id ?? null,
    })
    const how =
      result.resumedFrom === result.size && result.size > 0
        ? ', already complete'
        : result.resumedFrom > 0
          ? `, resumed at ${formatBytes(result.resumedFrom)}`
          : ''
    const summary = `saved ${printable(path === '-' ? 'to stdout' : path)} (${formatBytes(result.size)}${how}, sha256 ${result.sha256})`
    if (toStdout) context.out.note(summary)
    else context.out.result(summary)
    return EXIT_OK
  },
}
