import { Readable } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MAX_BULK_DELETE } from '../../src/services/bulk-delete.js'
import { bearer, startTestApp, unlimitedAccount, type TestApp } from '../helpers/test-app.js'

describe('POST /files/delete: several files deleted in one call', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp()
  })
  afterAll(async () => {
    await t.close()
  })

  async function store(accountId: number, content = 'x', filename = 'file.txt'): Promise<number> {
    const owner = { accountId, limits: { maxFileSize: 1_000_000, dailyUploads: 1_000_000 } }
    const staged = await t.app.services.files.stage(owner, Readable.from([Buffer.from(content)]), filename)
    return (await t.app.services.files.commit(staged)).id
  }

  function bulkDelete(apiKey: string, body: unknown, headers: Record<string, string> = {}) {
    return fetch(`${t.api}/files/delete`, {
      method: 'POST',
      headers: { ...bearer(apiKey), 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    })
  }

  const fileDeletedEvents = async (accountId: number) =>
    (await t.app.services.auditLog.list(accountId, { limit: 100, action: 'file.deleted' })).events.map((event) => event.target!.id)

  it("deletes the account's files and names the ids that are not its files, each in the order given", async () => {
    const { accountId, apiKey } = await unlimitedAccount(t)
    const other = await unlimitedAccount(t)
    const [a, b, c] = [await store(accountId), await store(accountId), await store(accountId)]
    const theirs = await store(other.accountId)
    const blobs = (await t.storedBlobs()).length

    const response = await bulkDelete(apiKey, { ids: [c, 999_999_999, a, theirs] })
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({ success: true, deleted: [c, a], not_found: [999_999_999, theirs] })

    // Gone as a single delete leaves them: the detail is 404, the bytes removed, the other account's file untouched.
    expect((await fetch(`${t.api}/files/${a}`, { headers: bearer(apiKey) })).status).toBe(404)
    expect((await fetch(`${t.api}/files/${b}`, { headers: bearer(apiKey) })).status).toBe(200)
    expect((await fetch(`${t.api}/files/${theirs}`, { headers: bearer(other.apiKey) })).status).toBe(200)
    await expect.poll(async () => (await t.storedBlobs()).length).toBe(blobs - 2)
    // One audit row per deleted file, as DELETE /files/{id} writes.
    expect((await fileDeletedEvents(accountId)).sort()).toEqual([a, c].sort())
    const stats = (await (await fetch(`${t.api}/stats`, { headers: bearer(apiKey) })).json()) as { stats: { total_files: number } }
    expect(stats.stats.total_files).toBe(1)

    // Sent again (without a key): all of them are not found now.
    const again = await bulkDelete(apiKey, { ids: [c, a] })
    expect(await again.json()).toEqual({ success: true, deleted: [], not_found: [c, a] })
  })

  it('each file is deleted wholly or not at all: a failure at the second leaves the first deleted and the rest in place', async () => {
    const { accountId, apiKey } = await unlimitedAccount(t)
    const ids = [await store(accountId), await store(accountId), await store(accountId)]
    const trail = t.app.services.trail
    const row = trail.row.bind(trail)
    let deletes = 0
    trail.row = (name, actor, content) => {
      if (name === 'file.deleted' && ++deletes === 2) throw new Error('injected failure writing the second file.deleted')
      return row(name, actor, content)
    }
    try {
      const response = await bulkDelete(apiKey, { ids })
      expect(response.status).toBe(500)
    } finally {
      trail.row = row
    }
    const statuses = await Promise.all(ids.map(async (id) => (await fetch(`${t.api}/files/${id}`, { headers: bearer(apiKey) })).status))
    expect(statuses).toEqual([404, 200, 200])
    expect(await fileDeletedEvents(accountId)).toEqual([ids[0]])
  })

  it('replays its answer for the same Idempotency-Key, and refuses the key with another body', async () => {
    const { accountId, apiKey } = await unlimitedAccount(t)
    const [a, b] = [await store(accountId), await store(accountId)]
    const key = { 'idempotency-key': `bulk-${a}` }
    const first = await bulkDelete(apiKey, { ids: [a, b] }, key)
    expect(await first.json()).toEqual({ success: true, deleted: [a, b], not_found: [] })
    const replay = await bulkDelete(apiKey, { ids: [a, b] }, key)
    expect(replay.headers.get('idempotent-replayed')).toBe('true')
    expect(await replay.json()).toEqual({ success: true, deleted: [a, b], not_found: [] })
    const reused = await bulkDelete(apiKey, { ids: [a] }, key)
    expect(reused.status).toBe(422)
    expect(((await reused.json()) as { error: { code: string } }).error.code).toBe('idempotency_key_reused')
  })

  it('validates the body: 1 to the maximum of distinct positive integer ids, nothing else', async () => {
    const { apiKey } = await unlimitedAccount(t)
    for (const body of [
      {},
      { ids: [] },
      { ids: [1, 1] },
      { ids: [0] },
      { ids: ['1'] },
      { ids: Array.from({ length: MAX_BULK_DELETE + 1 }, (_, i) => i + 1) },
      { ids: [1], extra: true },
    ]) {
      const response = await bulkDelete(apiKey, body)
      expect(response.status, JSON.stringify(body).slice(0, 40)).toBe(400)
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe('invalid_parameter')
    }
  })

  it('needs files:delete', async () => {
    const { accountId } = await unlimitedAccount(t)
    const id = await store(accountId)
    const readOnly = (await t.app.services.apiKeys.create(accountId, 'read', { scopes: ['files:read', 'files:write'] })).apiKey
    const refused = await bulkDelete(readOnly, { ids: [id] })
    expect(refused.status).toBe(403)
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('insufficient_scope')
    const deleter = (await t.app.services.apiKeys.create(accountId, 'delete', { scopes: ['files:delete'] })).apiKey
    expect(await (await bulkDelete(deleter, { ids: [id] })).json()).toEqual({ success: true, deleted: [id], not_found: [] })
  })
})
