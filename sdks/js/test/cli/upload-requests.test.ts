// fshare request create|list|close|files, run as a process against the launcher's server: every
// create flag reaching the server, the url printed, --json shapes, usage errors (exit 2), refusals
// (exit 7, 4, 6), a guest's file in `request files`, and neither the key nor the password in any
// output.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FILE_FIELDS, UPLOAD_REQUEST_FIELDS } from '../../src/index.js'
import { fshare, jsonLines, outputs } from '../helpers/cli.js'
import { client, server } from '../helpers/env.js'
import { guestUpload } from '../helpers/guest-upload.js'

const made: number[] = []
const PASSWORD = 'cli password 1234'
const readOnly = { env: { FILESHARE_API_KEY: '' } }
beforeAll(() => {
  readOnly.env.FILESHARE_API_KEY = server().keys.read_only
})

afterAll(async () => {
  const fileshare = client('pro')
  for (const id of made) await fileshare.uploadRequests.delete(id).catch(() => undefined)
})

describe.sequential('fshare request', () => {
  let id: number
  let url: string

  it('create with every flag prints the request, its url among the lines; the password never shows', async () => {
    const before = Date.now()
    const run = await fshare(
      [
        'request',
        'create',
        '--label',
        'sdk-js cli',
        '--message',
        'Send the scans, please.',
        '--expires-in',
        '7d',
        '--max-files',
        '2',
        '--max-file-size',
        '1K',
        '--max-total-size',
        '4KiB',
        '--file-expires-in',
        '1h',
        '--password-stdin',
      ],
      { input: `${PASSWORD}\n` },
    )
    expect(run).toMatchObject({ code: 0, stderr: '' })
    const match = /^request +(\d+)\nurl +(http:\/\/127\.0\.0\.1:\d+\/r\/[A-Za-z0-9_-]{43})\n/.exec(run.stdout)
    expect(match, run.stdout).not.toBeNull()
    id = Number(match![1])
    url = match![2]!
    made.push(id)
    expect(run.stdout).toMatch(/^label +sdk-js cli$/m)
    expect(run.stdout).toMatch(/^status +active$/m)
    expect(run.stdout).toMatch(/^expires +\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/m)
    expect(run.stdout).toMatch(/^files +0 of 2$/m)
    expect(run.stdout).toMatch(/^bytes +0 B of 4\.0 KiB$/m)
    expect(run.stdout).toMatch(/^max file size +1\.0 KiB$/m)
    expect(run.stdout).toMatch(/^file expiry +3600 s after each upload$/m)
    expect(run.stdout).toMatch(/^password +yes$/m)
    expect(run.stdout).toMatch(/^message +Send the scans, please\.$/m)
    expect(run.stdout).not.toContain(PASSWORD)

    const request = await client('pro').uploadRequests.get(id)
    expect(request).toMatchObject({
      url,
      label: 'sdk-js cli',
      message: 'Send the scans, please.',
      max_files: 2,
      max_file_size: 1024,
      max_total_size: 4096,
      file_expires_in: 3600,
      password_protected: true,
    })
    expect(Math.abs(request.expiry.getTime() - (before + 7 * 86_400_000))).toBeLessThan(120_000)
  })

  it('create --json: one object, the request; --expires-at in UTC', async () => {
    const run = await fshare(['request', 'create', '--label', 'dated', '--expires-at', '2099-01-01', '--json'])
    // 2099 is beyond the 90 days: the server refuses it (exit 7, the error as JSON).
    expect(run.code).toBe(7)
    expect(JSON.parse(run.stdout)).toMatchObject({ error: { type: 'BadRequestError', code: 'invalid_parameter', exit_code: 7 } })

    const at = new Date(Date.now() + 3 * 86_400_000)
    const text = at.toISOString().slice(0, 19).replace('T', ' ')
    const ok = await fshare(['request', 'create', '--label', 'dated', '--expires-at', text, '--json'])
    expect(ok).toMatchObject({ code: 0, stderr: '' })
    const request = JSON.parse(ok.stdout) as Record<string, any>
    made.push(request.request_id as number)
    expect(Object.keys(request).sort()).toEqual([...UPLOAD_REQUEST_FIELDS].sort())
    expect(request).toMatchObject({ label: 'dated', expires_at: text, status: 'active', password_protected: false, max_files: null })
  })

  it('list shows the requests as a table; --json is {"upload_requests":[…]}', async () => {
    const [human, json] = await Promise.all([fshare(['request', 'list']), fshare(['request', 'list', '--json'])])
    expect(human).toMatchObject({ code: 0, stderr: '' })
    expect(human.stdout).toMatch(/^ *ID {2}STATUS +FILES +BYTES +EXPIRES \(UTC\) +PASSWORD +LABEL +URL$/m)
    expect(human.stdout).toMatch(new RegExp(`^ *${id} {2}active +0 of 2 +0 B of 4\\.0 KiB +\\S+ \\S+ +yes +sdk-js cli +${url}$`, 'm'))
    expect(human.stdout).toMatch(/^\d+ upload requests?\n$/m)
    const { upload_requests } = JSON.parse(json.stdout) as { upload_requests: Record<string, any>[] }
    const ours = upload_requests.find((r) => r.request_id === id)!
    expect(Object.keys(ours).sort()).toEqual([...UPLOAD_REQUEST_FIELDS].sort())
    expect(ours.url).toBe(url)
  })

  it("files lists a guest's file, as a table or one object with the file's source", async () => {
    const empty = await fshare(['request', 'files', String(id)])
    expect(empty).toMatchObject({ code: 0, stdout: 'no files\n', stderr: '' })

    const grant = await fetch(`${server().server_url}/r/${url.split('/').pop()}/grant`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ password: PASSWORD }),
    })
    expect(grant.status).toBe(200)
    const { grant: token } = (await grant.json()) as { grant: string }
    const upload = await guestUpload(url, new TextEncoder().encode('from a guest'), 'guest.txt', token)
    expect(upload.status).toBe(201)
    const fileId = Number(upload.headers.get('fileshare-file-id'))

    const human = await fshare(['request', 'files', String(id)])
    expect(human).toMatchObject({ code: 0, stderr: '' })
    const lines = human.stdout.trimEnd().split('\n')
    expect(lines[0]).toMatch(/^ *ID {2}NAME +SIZE +UPLOADED \(UTC\) +EXPIRES \(UTC\) +LINK$/)
    expect(lines[1]).toMatch(new RegExp(`^ *${fileId} {2}guest\\.txt +12 B {2}\\S+ \\S+ {2}\\S+ \\S+ {2}http://\\S+/download/\\S+$`))
    expect(lines[2]).toBe('1 file')

    const json = await fshare(['request', 'files', String(id), '--limit', '1', '--json'])
    const page = JSON.parse(json.stdout) as { files: Record<string, any>[]; pagination: Record<string, any> }
    expect(page.pagination).toEqual({ limit: 1, next_before_id: null })
    expect(Object.keys(page.files[0]!).sort()).toEqual([...FILE_FIELDS].sort())
    expect(page.files[0]).toMatchObject({ file_id: fileId, filename: 'guest.txt', source: { type: 'upload_request', request_id: id } })

    const list = JSON.parse((await fshare(['request', 'list', '--json'])).stdout) as { upload_requests: Record<string, any>[] }
    expect(list.upload_requests.find((r) => r.request_id === id)).toMatchObject({ files_received: 1, bytes_received: 12 })
    await client('pro').files.delete(fileId)
  })

  it('close closes it (again: no error); an unknown ID is exit 6, a line per ID with --json', async () => {
    const run = await fshare(['request', 'close', String(id)])
    expect(run).toMatchObject({ code: 0, stdout: `closed upload request ${id}\n`, stderr: '' })
    expect((await client('pro').uploadRequests.get(id)).status).toBe('closed')
    const again = await fshare(['request', 'close', String(id), '2000000000', '--json'])
    expect(again.code).toBe(6)
    expect(jsonLines(again.stdout)).toEqual([
      { ok: true, request_id: id },
      { ok: false, request_id: 2_000_000_000, error: expect.objectContaining({ type: 'NotFoundError', exit_code: 6, status: 404 }) },
    ])
    expect(again.stderr).toMatch(/^fshare: request close 2000000000: NotFoundError: 404 /)
  })
})

describe('fshare request refusals', () => {
  it.each([
    ['a label of 201 characters', ['--label', 'x'.repeat(201), '--expires-in', '1d'], /label/],
    ['an expiry beyond 90 days', ['--label', 'x', '--expires-in', '91d'], /expires_in/],
    ['max-files 10001', ['--label', 'x', '--expires-in', '1d', '--max-files', '10001'], /max_files/],
  ])('create with %s: exit 7, BadRequestError invalid_parameter', async (_what, args, field) => {
    const run = await fshare(['request', 'create', ...args])
    expect(run).toMatchObject({ code: 7, stdout: '' })
    expect(run.stderr).toMatch(/^fshare: BadRequestError: 400 invalid_parameter: /)
    expect(run.stderr).toMatch(field)
  })

  it('a key without requests:manage is exit 4', async () => {
    const [list, create] = await Promise.all([
      fshare(['request', 'list'], readOnly),
      fshare(['request', 'create', '--label', 'x', '--expires-in', '1d', '--json'], readOnly),
    ])
    expect(list).toMatchObject({ code: 4, stdout: '' })
    expect(list.stderr).toMatch(/^fshare: PermissionDeniedError: 403 insufficient_scope: .*requests:manage/)
    expect(JSON.parse(create.stdout)).toMatchObject({ error: { code: 'insufficient_scope', exit_code: 4 } })
  })

  it.each([
    [['request', 'create', '--expires-in', '1d'], /request create needs --label TEXT/],
    [['request', 'create', '--label', 'x'], /request create needs --expires-in D or --expires-at TIME/],
    [['request', 'create', '--label', 'x', '--expires-in', '1d', '--expires-at', '2026-12-01'], /do not go together/],
    [['request', 'create', '--label', 'x', '--expires-in', 'soon'], /--expires-in must be a duration/],
    [['request', 'create', '--label', 'x', '--expires-at', 'tomorrow'], /--expires-at must be a UTC date or time/],
    [['request', 'create', '--label', 'x', '--expires-in', '1d', '--max-file-size', '10 parsecs'], /--max-file-size must be a size/],
    [['request', 'create', '--label', 'x', '--expires-in', '1d', '--max-files', '0'], /--max-files must be an integer from 1/],
    [['request', 'create', '--label', 'x', '--expires-in', '1d', '--password', 'secret'], /Unknown option '--password'/],
    [['request', 'create', 'extra', '--label', 'x', '--expires-in', '1d'], /request create takes no arguments/],
    [['request', 'list', '5'], /request list takes no arguments/],
    [['request', 'close'], /request close needs at least one ID/],
    [['request', 'close', 'x'], /a request ID is a positive integer/],
    [['request', 'files'], /request files needs exactly one ID/],
    [['request', 'files', '5', '--limit', '101'], /--limit must be an integer from 1 to 100/],
    [['request', 'frob'], /unknown command "request frob"\nRun 'fshare request --help'/],
  ])('usage error for %j: exit 2, nothing on stdout', async (args, message) => {
    const run = await fshare(args)
    expect(run).toMatchObject({ code: 2, stdout: '' })
    expect(run.stderr).toMatch(message)
  })

  it('--password-stdin with an empty stdin is a usage error', async () => {
    const run = await fshare(['request', 'create', '--label', 'x', '--expires-in', '1d', '--password-stdin'], { input: '' })
    expect(run).toMatchObject({ code: 2, stdout: '' })
    expect(run.stderr).toMatch(/stdin held no password/)
  })

  it('request --help lists the commands of the group; the main help and each command --help too', async () => {
    const [group, main, ...each] = await Promise.all([
      fshare(['request', '--help']),
      fshare(['--help']),
      ...['create', 'list', 'close', 'files'].map((c) => fshare(['request', c, '--help'], { account: 'none' })),
    ])
    expect(group).toMatchObject({ code: 0, stderr: '' })
    for (const command of ['create', 'list', 'close', 'files']) {
      expect(group.stdout).toContain(`  request ${command} `)
      expect(main.stdout).toContain(`  request ${command} `)
    }
    for (const run of each) {
      expect(run).toMatchObject({ code: 0, stderr: '' })
      expect(run.stdout).toMatch(/^Usage: fshare request \w+ /)
      expect(run.stdout).toContain('Examples:')
    }
    expect(each[0]!.stdout).toContain('--password-stdin')
  })

  it('never prints the API key or the password', () => {
    for (const output of outputs) {
      for (const key of Object.values(server().keys)) expect(output).not.toContain(key)
      expect(output).not.toContain(PASSWORD)
    }
  })
})
