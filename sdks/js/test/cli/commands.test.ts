// Every command of the built `fshare`, run as a process against the launcher's server: human
// output, --json shapes, --help everywhere, usage errors, several FILEs/IDs, and `get` resuming a
// partial file. The key must show in no output.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fshare, jsonLines, outputs } from '../helpers/cli.js'
import { randomBytes, server, sha256Hex, tempDir } from '../helpers/env.js'

const tmp = tempDir()
const ESC = '\u001b'
const COMMANDS = ['upload', 'ls', 'info', 'get', 'rm', 'link create', 'link list', 'link revoke', 'link rotate', 'stats']

afterAll(() => tmp.remove())

describe.sequential('fshare', () => {
  const small = new TextEncoder().encode('hello from the cli\n')
  const data = randomBytes(2 * 1024 * 1024 + 3, 21)
  beforeAll(() => {
    writeFileSync(tmp.file('small.txt'), small)
    writeFileSync(tmp.file('data.bin'), data)
  })
  let smallId: number
  let dataId: number
  let dataLink: string

  describe('help and usage', () => {
    it('--help, -h and help print the commands, options, environment and exit codes (exit 0)', async () => {
      const runs = await Promise.all([fshare(['--help']), fshare(['-h']), fshare(['help'])])
      for (const run of runs) {
        expect(run).toMatchObject({ code: 0, stderr: '' })
        for (const command of COMMANDS) expect(run.stdout).toContain(`  ${command}`)
        expect(run.stdout).toContain('FILESHARE_API_KEY')
        expect(run.stdout).toMatch(/^\s+12 {2}ConfigurationError/m)
      }
      expect(runs[1]!.stdout).toBe(runs[0]!.stdout)
    })

    it('--help on every command, without a key or URL (exit 0)', async () => {
      const runs = await Promise.all(
        COMMANDS.map((command) => command.split(' ')).flatMap((words) => [
          fshare([...words, '--help'], { account: 'none' }),
          fshare(['help', ...words], { account: 'none' }),
          fshare(['--json', ...words, '-h']),
        ]),
      )
      COMMANDS.forEach((command, i) => {
        for (const run of runs.slice(i * 3, i * 3 + 3)) {
          expect(run.code).toBe(0)
          expect(run.stderr).toBe('')
          expect(run.stdout).toMatch(new RegExp(`^Usage: fshare ${command} `))
          expect(run.stdout).toContain('--api-key KEY')
          expect(run.stdout).toContain('Examples:')
        }
      })
      expect(runs.find((r, i) => COMMANDS[Math.floor(i / 3)] === 'get')!.stdout).toContain('--no-resume')
      expect(runs.find((r, i) => COMMANDS[Math.floor(i / 3)] === 'ls')!.stdout).toContain('--all')
    })

    it('--version', async () => {
      const run = await fshare(['--version'])
      expect(run).toMatchObject({ code: 0, stdout: expect.stringMatching(/^fshare \d+\.\d+\.\d+\n$/) })
    })

    it.each([
      [[], /Usage: fshare COMMAND/],
      [['frob'], /unknown command "frob"/],
      [['ls', '--bogus'], /Unknown option '--bogus'/],
      [['ls', 'extra'], /ls takes no arguments/],
      [['ls', '--limit', '500'], /--limit must be an integer from 1 to 100/],
      [['ls', '--all', '--page', '2'], /--all and --page/],
      [['ls', '--all', '--before-id', '2'], /--all and --before-id/],
      [['ls', '--page', '1', '--before-id', '2'], /--before-id and --page/],
      [['ls', '--before-id', '0'], /--before-id must be an integer from 1 up/],
      [['ls', '--sort', 'name'], /--sort must be one of upload_date, filename, size, download_count, got "name"/],
      [['ls', '--order', 'up'], /--order must be one of asc, desc, got "up"/],
      [['ls', '--sort', 'size', '--before-id', '3'], /--before-id pages only in upload order/],
      [
        ['ls', '--state', 'expiring', '--state', 'expired'],
        /--state must be one of expiring, expired_links, from_upload_request, got "expired"/,
      ],
      [['upload'], /at least one FILE/],
      [['info'], /exactly one ID/],
      [['info', 'abc'], /a file ID is a positive integer/],
      [['rm', '1', 'x'], /a file ID is a positive integer, got "x"/],
      [['get', '1', '-o', '-', '--json'], /both want stdout/],
      [['stats', '--retries', 'many'], /--retries must be an integer/],
      [['ls', '--api-key'], /argument missing/],
    ])('usage error for %j: exit 2, a message on stderr, nothing on stdout', async (args, message) => {
      const run = await fshare(args)
      expect(run.code).toBe(2)
      expect(run.stdout).toBe('')
      expect(run.stderr).toMatch(message)
    })
  })

  describe('upload', () => {
    it('uploads several files, one line each; progress as plain lines on stderr (not a terminal)', async () => {
      const run = await fshare(['upload', 'small.txt', 'data.bin'], { cwd: tmp.dir })
      expect(run.code).toBe(0)
      const lines = run.stdout.trim().split('\n')
      expect(lines).toHaveLength(2)
      expect(lines[0]).toMatch(/^uploaded small\.txt: id \d+, 19 B, http:\/\/\S+\/download\/\S+$/)
      expect(lines[1]).toMatch(/^uploaded data\.bin: id \d+, 2\.0 MiB, /)
      expect(run.stderr).toMatch(/^data\.bin: 100% {2}2\.0 MiB\/2\.0 MiB {2}[\d.]+ [KMG]?i?B\/s {2}in [\d.]+s$/m)
      expect(run.stdout + run.stderr).not.toContain(ESC)
    })

    it('--json: one line per FILE; a failing FILE is reported, the others go on; exit = first failure', async () => {
      const run = await fshare(['upload', '--json', 'small.txt', 'missing.txt', 'data.bin'], { cwd: tmp.dir })
      expect(run.code).toBe(1) // the missing file: a local error
      const [first, missing, last] = jsonLines(run.stdout)
      expect(first).toMatchObject({
        ok: true,
        path: 'small.txt',
        file: { filename: 'small.txt', size: small.length, sha256: sha256Hex(small) },
      })
      expect(missing).toMatchObject({ ok: false, path: 'missing.txt', error: { type: 'Error', code: 'ENOENT', exit_code: 1 } })
      expect(last).toMatchObject({ ok: true, path: 'data.bin', file: { size: data.length, sha256: sha256Hex(data) } })
      expect(Object.keys(first!.file).sort()).toEqual(
        [
          'content_type',
          'download_count',
          'expires_at',
          'file_id',
          'filename',
          'public_link',
          'scan',
          'sha256',
          'size',
          'source',
          'upload_date',
        ].sort(),
      )
      // --json: no progress, only the error message on stderr
      expect(run.stderr.trim()).toBe('fshare: upload missing.txt: no such file or directory')
      smallId = first!.file.file_id
      dataId = last!.file.file_id
      dataLink = last!.file.public_link
    })

    it('--resumable uploads through tus', async () => {
      const run = await fshare(['upload', '--resumable', '--json', 'data.bin'], { cwd: tmp.dir })
      expect(run.code).toBe(0)
      const [line] = jsonLines(run.stdout)
      expect(line).toMatchObject({ ok: true, file: { size: data.length, sha256: sha256Hex(data), filename: 'data.bin' } })
      await fshare(['rm', String(line!.file.file_id)])
    })
  })

  describe('ls, info, stats', () => {
    it('ls: a table of one page, newest first, and --json {files, pagination}', async () => {
      const [human, json, second] = await Promise.all([
        fshare(['ls', '--limit', '2']),
        fshare(['ls', '--json', '--limit', '2']),
        fshare(['ls', '--json', '--limit', '1', '--page', '2']),
      ])
      expect(human.code).toBe(0)
      expect(human.stdout).toMatch(/^ *ID +NAME +SIZE +UPLOADED \(UTC\) +DOWNLOADS +LINK\n/)
      expect(human.stdout).toMatch(/^page 1 of \d+, 2 shown, \d+ files in all(; older: --before-id \d+)?$/m)
      expect(human.stdout).not.toContain(ESC)
      const page = JSON.parse(json.stdout) as { files: { file_id: number }[]; pagination: Record<string, number> }
      expect(page.pagination).toMatchObject({ page: 1, limit: 2 })
      expect(page.files).toHaveLength(2)
      expect(JSON.parse(second.stdout)).toMatchObject({ pagination: { page: 2, limit: 1 }, files: [expect.any(Object)] })
    })

    it('ls --all: every file; --json gives one record per line', async () => {
      const [human, json] = await Promise.all([fshare(['ls', '--all']), fshare(['ls', '--all', '--json', '--limit', '1'])])
      expect(human.code).toBe(0)
      expect(human.stdout).toMatch(/^\d+ files$/m)
      const records = jsonLines(json.stdout)
      const ids = records.map((r) => r.file_id)
      expect(ids).toContain(smallId)
      expect(ids).toContain(dataId)
      expect(new Set(ids).size).toBe(ids.length)
      expect(records.find((r) => r.file_id === dataId)).toMatchObject({ filename: 'data.bin', size: data.length })
    })

    it('ls --search, --sort, --order: the matching files in that order, one page and with --all', async () => {
      const [page, all, oldest] = await Promise.all([
        fshare(['ls', '--json', '--search', 'DATA.BIN', '--sort', 'size', '--order', 'asc']),
        fshare(['ls', '--all', '--json', '--limit', '1', '-q', 'small', '--sort', 'filename', '--order', 'asc']),
        fshare(['ls', '--limit', '1', '--order', 'asc', '--search', 'small']),
      ])
      const listed = JSON.parse(page.stdout) as { files: { file_id: number; filename: string; size: number }[] }
      expect(listed.files.map((f) => f.file_id)).toContain(dataId)
      for (const file of listed.files) expect(file.filename.toLowerCase()).toContain('data.bin')
      const sizes = listed.files.map((f) => f.size)
      expect(sizes).toEqual([...sizes].sort((a, b) => a - b))
      const records = jsonLines(all.stdout)
      expect(records.map((r) => r.file_id)).toContain(smallId)
      const names = records.map((r) => String(r.filename).toLowerCase())
      for (const name of names) expect(name).toContain('small')
      expect(names).toEqual([...names].sort())
      expect(oldest.code).toBe(0)
      expect(oldest.stdout).toMatch(/^page 1 of \d+, 1 shown, \d+ files? in all(; newer: --before-id \d+)?$/m)
    })

    it('ls --type and --state, each repeatable (any of): one page and with --all', async () => {
      const [text, both, all, expiring] = await Promise.all([
        fshare(['ls', '--json', '--limit', '100', '--type', 'TEXT/plain', '--search', 'small']),
        fshare(['ls', '--json', '--limit', '100', '--type', 'image', '--type', 'application/octet-stream', '--type', 'text']),
        fshare(['ls', '--all', '--json', '--limit', '1', '--type', 'text/plain', '--type', 'video', '-q', 'small']),
        fshare(['ls', '--json', '--state', 'expiring', '--state', 'from_upload_request', '--type', 'text/plain']),
      ])
      const ids = (run: { stdout: string }) => (JSON.parse(run.stdout) as { files: { file_id: number }[] }).files.map((f) => f.file_id)
      expect(ids(text)).toContain(smallId)
      expect(ids(text)).not.toContain(dataId)
      expect(ids(both)).toEqual(expect.arrayContaining([smallId, dataId]))
      const records = jsonLines(all.stdout)
      expect(records.map((r) => r.file_id)).toContain(smallId)
      for (const record of records) expect(record.content_type).toBe('text/plain')
      expect(expiring.code).toBe(0)
      expect(ids(expiring)).not.toContain(smallId) // uploaded without an expiry
    })

    it('info: key/value lines, and --json the file record', async () => {
      const [human, json] = await Promise.all([fshare(['info', String(dataId)]), fshare(['info', String(dataId), '--json'])])
      expect(human.code).toBe(0)
      expect(human.stdout).toMatch(/^id +\d+$/m)
      expect(human.stdout).toMatch(new RegExp(`^sha256 +${sha256Hex(data)}$`, 'm'))
      expect(human.stdout).toMatch(/^size +2\.0 MiB \(2097155 bytes\)$/m)
      expect(JSON.parse(json.stdout)).toMatchObject({ file_id: dataId, filename: 'data.bin', size: data.length, public_link: dataLink })
    })

    it("stats: the account's usage and limits, and --json the API's object", async () => {
      const [human, json] = await Promise.all([fshare(['stats']), fshare(['stats', '--json'])])
      expect(human.code).toBe(0)
      expect(human.stdout).toMatch(/^plan +pro$/m)
      expect(human.stdout).toMatch(/^max file size +5\.0 GiB$/m)
      expect(human.stdout).toMatch(/^storage +\S+ \S+ used, \S+ \S+ reserved by uploads in progress$/m)
      expect(human.stdout).toMatch(/^storage quota +100 GiB \(\S+ \S+ free\)$/m)
      const stats = JSON.parse(json.stdout)
      expect(stats).toMatchObject({
        plan: 'pro',
        stats: { total_files: expect.any(Number), storage_reserved: expect.any(Number) },
        limits: { daily_uploads: 500, max_storage: 100 * 1024 ** 3 },
      })
    })
  })

  describe('get', () => {
    it("downloads by ID to the file's name, by LINK without a key, to a folder, and to stdout", async () => {
      mkdirSync(tmp.file('by-id'))
      mkdirSync(tmp.file('into'))
      const [byId, byLink, toFolder, toStdout] = await Promise.all([
        fshare(['get', String(dataId)], { cwd: tmp.file('by-id') }),
        fshare(['get', dataLink, '-o', 'link.bin', '--json'], { cwd: tmp.dir, account: 'none' }),
        fshare(['get', String(smallId), '-o', 'into'], { cwd: tmp.dir }),
        fshare(['get', String(smallId), '-o', '-']),
      ])
      expect(byId.code).toBe(0)
      expect(byId.stdout).toBe(`saved data.bin (2.0 MiB, sha256 ${sha256Hex(data)})\n`)
      expect(sha256Hex(readFileSync(tmp.file('by-id/data.bin')))).toBe(sha256Hex(data))
      expect(byLink.code).toBe(0)
      expect(JSON.parse(byLink.stdout)).toEqual({
        path: 'link.bin',
        size: data.length,
        sha256: sha256Hex(data),
        resumed_from: 0,
        file_id: null,
      })
      expect(readFileSync(tmp.file('into/small.txt'))).toEqual(Buffer.from(small))
      expect(toStdout.code).toBe(0)
      expect(toStdout.stdout).toBe(new TextDecoder().decode(small))
      expect(toStdout.stderr).toMatch(/^saved to stdout \(19 B, sha256 /m)
    })

    it('a LINK without -o is saved under the name its server gives', async () => {
      const run = await fshare(['get', dataLink], { cwd: tmp.file('into'), account: 'none' })
      expect(run.code).toBe(0)
      expect(existsSync(tmp.file('into/data.bin'))).toBe(true)
    })

    it('resumes a partial output file (Range), and says so', async () => {
      writeFileSync(tmp.file('partial.bin'), data.subarray(0, 700_000))
      const run = await fshare(['get', String(dataId), '-o', 'partial.bin', '--json'], { cwd: tmp.dir })
      expect(run.code).toBe(0)
      expect(JSON.parse(run.stdout)).toEqual({
        path: 'partial.bin',
        size: data.length,
        sha256: sha256Hex(data),
        resumed_from: 700_000,
        file_id: dataId,
      })
      expect(sha256Hex(readFileSync(tmp.file('partial.bin')))).toBe(sha256Hex(data))

      writeFileSync(tmp.file('partial2.bin'), data.subarray(0, 1_000_000))
      const human = await fshare(['get', dataLink, '-o', 'partial2.bin'], { cwd: tmp.dir })
      expect(human.stdout).toBe(`saved partial2.bin (2.0 MiB, resumed at 977 KiB, sha256 ${sha256Hex(data)})\n`)
      const again = await fshare(['get', String(dataId), '-o', 'partial2.bin'], { cwd: tmp.dir })
      expect(again.stdout).toContain('already complete')
    })

    it('IntegrityError (exit 11) when the partial file held other bytes; --no-resume starts over', async () => {
      const wrong = Buffer.from(data.subarray(0, 300_000))
      wrong[5] = wrong[5]! ^ 0xff
      writeFileSync(tmp.file('wrong.bin'), wrong)
      const run = await fshare(['get', String(dataId), '-o', 'wrong.bin', '--json'], { cwd: tmp.dir })
      expect(run.code).toBe(11)
      expect(JSON.parse(run.stdout)).toMatchObject({ error: { type: 'IntegrityError', exit_code: 11, expected: sha256Hex(data) } })
      expect(run.stderr).toContain('--no-resume')
      const fresh = await fshare(['get', String(dataId), '-o', 'wrong.bin', '--no-resume', '--json'], { cwd: tmp.dir })
      expect(fresh.code).toBe(0)
      expect(JSON.parse(fresh.stdout)).toMatchObject({ resumed_from: 0, sha256: sha256Hex(data) })
    })

    it('a missing output folder is a local error (exit 1)', async () => {
      const run = await fshare(['get', String(smallId), '-o', 'no/such/folder/x.txt'], { cwd: tmp.dir })
      expect(run.code).toBe(1)
      expect(run.stderr).toContain('no folder no/such/folder')
    })
  })

  describe('rm', () => {
    it('deletes several files, one line each; an unknown ID is reported, the others go on; exit = first failure', async () => {
      const run = await fshare(['rm', '--json', String(smallId), '999999999', String(dataId)])
      expect(run.code).toBe(6)
      expect(jsonLines(run.stdout)).toEqual([
        { ok: true, file_id: smallId },
        {
          ok: false,
          file_id: 999999999,
          error: expect.objectContaining({ type: 'NotFoundError', status: 404, code: 'not_found', exit_code: 6 }),
        },
        { ok: true, file_id: dataId },
      ])
      expect(run.stderr).toMatch(/^fshare: rm 999999999: NotFoundError: 404 not_found: .*\(request id [0-9a-f-]{36}\)$/m)
      const gone = await fshare(['info', String(dataId)])
      expect(gone.code).toBe(6)
      const human = await fshare(['rm', String(smallId)])
      expect(human.code).toBe(6)
    })

    it('human output: one line per deleted file', async () => {
      const uploaded = jsonLines((await fshare(['upload', '--json', 'small.txt'], { cwd: tmp.dir })).stdout)[0]!
      const run = await fshare(['rm', String(uploaded.file.file_id)])
      expect(run).toMatchObject({ code: 0, stdout: `deleted ${uploaded.file.file_id}\n`, stderr: '' })
    })
  })

  describe('the key', () => {
    it('is redacted even where a command line would echo it', async () => {
      const key = server().keys.pro
      const runs = await Promise.all([
        fshare(['info', key]),
        fshare(['--api-key', key, 'ls', key], { account: 'none', env: { FILESHARE_BASE_URL: server().base_url } }),
        fshare(['rm', `--api-key=${key}`, '1', key], { account: 'none' }),
      ])
      for (const run of runs) {
        expect(run.code).toBe(2)
        expect(run.stderr).toContain('[redacted]')
      }
    })

    it('appears in no output of any run of this file', () => {
      expect(outputs.length).toBeGreaterThan(40)
      for (const key of Object.values(server().keys)) {
        for (const output of outputs) expect(output).not.toContain(key)
      }
    })
  })
})

// The folder handling above uses path only through tmp.file; keep the import honest.
void path
