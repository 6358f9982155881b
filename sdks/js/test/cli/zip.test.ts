// fshare zip, run as a process against the launcher's server: the archive's entries (read back
// with Python's zipfile), -o to a folder and to stdout, --json, and the refusals.
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fshare } from '../helpers/cli.js'
import { client, randomBytes, sha256Hex, tempDir } from '../helpers/env.js'

const tmp = tempDir()
afterAll(() => tmp.remove())

/** name and sha256 of each entry, as Python's zipfile reads them. */
function entries(path: string): Array<[string, string]> {
  const script =
    'import hashlib,json,sys,zipfile\nz=zipfile.ZipFile(sys.argv[1])\nprint(json.dumps([[i.filename, hashlib.sha256(z.read(i)).hexdigest()] for i in z.infolist()]))'
  return JSON.parse(execFileSync('/usr/bin/python3', ['-c', script, path], { encoding: 'utf8' })) as Array<[string, string]>
}

describe('fshare zip', () => {
  const data = randomBytes(150_000, 5)
  const ids: number[] = []
  beforeAll(async () => {
    const fs = client('pro')
    ids.push((await fs.files.upload(data, { filename: 'zipped.bin' })).file_id)
    ids.push((await fs.files.upload(new TextEncoder().encode('note'), { filename: 'zipped.bin' })).file_id)
  })

  it('saves the files as one ZIP to -o PATH, and says so; --json gives {path, size, files}', async () => {
    const run = await fshare(['zip', String(ids[0]), String(ids[1]), '-o', 'both.zip'], { cwd: tmp.dir })
    expect(run.code).toBe(0)
    expect(run.stdout).toMatch(/^saved both\.zip \(2 files, \d+(\.\d)? KiB\)\n$/)
    expect(entries(tmp.file('both.zip'))).toEqual([
      ['zipped.bin', sha256Hex(data)],
      ['zipped (2).bin', sha256Hex(new TextEncoder().encode('note'))],
    ])
    const json = await fshare(['zip', String(ids[1]), '-o', 'one.zip', '--json'], { cwd: tmp.dir })
    expect(json.code).toBe(0)
    expect(JSON.parse(json.stdout)).toEqual({ path: 'one.zip', size: expect.any(Number), files: 1 })
  })

  it('names the archive files-YYYYMMDD-HHMMSS.zip in a folder given with -o, and writes to stdout with -o -', async () => {
    mkdirSync(tmp.file('into'))
    const run = await fshare(['zip', String(ids[0]), '-o', 'into'], { cwd: tmp.dir })
    expect(run.code).toBe(0)
    const [name] = readdirSync(tmp.file('into'))
    expect(name).toMatch(/^files-\d{8}-\d{6}\.zip$/)
    const toStdout = await fshare(['zip', String(ids[1]), '-o', '-'])
    expect(toStdout.code).toBe(0)
    expect(toStdout.stdout.startsWith('PK\u0003\u0004')).toBe(true)
    expect(toStdout.stderr).toMatch(/^saved to stdout \(1 file, /m)
  })

  it("an ID that is not the account's: exit 6 (NotFoundError) and no file; no ID, a repeated one: usage (exit 2)", async () => {
    const missing = await fshare(['zip', String(ids[0]), '999999999', '-o', 'missing.zip'], { cwd: tmp.dir })
    expect(missing.code).toBe(6)
    expect(missing.stderr).toContain('999999999')
    expect(existsSync(tmp.file('missing.zip'))).toBe(false)
    expect((await fshare(['zip'])).code).toBe(2)
    expect((await fshare(['zip', String(ids[0]), String(ids[0])])).code).toBe(2)
    expect((await fshare(['zip', 'abc'])).code).toBe(2)
  })
})
