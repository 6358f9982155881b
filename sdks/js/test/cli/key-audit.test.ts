// fshare key and fshare audit, run as a process against the launcher's server: human output,
// --json shapes, exit codes (4 for a key without the scope or from the wrong address), and the key
// in no output.
import { writeFileSync } from 'node:fs'
import { afterAll, describe, expect, it } from 'vitest'
import { AUDIT_EVENT_FIELDS, CURRENT_KEY_FIELDS, SCOPES } from '../../src/index.js'
import { fshare, jsonLines, outputs } from '../helpers/cli.js'
import { server, tempDir } from '../helpers/env.js'

const tmp = tempDir()
afterAll(() => tmp.remove())

/** The environment of a run with one of the launcher's other keys of the pro account. */
const withKey = (name: 'read_only' | 'ip_restricted' | 'auditor') => ({ env: { FILESHARE_API_KEY: server().keys[name] } })

describe('fshare key', () => {
  it('shows the full key: every scope, any address, the plan; --json is the API object plus plan', async () => {
    const [human, json] = await Promise.all([fshare(['key']), fshare(['key', '--json'])])
    expect(human).toMatchObject({ code: 0, stderr: '' })
    expect(human.stdout).toMatch(/^key +\d+\nname +.+\nprefix +fsk_\S+…\n/)
    expect(human.stdout).toContain(`scopes     ${SCOPES.join(', ')}\n`)
    expect(human.stdout).toMatch(/^addresses +any$/m)
    expect(human.stdout).toMatch(/^created +\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/m)
    expect(human.stdout).toMatch(/^expires +(never|\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC)$/m)
    expect(human.stdout).toMatch(/^last used +(never|\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC)$/m)
    expect(human.stdout).toMatch(/^plan +pro$/m)
    expect(json).toMatchObject({ code: 0, stderr: '' })
    const record = JSON.parse(json.stdout) as Record<string, unknown>
    expect(json.stdout.trim().split('\n')).toHaveLength(1)
    expect(Object.keys(record).sort()).toEqual([...CURRENT_KEY_FIELDS, 'plan'].sort())
    expect(record).toMatchObject({ scopes: [...SCOPES], allowed_ips: [], plan: 'pro' })
    expect(server().keys.pro.startsWith(record.prefix as string)).toBe(true)
  })

  it('a scoped key shows its scopes; a key used from an address it may not be used from is exit 4', async () => {
    const [auditor, restricted] = await Promise.all([
      fshare(['key', '--json'], withKey('auditor')),
      fshare(['key'], withKey('ip_restricted')),
    ])
    expect(auditor.code).toBe(0)
    expect(JSON.parse(auditor.stdout)).toMatchObject({ scopes: ['audit:read'] })
    expect(restricted).toMatchObject({ code: 4, stdout: '' })
    expect(restricted.stderr).toMatch(/^fshare: PermissionDeniedError: 403 ip_not_allowed: .*\(request id \S+\)\n$/)
  })

  it('takes no arguments (exit 2); an unknown key is exit 3', async () => {
    const [extra, unknown] = await Promise.all([
      fshare(['key', 'x']),
      fshare(['key', '--json'], { env: { FILESHARE_API_KEY: 'fsk_not-a-key-of-this-server-000000' } }),
    ])
    expect(extra).toMatchObject({ code: 2, stdout: '' })
    expect(extra.stderr).toContain('key takes no arguments')
    expect(unknown.code).toBe(3)
    expect(JSON.parse(unknown.stdout)).toMatchObject({ error: { type: 'AuthenticationError', exit_code: 3, status: 401 } })
  })
})

describe.sequential('fshare audit', () => {
  let fileId: number

  it('lists the events newest first, one line each, filtered by --action and --since', async () => {
    writeFileSync(tmp.file('audited.txt'), 'audit me\n')
    const upload = await fshare(['upload', '--json', 'audited.txt'], { cwd: tmp.dir })
    expect(upload.code).toBe(0)
    fileId = jsonLines(upload.stdout)[0]!.file.file_id as number
    const deleted = await fshare(['rm', String(fileId)])
    expect(deleted.code).toBe(0)

    const args = ['audit', '--action', 'file.*', '--since', '1h', '--limit', '50']
    const [human, json] = await Promise.all([fshare(args, withKey('auditor')), fshare([...args, '--json'], withKey('auditor'))])
    expect(human).toMatchObject({ code: 0, stderr: '' })
    const lines = human.stdout.trimEnd().split('\n')
    expect(lines[0]).toMatch(/^ *ID {2}AT \(UTC\) +ACTION +ACTOR +TARGET +IP +DETAILS$/)
    expect(lines.at(-1)).toMatch(/^\d+ events?(; older: --before-id \d+)?$/)
    const ours = lines.filter((line) => new RegExp(` file ${fileId} `).test(line))
    expect(ours).toHaveLength(2)
    expect(ours[0]).toMatch(/^ *\d+ {2}\d{4}-\d\d-\d\d \d\d:\d\d:\d\d {2}file\.deleted +key \d+ /) // newest first
    expect(ours[1]).toMatch(/ file\.uploaded +key \d+ .* filename=audited\.txt/)

    expect(json).toMatchObject({ code: 0, stderr: '' })
    const events = jsonLines(json.stdout)
    expect(events.length).toBeGreaterThanOrEqual(2)
    for (const event of events) {
      expect(Object.keys(event).sort()).toEqual([...AUDIT_EVENT_FIELDS].sort())
      expect(event.action).toMatch(/^file\./)
    }
    const ids = events.map((event) => event.event_id as number)
    expect(ids).toEqual([...ids].sort((a, b) => b - a))
    const mine = events.filter((event) => event.target?.id === fileId).map((event) => event.action)
    expect(mine).toEqual(['file.deleted', 'file.uploaded'])
  })

  it('--limit stops after N events across pages, and --before-id continues where the last line says', async () => {
    const first = await fshare(['audit', '--limit', '2'])
    expect(first.code).toBe(0)
    const last = first.stdout.trimEnd().split('\n').at(-1)!
    expect(last).toMatch(/^2 events; older: --before-id \d+$/)
    const beforeId = Number(/--before-id (\d+)/.exec(last)![1])
    const next = jsonLines((await fshare(['audit', '--limit', '150', '--before-id', String(beforeId), '--json'])).stdout)
    expect(next.length).toBeGreaterThan(0)
    expect(next.length).toBeLessThanOrEqual(150)
    expect(next.every((event) => (event.event_id as number) < beforeId)).toBe(true)
    expect(new Set(next.map((event) => event.event_id)).size).toBe(next.length)
  })

  it('a key without audit:read is exit 4, insufficient_scope, with the scope it needs', async () => {
    const [human, json] = await Promise.all([fshare(['audit'], withKey('read_only')), fshare(['audit', '--json'], withKey('read_only'))])
    expect(human).toMatchObject({ code: 4, stdout: '' })
    expect(human.stderr).toMatch(/^fshare: PermissionDeniedError: 403 insufficient_scope: .*audit:read/)
    expect(json.code).toBe(4)
    expect(JSON.parse(json.stdout)).toMatchObject({
      error: { type: 'PermissionDeniedError', exit_code: 4, status: 403, code: 'insufficient_scope' },
    })
  })

  it.each([
    [['audit', '--since', 'yesterday'], /--since must be a UTC date or time/],
    [['audit', '--limit', '0'], /--limit must be an integer from 1 up/],
    [['audit', '--before-id', 'x'], /--before-id must be an integer/],
    [['audit', 'file.deleted'], /audit takes no arguments/],
  ])('usage error for %j: exit 2, nothing on stdout', async (args, message) => {
    const run = await fshare(args)
    expect(run).toMatchObject({ code: 2, stdout: '' })
    expect(run.stderr).toMatch(message)
  })

  it('an action the server does not know is exit 7', async () => {
    const run = await fshare(['audit', '--action', 'no such action'])
    expect(run).toMatchObject({ code: 7, stdout: '' })
    expect(run.stderr).toMatch(/^fshare: BadRequestError: 400 invalid_parameter: /)
  })

  it('never prints a key', () => {
    for (const output of outputs) for (const secret of Object.values(server().keys)) expect(output).not.toContain(secret)
  })
})
