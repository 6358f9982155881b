// fshare upload FILE... [--resumable] [--expires-in D]
import { basename } from 'node:path'
import { durationOption } from '../args.js'
import { UsageError, exitCodeFor, EXIT_OK, InterruptedError } from '../exit-codes.js'
import type { Command } from '../command.js'
import { errorJson, formatBytes, formatScan, printable } from '../output.js'

export const upload: Command = {
  name: 'upload',
  summary: 'upload files',
  usage: 'upload FILE... [--resumable] [--expires-in D]',
  description: [
    'Uploads each FILE in turn and prints its id, size and public link. A FILE that fails is',
    'reported and the next one is tried; the exit code is that of the first failure.',
    'Files of 64 MiB and more go through resumable uploads (chunks of 16 MiB, resumed after a',
    'dropped connection) when the server offers them; --resumable uses them for every file.',
    'With --expires-in D the files and their links are gone D after the upload (a duration:',
    'seconds, or 30s, 15m, 12h, 7d, 2w).',
    'When the server scans files for viruses, the line ends in the scan status (", scan pending":',
    'the link answers once the scan found the file clean; fshare info ID shows the verdict).',
    '--json: one line per FILE: {"ok":true,"path":…,"file":{file record}} or',
    '{"ok":false,"path":…,"error":{…}}.',
  ].join('\n'),
  options: {
    resumable: { type: 'boolean', description: 'always use resumable uploads (tus), whatever the size' },
    'expires-in': { type: 'string', value: 'D', description: 'the files expire D after the upload (30s, 15m, 12h, 7d, or seconds)' },
  },
  examples: [
    'fshare upload report.pdf photos/*.jpg',
    'fshare upload --resumable --json big.iso',
    'fshare upload --expires-in 7d slides.pdf',
  ],
  async run(context) {
    const paths = context.args.positionals
    if (paths.length === 0) throw new UsageError('upload needs at least one FILE')
    const client = context.client()
    const resumable = context.args.values.resumable === true ? true : undefined
    const expiresIn = durationOption(context.args.values['expires-in'], 'expires-in')
    let exitCode = EXIT_OK
    for (const path of paths) {
      const progress = context.progress(printable(basename(path)).slice(0, 40))
      try {
        const file = await client.files.upload(path, {
          resumable,
          expires_in: expiresIn,
          onProgress: (sent, total) => progress.update(sent, total),
          signal: context.signal,
        })
        progress.finish()
        const expiry = file.expires_at ? `, expires ${file.expires_at} UTC` : ''
        const scan = file.scan ? `, scan ${formatScan(file.scan, true)}` : ''
        context.out.result(
          `uploaded ${printable(path)}: id ${file.file_id}, ${formatBytes(file.size)}, ${file.public_link}${expiry}${scan}`,
        )
        context.out.jsonLine({ ok: true, path, file })
      } catch (error) {
        progress.fail()
        if (error instanceof InterruptedError) throw error
        context.out.error(error, `upload ${printable(path)}`)
        context.out.jsonLine({ ok: false, path, error: errorJson(error) })
        if (exitCode === EXIT_OK) exitCode = exitCodeFor(error)
      }
    }
    return exitCode
  },
}
