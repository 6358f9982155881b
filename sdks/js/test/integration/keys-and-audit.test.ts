// Scoped keys, key() and the audit log against the real server, with the launcher's pro key and
// its three scoped keys of the pro account: read_only (files:read, links:read, stats:read),
// ip_restricted (every scope, only from 10.0.0.0/8: 127.0.0.1 is refused) and auditor (audit:read).
import { describe, expect, it } from 'vitest'
import {
  BadRequestError,
  Fileshare,
  InsufficientScopeError,
  IpNotAllowedError,
  NotFoundError,
  PermissionDeniedError,
  SCOPES,
  type AuditEvent,
  type FileshareOptions,
} from '../../src/index.js'
import { client, fileshareCli, newAccount, server } from '../helpers/env.js'

type Account = 'pro' | 'read_only' | 'ip_restricted' | 'auditor'

/** A client on one of the launcher's keys whose requests are counted (to see that nothing is retried). */
function counted(account: Account, options: FileshareOptions = {}): { fs: Fileshare; requests: string[] } {
  const requests: string[] = []
  const fetchCounted: typeof fetch = (input, init) => {
    requests.push(`${init?.method ?? 'GET'} ${new URL(String(input)).pathname.replace('/api/v1', '')}`)
    return fetch(input, init)
  }
  return { fs: client(account, { fetch: fetchCounted, ...options }), requests }
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => {
      throw new Error(`expected a failure, got ${JSON.stringify(value)}`)
    },
    (error: unknown) => error,
  )
}

const text = (s: string) => new TextEncoder().encode(s)

describe('key()', () => {
  it('the pro key holds all nine scopes, in the API order, from anywhere, on the pro plan', async () => {
    const key = await client('pro').key()
    expect(key.scopes).toEqual([...SCOPES])
    expect(key.scopes).toHaveLength(9)
    expect(key.allowed_ips).toEqual([])
    expect(key.plan).toBe('pro')
    expect(key.key_id).toBeGreaterThan(0)
    expect(server().keys.pro.startsWith(key.prefix)).toBe(true)
    expect(key.prefix.length).toBeLessThan(server().keys.pro.length)
    expect(key.created).toBeInstanceOf(Date)
    expect(Number.isNaN(key.created.getTime())).toBe(false)
    expect(JSON.stringify(key)).not.toContain(server().keys.pro)
  })

  it('the read_only key holds exactly files:read, links:read and stats:read', async () => {
    const key = await client('read_only').key()
    expect(key.scopes).toEqual(['files:read', 'links:read', 'stats:read'])
    expect(key.plan).toBe('pro')
    expect(server().keys.read_only.startsWith(key.prefix)).toBe(true)
  })

  it('the auditor key holds audit:read only; each key is a key of its own', async () => {
    const [pro, readOnly, auditor] = await Promise.all([client('pro').key(), client('read_only').key(), client('auditor').key()])
    expect(auditor.scopes).toEqual(['audit:read'])
    expect(new Set([pro.key_id, readOnly.key_id, auditor.key_id]).size).toBe(3)
  })

  it('last_used_at is set once the key was used (the server may show it a few seconds late)', async () => {
    const fs = client('read_only')
    await fs.stats()
    // The server keeps last use to the minute and caches a key for up to FILESHARE_CACHE_TTL_MS (at most 5 s).
    let key = await fs.key()
    for (let i = 0; i < 30 && key.last_used_at === null; i++) {
      await new Promise((resolve) => setTimeout(resolve, 250))
      key = await fs.key()
    }
    expect(key.last_used_at).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/)
    expect(key.last_used).toBeInstanceOf(Date)
    expect(key.last_used!.getTime()).toBeLessThanOrEqual(Date.now() + 1000)
  })
})

describe('scopes', () => {
  it('a delete with the read_only key is an InsufficientScopeError for files:delete, not retried, and nothing is deleted', async () => {
    const file = await client('pro').files.upload(text('keep me'), { filename: 'scoped-keep.txt' })
    const { fs, requests } = counted('read_only', { maxRetries: 3 })
    const error = await failure(fs.files.delete(file.file_id))
    expect(error).toBeInstanceOf(InsufficientScopeError)
    expect(error).toBeInstanceOf(PermissionDeniedError)
    expect(error).toMatchObject({ status: 403, code: 'insufficient_scope', requiredScope: 'files:delete' })
    expect((error as InsufficientScopeError).message).toContain('files:delete')
    expect((error as InsufficientScopeError).headers?.get('www-authenticate')).toMatch(/insufficient_scope.*scope="files:delete"/)
    expect(requests).toEqual([`DELETE /files/${file.file_id}`])
    // Nothing was deleted: the pro key and the read_only key (files:read) still see it.
    expect((await client('pro').files.get(file.file_id)).sha256).toBe(file.sha256)
    expect((await fs.files.get(file.file_id)).file_id).toBe(file.file_id)
    await client('pro').files.delete(file.file_id)
  })

  it('the read_only key reads files, links and stats, and cannot write', async () => {
    const pro = client('pro')
    const file = await pro.files.upload(text('read only'), { filename: 'scoped-read.txt' })
    const fs = client('read_only')
    try {
      expect((await fs.files.list({ limit: 5 })).files.length).toBeGreaterThan(0)
      expect((await fs.links.list(file.file_id))[0]!.default).toBe(true)
      expect((await fs.stats()).plan).toBe('pro')
      const upload = await failure(fs.files.upload(text('x'), { filename: 'x.txt' }))
      expect(upload).toMatchObject({ name: 'InsufficientScopeError', requiredScope: 'files:write' })
      const update = await failure(fs.files.update(file.file_id, { filename: 'renamed.txt' }))
      expect(update).toMatchObject({ name: 'InsufficientScopeError', requiredScope: 'files:write' })
      const link = await failure(fs.links.create(file.file_id))
      expect(link).toMatchObject({ name: 'InsufficientScopeError', requiredScope: 'links:write' })
      const audit = await failure(fs.auditEvents.list())
      expect(audit).toMatchObject({ name: 'InsufficientScopeError', requiredScope: 'audit:read' })
      expect((await pro.files.get(file.file_id)).filename).toBe('scoped-read.txt')
    } finally {
      await pro.files.delete(file.file_id)
    }
  })

  it('a resumable upload with the read_only key is refused for files:write', async () => {
    const error = await failure(client('read_only').files.upload(text('tus'), { filename: 'tus.txt', resumable: true }))
    expect(error).toBeInstanceOf(InsufficientScopeError)
    expect(error).toMatchObject({ requiredScope: 'files:write' })
  })

  it('an upload-only key (files:write, made with the CLI) uploads, multipart and resumably, and cannot list or delete', async () => {
    const { id, client: owner } = await newAccount('upload-only')
    const out = await fileshareCli('key', 'create', String(id), '--name', 'form', '--scopes', 'files:write', '--json')
    const apiKey = (JSON.parse(out.trim().split('\n').pop()!) as { api_key: string }).api_key
    const fs = new Fileshare({ baseUrl: server().base_url, apiKey })
    expect((await fs.key()).scopes).toEqual(['files:write'])
    const multipart = await fs.files.upload(text('from the form'), { filename: 'form.txt' })
    // A resumable upload ends by reading its upload's status, which files:write allows as well as files:read.
    const resumable = await fs.files.upload(text('resumable from the form'), { filename: 'form-tus.txt', resumable: true })
    expect(resumable.filename).toBe('form-tus.txt')
    expect(await failure(fs.files.list())).toMatchObject({ name: 'InsufficientScopeError', requiredScope: 'files:read' })
    expect(await failure(fs.files.delete(multipart.file_id))).toMatchObject({
      name: 'InsufficientScopeError',
      requiredScope: 'files:delete',
    })
    expect((await owner.files.list()).files.map((f) => f.file_id).sort()).toEqual([multipart.file_id, resumable.file_id].sort())
  })

  it('every call with the ip_restricted key is an IpNotAllowedError, not retried', async () => {
    const { fs, requests } = counted('ip_restricted', { maxRetries: 3 })
    const calls: [string, () => Promise<unknown>][] = [
      ['GET /key', () => fs.key()],
      ['GET /stats', () => fs.stats()],
      ['GET /files', () => fs.files.list()],
      ['GET /files/1', () => fs.files.get(1)],
      ['DELETE /files/1', () => fs.files.delete(1)],
      ['GET /audit-events', () => fs.auditEvents.list()],
      ['POST /files/upload', () => fs.files.upload(text('x'), { filename: 'x.txt', resumable: false })],
    ]
    for (const [request, run] of calls) {
      const before = requests.length
      const error = await failure(run())
      expect(error, request).toBeInstanceOf(IpNotAllowedError)
      expect(error, request).toBeInstanceOf(PermissionDeniedError)
      expect(error, request).not.toBeInstanceOf(InsufficientScopeError)
      expect(error, request).toMatchObject({ status: 403, code: 'ip_not_allowed', requiredScope: null })
      expect(requests.slice(before), request).toEqual([request])
    }
  })

  it('the auditor key lists events but cannot upload (files:write) or read files (files:read)', async () => {
    const fs = client('auditor')
    const list = await fs.auditEvents.list({ limit: 5 })
    expect(Array.isArray(list.events)).toBe(true)
    expect(list.pagination.limit).toBe(5)
    const upload = await failure(fs.files.upload(text('audited'), { filename: 'auditor.txt' }))
    expect(upload).toBeInstanceOf(InsufficientScopeError)
    expect(upload).toMatchObject({ status: 403, code: 'insufficient_scope', requiredScope: 'files:write' })
    const read = await failure(fs.files.list())
    expect(read).toMatchObject({ name: 'InsufficientScopeError', requiredScope: 'files:read' })
  })
})

/** The events of one file, newest first, from the account's log (shared with other suites: filtered by target). */
async function eventsOf(fs: Fileshare, fileId: number): Promise<AuditEvent[]> {
  const seen: AuditEvent[] = []
  for await (const event of fs.auditEvents.iterate({ action: 'file.*', limit: 100 })) {
    if (event.target?.type === 'file' && event.target.id === fileId) seen.push(event)
    if (seen.length === 3) break
  }
  return seen
}

describe('auditEvents', () => {
  it('an upload, a PATCH and a delete with the pro key: file.uploaded, file.updated, file.deleted newest first, by the key', async () => {
    const pro = client('pro')
    const me = await pro.key()
    const started = new Date(Date.now() - 2000)
    const file = await pro.files.upload(text('audit me'), { filename: 'audit-me.txt' })
    await pro.files.update(file.file_id, { filename: 'audit-me-renamed.txt' })
    await pro.files.delete(file.file_id)

    const mine = await eventsOf(pro, file.file_id)
    expect(mine.map((e) => e.action)).toEqual(['file.deleted', 'file.updated', 'file.uploaded'])
    expect(mine[0]!.event_id).toBeGreaterThan(mine[1]!.event_id)
    expect(mine[1]!.event_id).toBeGreaterThan(mine[2]!.event_id)
    for (const event of mine) {
      expect(event.actor).toMatchObject({ type: 'key', id: me.key_id })
      expect(event.target).toEqual({ type: 'file', id: file.file_id })
      expect(event.occurred_at.getTime()).toBeGreaterThanOrEqual(Math.floor(started.getTime() / 1000) * 1000)
      expect(event.at).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/)
      expect(typeof event.details).toBe('object')
      expect(JSON.stringify(event)).not.toContain(server().keys.pro)
    }
    // The default IP setting keeps the /24 of 127.0.0.1; the user agent is the SDK's.
    expect(mine[2]!.ip).toBe('127.0.0.0')
    expect(mine[2]!.user_agent).toMatch(/^fileshare-sdk-js\//)
    expect(mine[2]!.details).toMatchObject({ filename: 'audit-me.txt' })

    // The same through list() with filters: one action, since a Date (sent in UTC).
    const deleted = await pro.auditEvents.list({ action: 'file.deleted', since: started, limit: 100 })
    expect(deleted.events.every((e) => e.action === 'file.deleted')).toBe(true)
    expect(deleted.events.map((e) => e.target?.id)).toContain(file.file_id)
    // The auditor key of the same account sees them too.
    const seenByAuditor = await eventsOf(client('auditor'), file.file_id)
    expect(seenByAuditor.map((e) => e.event_id)).toEqual(mine.map((e) => e.event_id))
  })

  it('iterate() pages through with a small limit: every event once, newest first, the same as list() pages', async () => {
    // An account of its own, so that its log holds only what this test does.
    const { client: fs } = await newAccount('audit-paging')
    const ids: number[] = []
    for (let i = 0; i < 4; i++) ids.push((await fs.files.upload(text(`page ${i}`), { filename: `page-${i}.txt` })).file_id)
    await fs.files.update(ids[0]!, { filename: 'page-0-renamed.txt' })
    await fs.files.delete(ids[1]!)

    const requests: string[] = []
    const counting = fs.withOptions({
      fetch: (input, init) => {
        requests.push(new URL(String(input)).search)
        return fetch(input, init)
      },
    })
    const events: AuditEvent[] = []
    for await (const event of counting.auditEvents.iterate({ limit: 2, action: 'file.*' })) events.push(event)
    expect(events.map((e) => e.action)).toEqual([
      'file.deleted',
      'file.updated',
      'file.uploaded',
      'file.uploaded',
      'file.uploaded',
      'file.uploaded',
    ])
    const eventIds = events.map((e) => e.event_id)
    expect(new Set(eventIds).size).toBe(eventIds.length)
    expect([...eventIds].sort((a, b) => b - a)).toEqual(eventIds)
    expect(requests).toHaveLength(3)
    expect(requests[0]).toBe('?limit=2&action=file.*')
    expect(requests[1]).toMatch(/^\?limit=2&before_id=\d+&action=file\.\*$/)

    // list() by hand gives the same pages.
    const first = await fs.auditEvents.list({ limit: 2, action: 'file.*' })
    expect(first.events.map((e) => e.event_id)).toEqual(eventIds.slice(0, 2))
    expect(first.pagination).toEqual({ limit: 2, next_before_id: eventIds[1] })
    const second = await fs.auditEvents.list({ limit: 2, action: 'file.*', beforeId: first.pagination.next_before_id! })
    expect(second.events.map((e) => e.event_id)).toEqual(eventIds.slice(2, 4))
    const last = await fs.auditEvents.list({ limit: 2, action: 'file.*', before_id: eventIds[3] })
    expect(last.events.map((e) => e.event_id)).toEqual(eventIds.slice(4))
    expect(last.pagination.next_before_id).toBeNull()
  })

  it('since in the future finds nothing; values the server refuses are BadRequestErrors', async () => {
    const fs = client('pro')
    const future = await fs.auditEvents.list({ since: new Date(Date.now() + 2 * 86_400_000) })
    expect(future.events).toEqual([])
    expect(future.pagination.next_before_id).toBeNull()
    for (const options of [{ limit: 0 }, { limit: 101 }, { since: 'yesterday' }, { before_id: -1 }]) {
      const error = await failure(fs.auditEvents.list(options))
      expect(error, JSON.stringify(options)).toBeInstanceOf(BadRequestError)
      expect(error, JSON.stringify(options)).toMatchObject({ status: 400, code: 'invalid_parameter' })
    }
  })

  it('reading the audit log is not recorded, and a refused call changes nothing', async () => {
    const { client: fs } = await newAccount('audit-reads')
    const before = (await fs.auditEvents.list({ limit: 100 })).events.map((e) => e.event_id)
    await fs.key()
    await fs.files.list()
    await fs.stats()
    await fs.auditEvents.list()
    await expect(fs.files.get(999_999_999)).rejects.toBeInstanceOf(NotFoundError)
    const after = (await fs.auditEvents.list({ limit: 100 })).events.map((e) => e.event_id)
    expect(after).toEqual(before)
  })
})
