import { randomBytes } from 'node:crypto'
import { FilesRepository } from '../../src/db/repositories/files-repository.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bearer, fileForm, startTestApp, unlimitedAccount, type TestApp } from '../helpers/test-app.js'

/** Safe retries, stable paging and storage quotas (../shared/spec/api-semantics.md), on both stacks. */

interface ErrorBody {
  error: { code: string; message: string }
}

describe('safe retries, stable paging and storage quotas', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp()
  })
  afterAll(async () => {
    await t.close()
  })

  const account = () => unlimitedAccount(t)

  function upload(apiKey: string, content: string | Uint8Array, headers: Record<string, string> = {}, filename = 'file.txt') {
    return fetch(`${t.api}/files/upload`, { method: 'POST', headers: { ...bearer(apiKey), ...headers }, body: fileForm(content, filename) })
  }

  async function stats(apiKey: string) {
    return (await (await fetch(`${t.api}/stats`, { headers: bearer(apiKey) })).json()) as {
      stats: { total_files: number; total_size: number; uploads_today: number; storage_reserved: number }
      limits: { max_storage: number | null }
    }
  }

  async function expectError(response: Response, status: number, code: string) {
    const body = (await response.json()) as ErrorBody
    expect({ status: response.status, code: body.error?.code }).toEqual({ status, code })
    return body
  }

  describe('Idempotency-Key', () => {
    it('the same upload sent again with its key stores one file, takes one slot and replays the first answer', async () => {
      const { apiKey } = await account()
      const key = `upload-${Math.random()}`
      const first = await upload(apiKey, 'exactly once', { 'idempotency-key': key })
      expect(first.status).toBe(201)
      expect(first.headers.get('idempotent-replayed')).toBeNull()
      const firstBody = await first.text()
      const again = await upload(apiKey, 'exactly once', { 'idempotency-key': key })
      expect(again.status).toBe(201)
      expect(again.headers.get('idempotent-replayed')).toBe('true')
      expect(again.headers.get('location')).toBe(first.headers.get('location'))
      expect(await again.text()).toBe(firstBody)
      expect((await stats(apiKey)).stats).toMatchObject({ total_files: 1, uploads_today: 1 })
      expect(await t.storedBlobs()).toHaveLength((await t.storedBlobs()).length)
    })

    it('a replay does not store the body sent again, and answers before reading a large one', async () => {
      const { apiKey } = await account()
      const content = new Uint8Array(6 * 1024 * 1024).fill(7)
      const first = await upload(apiKey, content, { 'idempotency-key': 'big-one' })
      expect(first.status).toBe(201)
      const blobs = (await t.storedBlobs()).length
      const again = await upload(apiKey, content, { 'idempotency-key': 'big-one' })
      expect(again.status).toBe(201)
      expect(again.headers.get('idempotent-replayed')).toBe('true')
      await again.arrayBuffer()
      expect((await t.storedBlobs()).length).toBe(blobs)
      expect((await stats(apiKey)).stats.total_files).toBe(1)
    })

    it('10 concurrent uploads with one key store one file: the others wait (409 with Retry-After: 1) or get the answer replayed', async () => {
      const { apiKey } = await account()
      const answers = await Promise.all(Array.from({ length: 10 }, () => upload(apiKey, 'raced', { 'idempotency-key': 'race' })))
      const statuses = answers.map((response) => response.status)
      expect(statuses.every((status) => status === 201 || status === 409)).toBe(true)
      const created = answers.filter((response) => response.status === 201)
      expect(created.length).toBeGreaterThanOrEqual(1)
      const ids = new Set(await Promise.all(created.map(async (response) => ((await response.json()) as { file_id: number }).file_id)))
      expect(ids.size).toBe(1)
      for (const waiting of answers.filter((response) => response.status === 409)) {
        expect(waiting.headers.get('retry-after')).toBe('1')
        await expectError(waiting, 409, 'idempotency_in_progress')
      }
      expect((await stats(apiKey)).stats).toMatchObject({ total_files: 1, uploads_today: 1 })
    })

    it('the same key for a different request is 422 idempotency_key_reused; keys are per account', async () => {
      const { apiKey } = await account()
      expect((await upload(apiKey, 'one', { 'idempotency-key': 'shared' })).status).toBe(201)
      await expectError(await upload(apiKey, 'a longer body', { 'idempotency-key': 'shared' }), 422, 'idempotency_key_reused')
      const other = await account()
      const theirs = await upload(other.apiKey, 'one', { 'idempotency-key': 'shared' })
      expect(theirs.status).toBe(201)
      expect(theirs.headers.get('idempotent-replayed')).toBeNull()
    })

    it('an answer that is not 2xx is not stored: the key stays free for a real retry', async () => {
      const { apiKey, accountId } = await account()
      await t.app.services.accounts.setLimits(accountId, { max_file_size: 3 })
      await expectError(await upload(apiKey, 'too large', { 'idempotency-key': 'retry-me' }), 403, 'file_too_large')
      await t.app.services.accounts.setLimits(accountId, { max_file_size: null })
      const retried = await upload(apiKey, 'too large', { 'idempotency-key': 'retry-me' })
      expect(retried.status).toBe(201)
      expect(retried.headers.get('idempotent-replayed')).toBeNull()
    })

    it('a key is kept 24 hours: after that the same request runs again', async () => {
      const { apiKey } = await account()
      const first = (await (await upload(apiKey, 'day one', { 'idempotency-key': 'daily' })).json()) as { file_id: number }
      t.advanceClock(24 * 3_600_000)
      const later = await upload(apiKey, 'day one', { 'idempotency-key': 'daily' })
      expect(later.headers.get('idempotent-replayed')).toBeNull()
      expect(((await later.json()) as { file_id: number }).file_id).not.toBe(first.file_id)
    })

    it('a link created twice with one key is one link; a tus creation twice is one upload', async () => {
      const { apiKey } = await account()
      const { file_id: fileId } = (await (await upload(apiKey, 'linked')).json()) as { file_id: number }
      const create = (body: object) =>
        fetch(`${t.api}/files/${fileId}/links`, {
          method: 'POST',
          headers: { ...bearer(apiKey), 'content-type': 'application/json', 'idempotency-key': 'link-key' },
          body: JSON.stringify(body),
        })
      const first = (await (await create({ max_downloads: 3, label: 'x' })).json()) as { link: { link_id: number } }
      // The same fields in another order are the same request.
      const again = await create({ label: 'x', max_downloads: 3 })
      expect(again.headers.get('idempotent-replayed')).toBe('true')
      expect(((await again.json()) as { link: { link_id: number } }).link.link_id).toBe(first.link.link_id)
      await expectError(await create({ max_downloads: 4 }), 422, 'idempotency_key_reused')
      const links = (await (await fetch(`${t.api}/files/${fileId}/links`, { headers: bearer(apiKey) })).json()) as { links: unknown[] }
      expect(links.links).toHaveLength(2)

      const tus = { ...bearer(apiKey), 'tus-resumable': '1.0.0', 'upload-length': '10', 'idempotency-key': 'tus-key' }
      const created = await fetch(`${t.api}/uploads`, { method: 'POST', headers: tus })
      const replayed = await fetch(`${t.api}/uploads`, { method: 'POST', headers: tus })
      expect([created.status, replayed.status]).toEqual([201, 201])
      expect(replayed.headers.get('location')).toBe(created.headers.get('location'))
      expect(replayed.headers.get('idempotent-replayed')).toBe('true')
      expect((await stats(apiKey)).stats.uploads_today).toBe(2)
    })

    it('a malformed key is 400 invalid_parameter: empty, over 255 characters, not printable ASCII', async () => {
      const { apiKey } = await account()
      for (const key of ['', 'k'.repeat(256), 'tab\there', 'caf\u00e9']) {
        await expectError(await upload(apiKey, 'x', { 'idempotency-key': key }), 400, 'invalid_parameter')
      }
      expect((await upload(apiKey, 'x', { 'idempotency-key': 'k'.repeat(255) })).status).toBe(201)
      expect((await stats(apiKey)).stats.total_files).toBe(1)
    })
  })

  describe('before_id paging', () => {
    it(
      'deleting every file while paging by before_id leaves none (1,000 files), where page numbers skip',
      { timeout: 120_000 },
      async () => {
        const { apiKey, accountId } = await account()
        // The rows only (their bytes are not what is tested): a thousand uploads cost a minute on S3.
        // One upload time for all: the first (page-numbered) page then orders by file_id too.
        const repository = new FilesRepository(t.app.database.db)
        const uploadedAt = Date.now()
        for (let start = 0; start < 1000; start += 100) {
          await Promise.all(
            Array.from({ length: 100 }, (_, i) =>
              repository.insert({
                account_id: accountId,
                token: randomBytes(24).toString('base64url'),
                filename: `f${start + i}.txt`,
                size: 1,
                content_type: 'text/plain',
                sha256: '0'.repeat(64),
                storage_key: randomBytes(16).toString('hex'),
                created_at: uploadedAt,
              }),
            ),
          )
        }
        let beforeId: number | null | undefined
        let seen = 0
        do {
          const query = beforeId ? `limit=100&before_id=${beforeId}` : 'limit=100'
          const page = (await (await fetch(`${t.api}/files?${query}`, { headers: bearer(apiKey) })).json()) as {
            files: Array<{ file_id: number }>
            pagination: { page: number | null; next_before_id: number | null; total: number }
          }
          expect(page.pagination.page).toBe(beforeId ? null : 1)
          const ids = page.files.map((file) => file.file_id)
          expect(ids).toEqual([...ids].sort((a, b) => b - a))
          await Promise.all(ids.map((id) => fetch(`${t.api}/files/${id}`, { method: 'DELETE', headers: bearer(apiKey) })))
          seen += ids.length
          beforeId = page.pagination.next_before_id
        } while (beforeId)
        expect(seen).toBe(1000)
        expect((await stats(apiKey)).stats.total_files).toBe(0)
      },
    )

    it('next_before_id names the last file when more follow, else null; page and before_id together are 400', async () => {
      const { apiKey } = await account()
      const ids: number[] = []
      for (let i = 0; i < 3; i++) ids.push(((await (await upload(apiKey, `p${i}`)).json()) as { file_id: number }).file_id)
      const list = async (query: string) => (await fetch(`${t.api}/files?${query}`, { headers: bearer(apiKey) })).json()
      expect(await list('limit=2')).toMatchObject({ pagination: { page: 1, limit: 2, total: 3, pages: 2, next_before_id: ids[1] } })
      expect(await list('limit=2&page=2')).toMatchObject({ pagination: { page: 2, next_before_id: null } })
      expect(await list(`limit=2&before_id=${ids[1]}`)).toMatchObject({
        files: [{ file_id: ids[0] }],
        pagination: { page: null, limit: 2, total: 3, pages: 2, next_before_id: null },
      })
      for (const query of ['page=1&before_id=5', 'before_id=0', 'before_id=abc', 'before_id=1e3', 'before_id=9007199254740992']) {
        await expectError(await fetch(`${t.api}/files?${query}`, { headers: bearer(apiKey) }), 400, 'invalid_parameter')
      }
    })
  })

  describe('storage quota', () => {
    it('stats carry max_storage and storage_reserved; an upload that cannot fit is refused before its body, storing nothing', async () => {
      const { apiKey, accountId } = await account()
      expect((await stats(apiKey)).limits.max_storage).toBe(107_374_182_400)
      await t.app.services.accounts.setLimits(accountId, { max_storage: 2000 })
      expect((await upload(apiKey, 'a'.repeat(1000))).status).toBe(201)
      const blobs = (await t.storedBlobs()).length
      // Even its least possible file size (its Content-Length less 64 KiB of framing) cannot fit.
      await expectError(await upload(apiKey, 'b'.repeat(70_000)), 403, 'storage_quota_exceeded')
      await expectError(await upload(apiKey, 'b'.repeat(1001)), 403, 'storage_quota_exceeded')
      expect((await t.storedBlobs()).length).toBe(blobs)
      expect(await stats(apiKey)).toMatchObject({
        stats: { total_files: 1, total_size: 1000, storage_reserved: 0 },
        limits: { max_storage: 2000 },
      })
      await t.app.services.accounts.setLimits(accountId, { max_storage: -1 })
      expect((await stats(apiKey)).limits.max_storage).toBeNull()
      expect((await upload(apiKey, 'b'.repeat(1000))).status).toBe(201)
    })

    it('a file that fills the quota to the byte is stored: the framing around it is not held against it', async () => {
      const { apiKey, accountId } = await account()
      await t.app.services.accounts.setLimits(accountId, { max_storage: 5000 })
      expect((await upload(apiKey, 'c'.repeat(5000))).status).toBe(201)
      expect((await stats(apiKey)).stats).toMatchObject({ total_size: 5000, storage_reserved: 0 })
      await expectError(await upload(apiKey, 'd'), 403, 'storage_quota_exceeded')
    })

    it('24 concurrent uploads racing for the last bytes never take used + reserved past the quota', async () => {
      const { apiKey, accountId } = await account()
      const quota = 10_000
      await t.app.services.accounts.setLimits(accountId, { max_storage: quota })
      let highest = 0
      let racing = true
      const watch = (async () => {
        while (racing) {
          const { stats: figures } = await stats(apiKey)
          highest = Math.max(highest, figures.total_size + figures.storage_reserved)
        }
      })()
      const answers = await Promise.all(Array.from({ length: 24 }, (_, i) => upload(apiKey, 'x'.repeat(1000 + i))))
      racing = false
      await watch
      const stored = answers.filter((response) => response.status === 201)
      expect(stored.length).toBeGreaterThan(0)
      for (const refused of answers.filter((response) => response.status !== 201)) await expectError(refused, 403, 'storage_quota_exceeded')
      const sizes = await Promise.all(stored.map(async (response) => ((await response.json()) as { size: number }).size))
      const final = await stats(apiKey)
      expect(final.stats).toMatchObject({ total_files: stored.length, total_size: sizes.reduce((a, b) => a + b, 0), storage_reserved: 0 })
      expect(final.stats.total_size).toBeLessThanOrEqual(quota)
      expect(highest).toBeLessThanOrEqual(quota)
    })

    it('an upload of unknown length is stopped at the first bytes past the quota, and nothing is kept', async () => {
      const { apiKey, accountId } = await account()
      await t.app.services.accounts.setLimits(accountId, { max_storage: 50_000 })
      const boundary = 'quota-boundary'
      const body = (size: number) =>
        new ReadableStream({
          start(controller) {
            controller.enqueue(
              new TextEncoder().encode(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="s.bin"\r\n\r\n`),
            )
            for (let sent = 0; sent < size; sent += 10_000) controller.enqueue(new Uint8Array(Math.min(10_000, size - sent)))
            controller.enqueue(new TextEncoder().encode(`\r\n--${boundary}--\r\n`))
            controller.close()
          },
        })
      const send = (size: number) =>
        fetch(`${t.api}/files/upload`, {
          method: 'POST',
          headers: { ...bearer(apiKey), 'content-type': `multipart/form-data; boundary=${boundary}` },
          body: body(size),
          duplex: 'half',
        } as RequestInit)
      const blobs = (await t.storedBlobs()).length
      await expectError(await send(80_000), 403, 'storage_quota_exceeded')
      expect((await t.storedBlobs()).length).toBe(blobs)
      expect((await stats(apiKey)).stats).toMatchObject({ total_size: 0, storage_reserved: 0 })
      // One that fits is reserved exactly, not refused for the size of a step.
      expect((await send(49_000)).status).toBe(201)
      expect((await stats(apiKey)).stats).toMatchObject({ total_size: 49_000, storage_reserved: 0 })
    })

    it('a resumable upload reserves its length at creation (a deferred one as it grows) and gives it back when it ends', async () => {
      const { apiKey, accountId } = await account()
      await t.app.services.accounts.setLimits(accountId, { max_storage: 1000 })
      const tus = { ...bearer(apiKey), 'tus-resumable': '1.0.0' }
      await expectError(
        await fetch(`${t.api}/uploads`, { method: 'POST', headers: { ...tus, 'upload-length': '1001' } }),
        403,
        'storage_quota_exceeded',
      )
      const known = await fetch(`${t.api}/uploads`, { method: 'POST', headers: { ...tus, 'upload-length': '600' } })
      expect(known.status).toBe(201)
      expect((await stats(apiKey)).stats.storage_reserved).toBe(600)
      const deferred = await fetch(`${t.api}/uploads`, { method: 'POST', headers: { ...tus, 'upload-defer-length': '1' } })
      const chunk = (location: string, offset: number, bytes: number) =>
        fetch(new URL(location, t.url), {
          method: 'PATCH',
          headers: { ...tus, 'upload-offset': String(offset), 'content-type': 'application/offset+octet-stream' },
          body: new Uint8Array(bytes),
        })
      expect((await chunk(deferred.headers.get('location')!, 0, 300)).status).toBe(204)
      expect((await stats(apiKey)).stats.storage_reserved).toBe(900)
      await expectError(await chunk(deferred.headers.get('location')!, 300, 200), 403, 'storage_quota_exceeded')
      expect((await stats(apiKey)).stats.storage_reserved).toBe(900)
      await fetch(new URL(deferred.headers.get('location')!, t.url), { method: 'DELETE', headers: tus })
      expect((await stats(apiKey)).stats.storage_reserved).toBe(600)
      expect((await chunk(known.headers.get('location')!, 0, 600)).status).toBe(204)
      expect((await stats(apiKey)).stats).toMatchObject({ total_size: 600, storage_reserved: 0 })
    })

    it('the collector gives back what a dead instance held', async () => {
      const { apiKey, accountId } = await account()
      const held = await t.app.services.files.reserve(
        { accountId, limits: { maxFileSize: 1000, dailyUploads: 10, maxStorage: 5000 } },
        { upTo: 4000, atLeast: 4000 },
      )
      held.settle() // as a process that died: nobody renews it
      expect((await stats(apiKey)).stats.storage_reserved).toBe(4000)
      t.advanceClock(5 * 60_000 + 1)
      const report = await t.app.services.garbageCollector.collect({ graceMs: 24 * 3_600_000 })
      expect(report.reservationsReleased).toBeGreaterThanOrEqual(1)
      expect((await stats(apiKey)).stats.storage_reserved).toBe(0)
    })
  })
})
