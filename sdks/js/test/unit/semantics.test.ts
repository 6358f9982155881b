// Safe retries, stable paging and the storage quota (issue 29) against the fake fetch: one
// Idempotency-Key per creating call on every attempt, a replayed answer that came before the body
// went, iterate() by before_id, and the quota fields of stats().
import { describe, expect, it } from 'vitest'
import { ConfigurationError, Fileshare, FileshareError, IntegrityError, LimitExceededError, type FileRecord } from '../../src/index.js'
import { FILE, apiError, connectionFailure, fakeClient, json, type Recorded } from '../helpers/fake-fetch.js'
import { randomBytes, sha256Hex } from '../helpers/env.js'

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
const hello = () => new TextEncoder().encode('hello')
const uploaded = () => json(201, { success: true, ...FILE })
const keyOf = (r: Recorded) => r.headers.get('idempotency-key')

describe('idempotency keys of uploads', () => {
  it('every attempt of a call carries the same new UUID; the next call another', async () => {
    const { client, requests, sleeps } = fakeClient(
      [
        () => connectionFailure(),
        () => apiError(502, 'bad_gateway'),
        () => apiError(409, 'idempotency_in_progress', { 'retry-after': '1' }),
        uploaded,
        uploaded,
      ],
      { resumableThreshold: 1e12, maxRetries: 3, random: () => 0.5 },
    )
    const file = await client.files.upload(hello(), { filename: 'a.txt' })
    expect(file.file_id).toBe(7)
    const keys = requests.map(keyOf)
    expect(keys.slice(0, 4)).toEqual(Array(4).fill(keys[0]))
    expect(keys[0]).toMatch(UUID_V4)
    // Backoff for the lost connection and the 502, the server's Retry-After for the 409.
    expect(sleeps).toEqual([250, 500, 1000])

    await client.files.upload(hello(), { filename: 'a.txt' })
    expect(keys.length + 1).toBe(requests.length)
    expect(keyOf(requests[4]!)).toMatch(UUID_V4)
    expect(keyOf(requests[4]!)).not.toBe(keys[0])
  })

  it("sends the caller's idempotencyKey; a malformed one is refused before anything is sent", async () => {
    const { client, requests } = fakeClient([uploaded], { resumableThreshold: 1e12 })
    await client.files.upload(hello(), { filename: 'a.txt', idempotencyKey: 'order-42 ~ upload #1' })
    await client.files.upload(hello(), { filename: 'a.txt', idempotencyKey: 'k'.repeat(255) })
    expect(requests.map(keyOf)).toEqual(['order-42 ~ upload #1', 'k'.repeat(255)])
    for (const bad of ['', 'k'.repeat(256), 'line\nbreak', 'tab\there', 'clé', 42 as never]) {
      await expect(client.files.upload(hello(), { idempotencyKey: bad })).rejects.toBeInstanceOf(ConfigurationError)
      await expect(client.links.create(7, { idempotencyKey: bad })).rejects.toThrow(/idempotencyKey must be 1 to 255 printable ASCII/)
    }
    expect(requests).toHaveLength(2)
  })

  it('the replayed answer of 409 idempotency_in_progress counts against maxRetries', async () => {
    const busy = () => apiError(409, 'idempotency_in_progress', { 'retry-after': '1' })
    const { client, requests, sleeps } = fakeClient([busy], { resumableThreshold: 1e12 })
    const error = await client.files.upload(hello(), { filename: 'a.txt' }).catch((e: unknown) => e)
    expect(error).toMatchObject({ name: 'BadRequestError', status: 409, code: 'idempotency_in_progress' })
    expect(requests).toHaveLength(3)
    expect(sleeps).toEqual([1000, 1000])
  })

  it('422 idempotency_key_reused and 403 storage_quota_exceeded are thrown at once', async () => {
    const { client, requests } = fakeClient(
      [() => apiError(422, 'idempotency_key_reused'), () => apiError(403, 'storage_quota_exceeded')],
      {
        resumableThreshold: 1e12,
      },
    )
    await expect(client.files.upload(hello(), { idempotencyKey: 'k1' })).rejects.toMatchObject({
      name: 'BadRequestError',
      status: 422,
      code: 'idempotency_key_reused',
    })
    const quota = await client.files.upload(hello()).catch((e: unknown) => e)
    expect(quota).toBeInstanceOf(LimitExceededError)
    expect(quota).toMatchObject({ status: 403, code: 'storage_quota_exceeded' })
    expect(requests).toHaveLength(2)
  })
})

describe('a replayed upload answered before its body went', () => {
  /** A client whose server answers at once with `answer`, reading nothing of the request's body. */
  function answeringAtOnce(answer: () => Response) {
    const keys: (string | null)[] = []
    const client = new Fileshare({
      baseUrl: 'http://fake.test/api/v1',
      apiKey: 'fsk_' + 'k'.repeat(43),
      resumableThreshold: 1e12,
      sleep: async () => {},
      fetch: (async (_input: RequestInfo | URL, init: RequestInit = {}) => {
        keys.push(new Headers(init.headers).get('idempotency-key'))
        return answer()
      }) as typeof fetch,
    })
    return { client, keys }
  }
  const data = randomBytes(3 * 1024 * 1024 + 5, 41) // several slices: the body is not read whole
  const replay = (sha256: string) => () =>
    json(201, { success: true, ...FILE, size: data.length, sha256 }, { 'idempotent-replayed': 'true' })

  it('checks the SHA-256 by reading a replayable source apart', async () => {
    const { client, keys } = answeringAtOnce(replay(sha256Hex(data)))
    const progress: number[] = []
    const file = await client.files.upload(data, { filename: 'a.bin', idempotencyKey: 'mine', onProgress: (sent) => progress.push(sent) })
    expect(file.sha256).toBe(sha256Hex(data))
    expect(keys).toEqual(['mine'])
    expect(progress.at(-1)).toBe(data.length)
  })

  it('IntegrityError when the key was first used for other bytes, saying so', async () => {
    const { client } = answeringAtOnce(replay(sha256Hex(hello())))
    const error = await client.files.upload(data, { filename: 'a.bin', idempotencyKey: 'mine' }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(IntegrityError)
    expect(error).toMatchObject({ expected: sha256Hex(hello()), actual: sha256Hex(data) })
    expect((error as Error).message).toMatch(/replayed for the idempotency key/)
  })

  it('a one-shot stream cannot be read again: the replayed record is returned unchecked', async () => {
    const { client } = answeringAtOnce(replay('0'.repeat(64)))
    const stream = new Blob([data as Uint8Array<ArrayBuffer>]).stream()
    const file = await client.files.upload(stream, { filename: 'a.bin', size: data.length, idempotencyKey: 'mine' })
    expect(file.sha256).toBe('0'.repeat(64))
  })
})

/** A server of files `ids` (newest first by file_id) for GET /files (page or before_id) and DELETE. */
function filesServer(initial: number[]) {
  const ids = [...initial].sort((a, b) => b - a)
  const record = (id: number) => ({ ...FILE, file_id: id })
  return (request: Recorded): Response => {
    const url = new URL(request.url)
    const deleted = /^\/api\/v1\/files\/(\d+)$/.exec(url.pathname)
    if (request.method === 'DELETE' && deleted) {
      ids.splice(ids.indexOf(Number(deleted[1])), 1)
      return json(200, { success: true, message: 'File deleted.' })
    }
    const limit = Number(url.searchParams.get('limit') ?? 20)
    const before = url.searchParams.get('before_id')
    const page = Number(url.searchParams.get('page') ?? 1)
    const older = before === null ? ids : ids.filter((id) => id < Number(before))
    const start = before === null ? (page - 1) * limit : 0
    const files = older.slice(start, start + limit)
    const more = older.length > start + limit
    return json(200, {
      success: true,
      files: files.map(record),
      pagination: {
        page: before === null ? page : null,
        limit,
        total: ids.length,
        pages: Math.ceil(ids.length / limit),
        next_before_id: more ? files.at(-1)! : null,
      },
    })
  }
}

const paths = (requests: Recorded[]) => requests.map((r) => `${r.method} ${r.url.replace('http://fake.test/api/v1', '')}`)

describe('paging by before_id', () => {
  it('list({ before_id }) asks for the files below it; page is null then', async () => {
    const { client, requests } = fakeClient([filesServer([1, 2, 3, 4, 5])])
    const list = await client.files.list({ before_id: 4, limit: 2 })
    expect(paths(requests)).toEqual(['GET /files?limit=2&before_id=4'])
    expect(list.files.map((f) => f.file_id)).toEqual([3, 2])
    expect(list.pagination).toEqual({ page: null, limit: 2, total: 5, pages: 3, next_before_id: 2 })
  })

  it('iterate() asks the first page without page or before_id, then by next_before_id until it is null', async () => {
    const { client, requests } = fakeClient([filesServer([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])])
    const seen: number[] = []
    for await (const file of client.files.iterate({ limit: 4 })) seen.push(file.file_id)
    expect(seen).toEqual([10, 9, 8, 7, 6, 5, 4, 3, 2, 1])
    expect(paths(requests)).toEqual(['GET /files?limit=4', 'GET /files?limit=4&before_id=7', 'GET /files?limit=4&before_id=3'])
  })

  it('deleting every file it yields skips none', async () => {
    const { client, requests } = fakeClient([filesServer(Array.from({ length: 25 }, (_, i) => i + 1))])
    const deleted: number[] = []
    for await (const file of client.files.iterate({ limit: 10 })) {
      await client.files.delete(file.file_id)
      deleted.push(file.file_id)
    }
    expect(deleted).toEqual(Array.from({ length: 25 }, (_, i) => 25 - i))
    expect((await client.files.list()).pagination.total).toBe(0)
    expect(paths(requests).filter((p) => p.startsWith('GET'))).toHaveLength(4)
  })

  it('never yields a file twice, and stops when next_before_id does not move', async () => {
    const page = (ids: number[], next: number | null) => () =>
      json(200, {
        success: true,
        files: ids.map((id) => ({ ...FILE, file_id: id })),
        pagination: { page: null, limit: 2, total: 9, pages: 5, next_before_id: next },
      })
    const { client } = fakeClient([page([9, 8], 8), page([8, 7], 7), page([6, 5], 7)])
    const seen: number[] = []
    const error = await (async () => {
      for await (const file of client.files.iterate({ limit: 2 })) seen.push(file.file_id)
    })().catch((e: unknown) => e)
    expect(seen).toEqual([9, 8, 7, 6, 5])
    expect(error).toBeInstanceOf(FileshareError)
    expect((error as Error).message).toMatch(/next_before_id 7 does not move past 7/)
  })

  it('pages by number against an older server whose pagination has no next_before_id', async () => {
    const old = (page: number, ids: number[]) => () =>
      json(200, { success: true, files: ids.map((id) => ({ ...FILE, file_id: id })), pagination: { page, limit: 2, total: 3, pages: 2 } })
    const { client, requests } = fakeClient([old(1, [3, 2]), old(2, [2, 1])])
    const seen: FileRecord[] = []
    for await (const file of client.files.iterate({ limit: 2 })) seen.push(file)
    expect(seen.map((f) => f.file_id)).toEqual([3, 2, 1])
    expect(paths(requests)).toEqual(['GET /files?limit=2', 'GET /files?page=2&limit=2'])
  })
})

describe('stats: the storage quota', () => {
  it('carries limits.max_storage (null: unlimited) and stats.storage_reserved', async () => {
    const answer = (maxStorage: number | null) => () =>
      json(200, {
        success: true,
        plan: 'pro',
        stats: { total_files: 2, total_size: 300, total_downloads: 0, uploads_today: 2, storage_reserved: 1000 },
        limits: { max_file_size: 5, daily_uploads: 500, requests_per_minute: 60, requests_per_day: 10000, max_storage: maxStorage },
      })
    const { client } = fakeClient([answer(107_374_182_400), answer(null)])
    const quota = await client.stats()
    expect(quota.limits.max_storage).toBe(107_374_182_400)
    expect(quota.stats.storage_reserved).toBe(1000)
    expect(quota.stats.total_size).toBe(300)
    expect((await client.stats()).limits.max_storage).toBeNull()
  })
})
