// Scoped keys and the audit log, against a scripted fetch: the 403s of insufficient_scope and
// ip_not_allowed (classes, requiredScope, no retry), client.key(), auditEvents.list and iterate.
import { describe, expect, it } from 'vitest'
import {
  AUDIT_EVENT_FIELDS,
  CURRENT_KEY_FIELDS,
  ConfigurationError,
  ERROR_CODES,
  FileshareError,
  InsufficientScopeError,
  IpNotAllowedError,
  LimitExceededError,
  PermissionDeniedError,
  SCOPES,
  type AuditEvent,
  type CurrentKey,
} from '../../src/index.js'
import { scopeFromWwwAuthenticate } from '../../src/errors.js'
import { apiError, fakeClient, json, type Recorded } from '../helpers/fake-fetch.js'

const paths = (requests: Recorded[]) => requests.map((r) => `${r.method} ${r.url.replace('http://fake.test/api/v1', '')}`)

function insufficientScope(
  scope: string | undefined,
  header: string | undefined = scope && `Bearer error="insufficient_scope", scope="${scope}"`,
) {
  const error: Record<string, unknown> = { code: 'insufficient_scope', message: `This API key lacks the scope ${scope ?? '?'}` }
  if (scope !== undefined) error.required_scope = scope
  return json(403, { success: false, error }, header ? { 'www-authenticate': header } : {})
}

describe('403 insufficient_scope and ip_not_allowed', () => {
  it('insufficient_scope is an InsufficientScopeError (a PermissionDeniedError) with requiredScope, not retried', async () => {
    const { client, requests, sleeps } = fakeClient([() => insufficientScope('files:delete')], { maxRetries: 5 })
    const error = await client.files.delete(7).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(InsufficientScopeError)
    expect(error).toBeInstanceOf(PermissionDeniedError)
    expect(error).toBeInstanceOf(FileshareError)
    expect(error).not.toBeInstanceOf(IpNotAllowedError)
    expect(error).toMatchObject({
      name: 'InsufficientScopeError',
      status: 403,
      code: 'insufficient_scope',
      requiredScope: 'files:delete',
      requestId: 'req-123',
    })
    expect((error as Error).message).toMatch(/^403 insufficient_scope: This API key lacks the scope files:delete \(request id req-123\)$/)
    expect(requests).toHaveLength(1)
    expect(sleeps).toEqual([])
  })

  it('requiredScope comes from the body first, else from WWW-Authenticate, else null', async () => {
    const { client } = fakeClient([
      () => insufficientScope('files:write', 'Bearer error="insufficient_scope", scope="stats:read"'),
      () => insufficientScope(undefined, 'Bearer realm="fileshare", error="insufficient_scope", scope="links:write"'),
      () => insufficientScope(undefined, undefined),
      () => json(403, { success: false, error: { code: 'insufficient_scope', message: 'm', required_scope: '' } }),
    ])
    const scopes = []
    for (let i = 0; i < 4; i++) scopes.push(((await client.stats().catch((e: unknown) => e)) as InsufficientScopeError).requiredScope)
    expect(scopes).toEqual(['files:write', 'links:write', null, null])
  })

  it('a 403 without a JSON body whose WWW-Authenticate says insufficient_scope is an InsufficientScopeError', async () => {
    const { client } = fakeClient([
      () =>
        new Response('Forbidden', {
          status: 403,
          headers: { 'www-authenticate': 'Bearer error="insufficient_scope", scope="audit:read"' },
        }),
    ])
    const error = await client.auditEvents.list().catch((e: unknown) => e)
    expect(error).toBeInstanceOf(InsufficientScopeError)
    expect(error).toMatchObject({ status: 403, code: undefined, requiredScope: 'audit:read' })
  })

  it('ip_not_allowed is an IpNotAllowedError (a PermissionDeniedError), requiredScope null, not retried', async () => {
    const { client, requests } = fakeClient([() => apiError(403, 'ip_not_allowed')], { maxRetries: 3 })
    const error = await client.key().catch((e: unknown) => e)
    expect(error).toBeInstanceOf(IpNotAllowedError)
    expect(error).toBeInstanceOf(PermissionDeniedError)
    expect(error).not.toBeInstanceOf(InsufficientScopeError)
    expect(error).toMatchObject({ name: 'IpNotAllowedError', status: 403, code: 'ip_not_allowed', requiredScope: null })
    expect(requests).toHaveLength(1)
  })

  it('plan_not_supported stays a plain PermissionDeniedError (requiredScope null); the limit codes stay LimitExceededError', async () => {
    const { client } = fakeClient([() => apiError(403, 'plan_not_supported'), () => apiError(403, 'storage_quota_exceeded')])
    const plan = await client.stats().catch((e: unknown) => e)
    expect(plan).toBeInstanceOf(PermissionDeniedError)
    expect(plan).not.toBeInstanceOf(InsufficientScopeError)
    expect(plan).not.toBeInstanceOf(IpNotAllowedError)
    expect(plan).toMatchObject({ name: 'PermissionDeniedError', requiredScope: null })
    expect(await client.stats().catch((e: unknown) => e)).toBeInstanceOf(LimitExceededError)
  })

  it('an upload refused for its scope is not retried, even with a replayable source', async () => {
    const { client, requests } = fakeClient([() => insufficientScope('files:write')], { maxRetries: 4 })
    const error = await client.files.upload(new TextEncoder().encode('hello'), { filename: 'a.txt' }).catch((e: unknown) => e)
    expect(error).toMatchObject({ name: 'InsufficientScopeError', requiredScope: 'files:write' })
    expect(requests).toHaveLength(1)
  })

  it.each([
    ['Bearer error="insufficient_scope", scope="files:delete"', 'files:delete'],
    ['Bearer scope="a:b c:d", error="insufficient_scope"', 'a:b c:d'],
    ['Bearer error=insufficient_scope, scope=files:read', 'files:read'],
    ['Bearer SCOPE = "x\\"y"', 'x"y'],
    ['Bearer error="insufficient_scope"', undefined],
    ['Bearer scope=""', undefined],
    ['Bearer realm="a", error_scope="no"', undefined],
  ])('scope of WWW-Authenticate %s → %s', (header, scope) => {
    expect(scopeFromWwwAuthenticate(header)).toBe(scope)
  })

  it('ERROR_CODES holds the two codes', () => {
    expect(ERROR_CODES).toContain('insufficient_scope')
    expect(ERROR_CODES).toContain('ip_not_allowed')
  })
})

const KEY = {
  key_id: 12,
  name: 'ci',
  prefix: 'fsk_Ab12Cd',
  scopes: ['files:read', 'stats:read'],
  allowed_ips: ['10.0.0.0/8'],
  created_at: '2026-11-27 10:00:00',
  expires_at: null,
  last_used_at: '2026-11-27 10:05:00',
}

describe('client.key()', () => {
  it('GET /key: the key object with plan, its dates as Dates, unknown fields kept', async () => {
    const { client, requests } = fakeClient([() => json(200, { success: true, key: { ...KEY, future: 1 }, plan: 'pro' })])
    const key: CurrentKey = await client.key()
    expect(paths(requests)).toEqual(['GET /key'])
    expect(key).toEqual({ ...KEY, future: 1, plan: 'pro' })
    expect(key.created.toISOString()).toBe('2026-11-27T10:00:00.000Z')
    expect(key.expiry).toBeNull()
    expect(key.last_used?.toISOString()).toBe('2026-11-27T10:05:00.000Z')
    expect(JSON.parse(JSON.stringify(key))).toEqual({ ...KEY, future: 1, plan: 'pro' })
    expect(Object.keys(key)).not.toContain('created')
  })

  it('a key that expires and was never used', async () => {
    const raw = { ...KEY, scopes: [...SCOPES], allowed_ips: [], expires_at: '2027-01-01 00:00:00', last_used_at: null }
    const { client } = fakeClient([() => json(200, { success: true, key: raw, plan: 'business' })])
    const key = await client.key()
    expect(key.scopes).toEqual([...SCOPES])
    expect(key.allowed_ips).toEqual([])
    expect(key.expiry?.toISOString()).toBe('2027-01-01T00:00:00.000Z')
    expect(key.last_used).toBeNull()
    expect(key.plan).toBe('business')
  })

  it('an answer without a key object is a FileshareError; withResponse gives the raw answer', async () => {
    const { client } = fakeClient([
      () => json(200, { success: true, plan: 'pro' }),
      () => json(200, { success: true, key: KEY, plan: 'pro' }, { 'ratelimit-remaining': '59' }),
    ])
    await expect(client.key()).rejects.toThrow(/no key object/)
    const { data, response } = await client.key().withResponse()
    expect(data.key_id).toBe(12)
    expect(response.headers.get('ratelimit-remaining')).toBe('59')
  })

  it('the nine scopes, in the API order', () => {
    expect(SCOPES).toEqual([
      'files:read',
      'files:write',
      'files:delete',
      'links:read',
      'links:write',
      'stats:read',
      'webhooks:manage',
      'requests:manage',
      'audit:read',
    ])
    expect(CURRENT_KEY_FIELDS).toEqual(['key_id', 'name', 'prefix', 'scopes', 'allowed_ips', 'created_at', 'expires_at', 'last_used_at'])
  })
})

function event(id: number, action = 'file.uploaded'): Record<string, unknown> {
  return {
    event_id: id,
    at: '2026-11-27 10:05:00',
    action,
    actor: { type: 'key', id: 12, name: 'ci' },
    ip: '127.0.0.0',
    user_agent: 'fileshare-sdk-js/test',
    target: { type: 'file', id: 100 + id },
    details: { filename: 'a.txt', size: 3 },
  }
}

/** A scripted audit log with `ids`: answers `GET /audit-events` as the server does (newest first, before_id). */
function auditServer(ids: number[]) {
  return (request: Recorded): Response => {
    const url = new URL(request.url)
    const limit = Number(url.searchParams.get('limit') ?? 20)
    const before = url.searchParams.get('before_id')
    const below = [...ids].sort((a, b) => b - a).filter((id) => before === null || id < Number(before))
    const page = below.slice(0, limit)
    const more = below.length > limit
    return json(200, {
      success: true,
      events: page.map((id) => event(id)),
      pagination: { limit, next_before_id: more ? page.at(-1)! : null },
    })
  }
}

describe('auditEvents', () => {
  it('list() sends limit, before_id, action and since (a Date in UTC); events have occurred_at', async () => {
    const { client, requests } = fakeClient([auditServer([1, 2, 3, 4, 5])])
    const list = await client.auditEvents.list({
      limit: 2,
      before_id: 5,
      action: 'file.*',
      since: new Date('2026-11-27T09:30:15.900+01:00'),
    })
    expect(paths(requests)).toEqual(['GET /audit-events?limit=2&before_id=5&action=file.*&since=2026-11-27T08%3A30%3A15Z'])
    expect(list.events.map((e) => e.event_id)).toEqual([4, 3])
    expect(list.pagination).toEqual({ limit: 2, next_before_id: 3 })
    const first: AuditEvent = list.events[0]!
    expect(first).toEqual(event(4))
    expect(first.occurred_at.toISOString()).toBe('2026-11-27T10:05:00.000Z')
    expect(Object.keys(first)).toEqual([...AUDIT_EVENT_FIELDS])
  })

  it('list() without options sends no query; since as a string and beforeId are sent as they are', async () => {
    const { client, requests } = fakeClient([auditServer([1]), auditServer([1])])
    await client.auditEvents.list()
    await client.auditEvents.list({ beforeId: 9, since: '2026-11-27', action: 'file.deleted' })
    expect(paths(requests)).toEqual(['GET /audit-events', 'GET /audit-events?before_id=9&action=file.deleted&since=2026-11-27'])
  })

  it('list() refuses two different before_ids and an invalid Date before sending', async () => {
    const { client, requests } = fakeClient([auditServer([1])])
    await expect(client.auditEvents.list({ before_id: 3, beforeId: 4 })).rejects.toBeInstanceOf(ConfigurationError)
    await expect(client.auditEvents.list({ since: new Date(Number.NaN) })).rejects.toBeInstanceOf(ConfigurationError)
    expect(requests).toHaveLength(0)
  })

  it('keeps target null, details {}, an actor without name, and fields this SDK does not know', async () => {
    const raw = { ...event(9, 'key.created'), actor: { type: 'operator', id: null }, target: null, details: {}, ip: null, future: 'x' }
    const { client } = fakeClient([() => json(200, { success: true, events: [raw], pagination: { limit: 20, next_before_id: null } })])
    const [only] = (await client.auditEvents.list()).events
    expect(only).toEqual(raw)
    expect(only!.target).toBeNull()
  })

  it('iterate() pages by next_before_id until it is null, with action and since on every page', async () => {
    const { client, requests } = fakeClient([auditServer([1, 2, 3, 4, 5, 6, 7])])
    const seen: number[] = []
    for await (const e of client.auditEvents.iterate({ limit: 3, action: 'file.*', since: '2026-11-01' })) seen.push(e.event_id)
    expect(seen).toEqual([7, 6, 5, 4, 3, 2, 1])
    expect(paths(requests)).toEqual([
      'GET /audit-events?limit=3&action=file.*&since=2026-11-01',
      'GET /audit-events?limit=3&before_id=5&action=file.*&since=2026-11-01',
      'GET /audit-events?limit=3&before_id=2&action=file.*&since=2026-11-01',
    ])
  })

  it('iterate() asks 100 per page by default, and an empty log yields nothing', async () => {
    const { client, requests } = fakeClient([auditServer([])])
    const seen: AuditEvent[] = []
    for await (const e of client.auditEvents.iterate()) seen.push(e)
    expect(seen).toEqual([])
    expect(paths(requests)).toEqual(['GET /audit-events?limit=100'])
  })

  it('iterate() never yields an event twice, and stops when next_before_id does not move', async () => {
    const page = (ids: number[], next: number | null) => () =>
      json(200, { success: true, events: ids.map((id) => event(id)), pagination: { limit: 2, next_before_id: next } })
    const { client } = fakeClient([page([9, 8], 8), page([8, 7], 7), page([6, 5], 7)])
    const seen: number[] = []
    const error = await (async () => {
      for await (const e of client.auditEvents.iterate({ limit: 2 })) seen.push(e.event_id)
    })().catch((e: unknown) => e)
    expect(seen).toEqual([9, 8, 7, 6, 5])
    expect(error).toBeInstanceOf(FileshareError)
    expect((error as Error).message).toMatch(/next_before_id 7 does not move past 7/)
  })

  it('iterate() stops at the first page a key without audit:read is refused', async () => {
    const { client, requests } = fakeClient([() => insufficientScope('audit:read')], { maxRetries: 2 })
    const error = await (async () => {
      for await (const _ of client.auditEvents.iterate()) throw new Error('nothing to yield')
    })().catch((e: unknown) => e)
    expect(error).toMatchObject({ name: 'InsufficientScopeError', requiredScope: 'audit:read' })
    expect(requests).toHaveLength(1)
  })

  it('an answer without an event list is a FileshareError', async () => {
    const { client } = fakeClient([() => json(200, { success: true, events: [] })])
    await expect(client.auditEvents.list()).rejects.toThrow(/no audit event list/)
  })
})
