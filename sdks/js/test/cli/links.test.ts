// fshare link create|list|revoke|rotate, upload --expires-in and get --password-stdin, run as a
// process against the launcher's server: human output, --json shapes, exit codes, and neither the
// key nor a password in any output.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fshare, jsonLines, outputs } from '../helpers/cli.js'
import { randomBytes, server, sha256Hex, tempDir } from '../helpers/env.js'

const tmp = tempDir()
const PASSWORD = 'correct horse battery staple'
afterAll(() => tmp.remove())

/** Seconds between an API time (`YYYY-MM-DD HH:MM:SS`, UTC) and now. */
const fromNow = (time: string) => (Date.parse(`${time.replace(' ', 'T')}Z`) - Date.now()) / 1000

describe.sequential('fshare link and expiry', () => {
  const data = randomBytes(300_000, 61)
  let fileId: number
  beforeAll(() => writeFileSync(tmp.file('shared.bin'), data))

  it('upload --expires-in 7d: the file expires in a week, and says so', async () => {
    const [human, json] = await Promise.all([
      fshare(['upload', 'shared.bin', '--expires-in', '7d'], { cwd: tmp.dir }),
      fshare(['upload', '--json', '--expires-in', '90', 'shared.bin'], { cwd: tmp.dir }),
    ])
    expect(human.code).toBe(0)
    expect(human.stdout).toMatch(/^uploaded shared\.bin: id (\d+), 293 KiB, http\S+, expires \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\n$/)
    fileId = Number(/id (\d+)/.exec(human.stdout)![1])
    const info = JSON.parse((await fshare(['info', String(fileId), '--json'])).stdout) as { expires_at: string }
    expect(fromNow(info.expires_at)).toBeGreaterThan(7 * 86_400 - 100)
    expect(fromNow(info.expires_at)).toBeLessThanOrEqual(7 * 86_400 + 1)
    const [line] = jsonLines(json.stdout)
    expect(fromNow(line!.file.expires_at as string)).toBeLessThanOrEqual(91)
    expect((await fshare(['info', String(fileId)])).stdout).toMatch(/^expires +\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/m)
  })

  it.each([
    [['upload', 'shared.bin', '--expires-in', 'soon'], /--expires-in must be a duration .*got "soon"/],
    [['upload', 'shared.bin', '--expires-in', '0'], /--expires-in must be a duration from 1 second to 10 years/],
    [['link', 'create', '1', '--expires-in', '11y'], /--expires-in must be a duration/],
    [['link', 'create', '1', '--max-downloads', '0'], /--max-downloads must be an integer from 1 up/],
    [['link', 'create'], /link create needs exactly one FILE_ID/],
    [['link', 'create', 'x'], /a file ID is a positive integer/],
    [['link', 'list', '1', '2'], /link list needs exactly one FILE_ID/],
    [['link', 'revoke'], /link revoke needs at least one LINK_ID/],
    [['link', 'rotate', '0'], /a link ID is a positive integer/],
    [['link', 'frob'], /unknown command "link frob"\nRun 'fshare link --help'/],
    [['link', 'create', '1', '--bogus'], /Unknown option '--bogus'/],
  ])('usage error for %j: exit 2, nothing on stdout', async (args, message) => {
    const run = await fshare(args, { cwd: tmp.dir })
    expect(run).toMatchObject({ code: 2, stdout: '' })
    expect(run.stderr).toMatch(message)
  })

  it('--password-stdin: an empty stdin is a usage error', async () => {
    const run = await fshare(['link', 'create', String(fileId), '--password-stdin'], { input: '' })
    expect(run).toMatchObject({ code: 2, stdout: '' })
    expect(run.stderr).toContain('--password-stdin: stdin held no password')
  })

  it('link --help, help link and a bare link list the commands of the group', async () => {
    const [help, helpWord, bare] = await Promise.all([fshare(['link', '--help']), fshare(['help', 'link']), fshare(['link'])])
    for (const run of [help, helpWord]) {
      expect(run).toMatchObject({ code: 0, stderr: '' })
      expect(run.stdout).toMatch(/^Usage: fshare link COMMAND/)
      for (const command of ['create', 'list', 'revoke', 'rotate']) expect(run.stdout).toContain(`  link ${command} `)
    }
    expect(bare).toMatchObject({ code: 2, stdout: '' })
    expect(bare.stderr).toBe(help.stdout)
  })

  let limited: Record<string, any>
  let protectedLink: Record<string, any>

  it('link create: a link with a policy, as key/value lines or the record (--json)', async () => {
    const human = await fshare(['link', 'create', String(fileId), '--expires-in', '1h', '--max-downloads', '1', '--label', 'for Ann'])
    expect(human.code).toBe(0)
    expect(human.stdout).toMatch(/^link +\d+\nurl +http:\/\/\S+\/download\/\S+\nfile +\d+\nstatus +active\n/)
    expect(human.stdout).toMatch(/^downloads +0 of 1$/m)
    expect(human.stdout).toMatch(/^expires +\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/m)
    expect(human.stdout).toMatch(/^password +no$/m)
    expect(human.stdout).toMatch(/^label +for Ann$/m)

    const json = await fshare(['link', 'create', String(fileId), '--max-downloads', '1', '--json'])
    limited = JSON.parse(json.stdout) as Record<string, any>
    expect(limited).toMatchObject({ file_id: fileId, default: false, max_downloads: 1, download_count: 0, status: 'active' })

    const withPassword = await fshare(['link', 'create', String(fileId), '--password-stdin', '--json'], { input: `${PASSWORD}\n` })
    expect(withPassword.code).toBe(0)
    protectedLink = JSON.parse(withPassword.stdout) as Record<string, any>
    expect(protectedLink).toMatchObject({ password_protected: true, max_downloads: null })
  })

  it('link list: a table, the default link first; --json {links}', async () => {
    const [human, json] = await Promise.all([fshare(['link', 'list', String(fileId)]), fshare(['link', 'list', String(fileId), '--json'])])
    expect(human.code).toBe(0)
    expect(human.stdout).toMatch(
      /^ *ID +DEFAULT +STATUS +DOWNLOADS +EXPIRES \(UTC\) +PASSWORD +LABEL +URL\n *\d+ +yes +active +0 +never +- +http/,
    )
    expect(human.stdout).toMatch(/ for Ann +http/)
    expect(human.stdout).toMatch(/^4 links$/m)
    const { links } = JSON.parse(json.stdout) as { links: Record<string, any>[] }
    expect(links.map((l) => l.default)).toEqual([true, false, false, false])
    expect(links[1]).toMatchObject({ link_id: protectedLink.link_id })
  })

  it('get --password-stdin downloads a protected link; a wrong or missing password is exit 3 invalid_password', async () => {
    const url = protectedLink.url as string
    const [right, wrong, none] = await Promise.all([
      fshare(['get', url, '-o', 'pw.bin', '--password-stdin', '--json'], { cwd: tmp.dir, account: 'none', input: `${PASSWORD}\n` }),
      fshare(['get', url, '-o', 'wrong.bin', '--password-stdin', '--json'], { cwd: tmp.dir, account: 'none', input: 'not the password' }),
      fshare(['get', url, '-o', 'none.bin'], { cwd: tmp.dir, account: 'none' }),
    ])
    expect(right.code).toBe(0)
    expect(JSON.parse(right.stdout)).toMatchObject({ path: 'pw.bin', size: data.length, sha256: sha256Hex(data) })
    expect(sha256Hex(readFileSync(tmp.file('pw.bin')))).toBe(sha256Hex(data))
    expect(wrong.code).toBe(3)
    expect(JSON.parse(wrong.stdout).error).toMatchObject({ type: 'AuthenticationError', status: 401, code: 'invalid_password' })
    expect(none.code).toBe(3)
    expect(none.stderr).toMatch(/^fshare: AuthenticationError: 401 invalid_password: /)
  })

  it("get of a limited link without -o: the file's own name; it counts once, then the link is gone (exit 6)", async () => {
    mkdirSync(tmp.file('into'))
    const first = await fshare(['get', limited.url as string], { cwd: tmp.file('into'), account: 'none' })
    expect(first.code).toBe(0)
    expect(first.stdout).toMatch(/^saved shared\.bin \(293 KiB, sha256 [0-9a-f]{64}\)\n$/)
    expect(sha256Hex(readFileSync(tmp.file('into/shared.bin')))).toBe(sha256Hex(data))
    const again = await fshare(['get', limited.url as string, '-o', 'again.bin'], { cwd: tmp.dir, account: 'none' })
    expect(again.code).toBe(6)
    const list = JSON.parse((await fshare(['link', 'list', String(fileId), '--json'])).stdout) as { links: Record<string, any>[] }
    expect(list.links.find((l) => l.link_id === limited.link_id)).toMatchObject({ download_count: 1, status: 'exhausted' })
  })

  it('link rotate: a new URL, the old one is gone', async () => {
    const run = await fshare(['link', 'rotate', String(protectedLink.link_id), '--json'])
    expect(run.code).toBe(0)
    const rotated = JSON.parse(run.stdout) as Record<string, any>
    expect(rotated).toMatchObject({ link_id: protectedLink.link_id, password_protected: true, download_count: 1 })
    expect(rotated.url).not.toBe(protectedLink.url)
    const old = await fshare(['get', protectedLink.url as string, '-o', 'old.bin', '--password-stdin'], {
      cwd: tmp.dir,
      account: 'none',
      input: PASSWORD,
    })
    expect(old.code).toBe(6)
    const human = await fshare(['link', 'rotate', String(protectedLink.link_id)])
    expect(human.stdout).toMatch(/^link +\d+\nurl +http/)
  })

  it('link revoke: one line per ID; the default link is refused (exit 7), the others go on', async () => {
    const { links } = JSON.parse((await fshare(['link', 'list', String(fileId), '--json'])).stdout) as { links: Record<string, any>[] }
    const run = await fshare(['link', 'revoke', '--json', String(links[0]!.link_id), String(limited.link_id), '987654321'])
    expect(run.code).toBe(7)
    expect(jsonLines(run.stdout)).toEqual([
      {
        ok: false,
        link_id: links[0]!.link_id,
        error: expect.objectContaining({ type: 'BadRequestError', status: 409, code: 'default_link_required', exit_code: 7 }),
      },
      { ok: true, link_id: limited.link_id },
      { ok: false, link_id: 987654321, error: expect.objectContaining({ type: 'NotFoundError', exit_code: 6 }) },
    ])
    expect(run.stderr).toMatch(/^fshare: link revoke \d+: BadRequestError: 409 default_link_required: /m)
    const human = await fshare(['link', 'revoke', String(protectedLink.link_id)])
    expect(human).toMatchObject({ code: 0, stdout: `revoked ${protectedLink.link_id}\n`, stderr: '' })
  })

  it('neither the key nor a password appears in any output', () => {
    expect(outputs.length).toBeGreaterThan(20)
    for (const secret of [...Object.values(server().keys), PASSWORD]) for (const output of outputs) expect(output).not.toContain(secret)
  })
})
