import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { AuditAction } from '../../src/services/audit.js'
import { bearer, fileForm, startTestApp, uploadFile, type TestApp, unlimitedAccount } from '../helpers/test-app.js'

/**
 * No change without its event and no event without its change (../shared/spec/keys-and-audit.md),
 * on both stacks: a failure injected after the change, inside its transaction, undoes the change;
 * concurrent changes each get exactly one event; old events go in batches.
 */
describe('audit events commit with their change', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp()
  })
  afterAll(async () => {
    await t.close()
  })

  const account = () => unlimitedAccount(t)

  const eventsOf = async (accountId: number, action?: string) =>
    (await t.app.services.auditLog.list(accountId, { limit: 100, ...(action && { action }) })).events

  /** Makes the audit row of `action` fail, as a full disk or a lost connection would, while `run` runs. */
  async function failingEvent<T>(action: AuditAction, run: () => Promise<T>): Promise<T> {
    const trail = t.app.services.trail
    const row = trail.row.bind(trail)
    trail.row = (name, actor, content) => {
      if (name === action) throw new Error(`injected failure writing ${action}`)
      return row(name, actor, content)
    }
    try {
      return await run()
    } finally {
      trail.row = row
    }
  }

  it('a delete whose event fails is undone: the file is still there, with no event', async () => {
    const { accountId, apiKey } = await account()
    const { body } = await uploadFile(t, apiKey, 'keep me', 'kept.txt')
    const response = await failingEvent('file.deleted', () =>
      fetch(`${t.api}/files/${body.file_id}`, { method: 'DELETE', headers: bearer(apiKey) }),
    )
    expect(response.status).toBe(500)
    expect((await fetch(`${t.api}/files/${body.file_id}`, { headers: bearer(apiKey) })).status).toBe(200)
    expect(await eventsOf(accountId, 'file.deleted')).toEqual([])
    expect((await t.app.services.accounts.stats(accountId)).totalFiles).toBe(1)
  })

  it('an upload whose event fails stores nothing and takes no daily slot', async () => {
    const { accountId, apiKey } = await account()
    const response = await failingEvent('file.uploaded', () =>
      fetch(`${t.api}/files/upload`, { method: 'POST', headers: bearer(apiKey), body: fileForm('lost', 'lost.txt') }),
    )
    expect(response.status).toBe(500)
    const stats = await t.app.services.accounts.stats(accountId)
    expect(stats).toMatchObject({ totalFiles: 0, uploadsToday: 0 })
    expect(await eventsOf(accountId, 'file.uploaded')).toEqual([])
  })

  it('a link, a rename and a key whose events fail are not made', async () => {
    const { accountId, apiKey } = await account()
    const { body } = await uploadFile(t, apiKey, 'linked', 'linked.txt')
    const json = { ...bearer(apiKey), 'content-type': 'application/json' }
    const linkCreated = await failingEvent('link.created', () =>
      fetch(`${t.api}/files/${body.file_id}/links`, { method: 'POST', headers: json, body: JSON.stringify({ label: 'never' }) }),
    )
    expect(linkCreated.status).toBe(500)
    const links = (await (await fetch(`${t.api}/files/${body.file_id}/links`, { headers: bearer(apiKey) })).json()) as { links: unknown[] }
    expect(links.links).toHaveLength(1) // the default link only
    const renamed = await failingEvent('file.updated', () =>
      fetch(`${t.api}/files/${body.file_id}`, { method: 'PATCH', headers: json, body: JSON.stringify({ filename: 'never.txt' }) }),
    )
    expect(renamed.status).toBe(500)
    const file = (await (await fetch(`${t.api}/files/${body.file_id}`, { headers: bearer(apiKey) })).json()) as {
      file: { filename: string }
    }
    expect(file.file.filename).toBe('linked.txt')
    await expect(failingEvent('key.created', () => t.app.services.apiKeys.create(accountId, 'never'))).rejects.toThrow(/injected/)
    expect((await t.app.services.apiKeys.list(accountId)).map((key) => key.name)).toEqual(['default'])
    expect((await eventsOf(accountId)).map((event) => event.action)).toEqual(['file.uploaded', 'key.created'])
  })

  it('concurrent uploads and deletes get exactly one event each', async () => {
    const { accountId, apiKey } = await account()
    const uploads = await Promise.all(Array.from({ length: 12 }, (_, i) => uploadFile(t, apiKey, `file ${i}`, `f${i}.txt`)))
    const ids = uploads.map(({ body }) => body.file_id)
    // Each file deleted twice at once: one delete wins, the other is a 404 with no event.
    const deletes = await Promise.all(
      [...ids, ...ids].map((id) => fetch(`${t.api}/files/${id}`, { method: 'DELETE', headers: bearer(apiKey) }).then((r) => r.status)),
    )
    expect(deletes.filter((status) => status === 200)).toHaveLength(12)
    const uploaded = (await eventsOf(accountId, 'file.uploaded')).map((event) => event.target!.id).sort()
    const deleted = (await eventsOf(accountId, 'file.deleted')).map((event) => event.target!.id).sort()
    expect(uploaded).toEqual([...ids].sort())
    expect(deleted).toEqual([...ids].sort())
  })

  it('events past the retention are removed by the collector, a batch at a time', async () => {
    const { accountId, apiKey } = await account()
    for (let i = 0; i < 5; i++) await uploadFile(t, apiKey, `old ${i}`, `old${i}.txt`)
    expect(await eventsOf(accountId)).toHaveLength(6)
    t.advanceClock(91 * 86_400_000)
    await uploadFile(t, apiKey, 'new', 'new.txt')
    expect(await t.app.services.auditLog.removeExpired(2)).toBeGreaterThanOrEqual(6)
    expect((await eventsOf(accountId)).map((event) => event.details.filename)).toEqual(['new.txt'])
    t.advanceClock(91 * 86_400_000)
    const report = await t.app.services.garbageCollector.collect({ graceMs: 3_600_000 })
    expect(report.auditEventsRemoved).toBeGreaterThanOrEqual(1)
    expect(await eventsOf(accountId)).toEqual([])
  })
})
