// Issue 29 against the real server: a retried upload stores one file (idempotency keys, through the
// cutting proxy), an explicit key replays its first answer, iterate() pages by before_id while its
// files are deleted, and the storage quota. Each test has an account of its own (made with the
// `fileshare` CLI), so that the counts it checks (files, uploads today, bytes) are only its own.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BadRequestError, Fileshare, LimitExceededError, type FileRecord, type FileshareOptions } from '../../src/index.js'
import { fileshareCli, newAccount, randomBytes, server, sha256Hex } from '../helpers/env.js'
import { startCuttingProxy, type CuttingProxy } from '../helpers/proxy.js'

let proxy: CuttingProxy
beforeAll(async () => {
  proxy = await startCuttingProxy(server().server_url)
})
afterAll(() => proxy.close())

/** One request as it left the SDK through `fetch`, and what came back (`status` undefined: no answer). */
interface Exchange {
  method: string
  path: string
  key: string | null
  status: number | undefined
  replayed: boolean
}

/** A fetch that records every exchange (requests with a stream body go through it too). */
function recording(): { fetch: typeof fetch; exchanges: Exchange[] } {
  const exchanges: Exchange[] = []
  const recorder = async (input: RequestInfo | URL, init: RequestInit = {}): Promise<Response> => {
    const exchange: Exchange = {
      method: init.method ?? 'GET',
      path: new URL(String(input)).pathname.replace('/api/v1', ''),
      key: new Headers(init.headers).get('idempotency-key'),
      status: undefined,
      replayed: false,
    }
    exchanges.push(exchange)
    const response = await fetch(input, init)
    exchange.status = response.status
    exchange.replayed = response.headers.get('idempotent-replayed') === 'true'
    return response
  }
  return { fetch: recorder as typeof fetch, exchanges }
}

const posts = (exchanges: Exchange[]) => exchanges.filter((e) => e.method === 'POST')

/** Resolves once `condition` holds (asked every 20 ms), or fails after 20 s. */
async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  for (const deadline = Date.now() + 20_000; !(await condition());) {
    if (Date.now() > deadline) throw new Error('gave up waiting')
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

async function fileIds(client: Fileshare): Promise<number[]> {
  const ids: number[] = []
  for await (const file of client.files.iterate()) ids.push(file.file_id)
  return ids
}

/** The account holds `file` and nothing else: one file, its bytes, one upload counted, nothing reserved. */
async function expectOneFile(client: Fileshare, file: FileRecord): Promise<void> {
  expect(await fileIds(client)).toEqual([file.file_id])
  const { stats } = await client.stats()
  expect(stats).toMatchObject({ total_files: 1, total_size: file.size, uploads_today: 1, storage_reserved: 0 })
}

describe('a connection cut after the server acted, then the SDK retries: one file, one link', () => {
  /** A client on a new account through the cutting proxy (no waits between retries), and one straight to the server. */
  async function cutAccount(name: string, options: FileshareOptions = {}) {
    const { key, client: direct } = await newAccount(name)
    const viaProxy = new Fileshare({ baseUrl: `${proxy.url}/api/v1`, apiKey: key, sleep: async () => {}, ...options })
    return { viaProxy, direct }
  }

  it('a multipart upload (streamed with node:http) stores one file and counts one upload', async () => {
    const { viaProxy, direct } = await cutAccount('cut-multipart')
    const data = randomBytes(200_000, 51)
    const cuts = proxy.cuts
    proxy.cutDownstreamAfter(1) // the server stored the file; its answer is lost
    const file = await viaProxy.files.upload(data, { filename: 'cut.bin', resumable: false })
    expect(proxy.cuts).toBe(cuts + 1)
    expect(file).toMatchObject({ filename: 'cut.bin', size: data.length, sha256: sha256Hex(data) })
    await expectOneFile(direct, file)
  })

  it('the second POST carries the first one’s key and gets its answer replayed (multipart through fetch)', async () => {
    const { fetch, exchanges } = recording()
    const { viaProxy, direct } = await cutAccount('cut-replayed', { fetch })
    const data = randomBytes(100_000, 52)
    proxy.cutDownstreamAfter(1)
    const file = await viaProxy.files.upload(data, { filename: 'cut.bin', resumable: false })
    const sent = posts(exchanges)
    expect(sent.map((e) => [e.status, e.replayed])).toEqual([
      [undefined, false],
      [201, true],
    ])
    expect(sent[0]!.key).toMatch(/^[0-9a-f-]{36}$/)
    expect(sent[1]!.key).toBe(sent[0]!.key)
    await expectOneFile(direct, file)
  })

  it('a resumable upload whose creation answer is lost makes one upload, and one file', async () => {
    const { fetch, exchanges } = recording()
    const { viaProxy, direct } = await cutAccount('cut-tus', { fetch })
    await viaProxy.resumableUploads() // asked before the cut: only the creation's answer is lost
    const data = randomBytes(300_000, 53)
    const cuts = proxy.cuts
    proxy.cutDownstreamAfter(1)
    const file = await viaProxy.files.upload(data, { filename: 'tus.bin', resumable: true, chunkSize: 64 * 1024 })
    expect(proxy.cuts).toBe(cuts + 1)
    expect(file).toMatchObject({ size: data.length, sha256: sha256Hex(data), filename: 'tus.bin' })
    const creations = posts(exchanges)
    expect(creations.map((e) => [e.path, e.status, e.replayed])).toEqual([
      ['/uploads', undefined, false],
      ['/uploads', 201, true],
    ])
    expect(creations[1]!.key).toBe(creations[0]!.key)
    expect(exchanges.filter((e) => e.method !== 'POST').every((e) => e.key === null)).toBe(true)
    await expectOneFile(direct, file)
  })

  it('links.create whose answer is lost makes one link', async () => {
    const { fetch, exchanges } = recording()
    const { viaProxy, direct } = await cutAccount('cut-link', { fetch })
    const file = await direct.files.upload(randomBytes(1000, 54), { filename: 'l.bin' })
    proxy.cutDownstreamAfter(1)
    const link = await viaProxy.links.create(file.file_id, { label: 'once', max_downloads: 2 })
    expect(posts(exchanges).map((e) => [e.status, e.replayed])).toEqual([
      [undefined, false],
      [201, true],
    ])
    const links = await direct.links.list(file.file_id)
    expect(links.filter((l) => !l.default).map((l) => l.link_id)).toEqual([link.link_id])
  })
})

describe('the same idempotency key given twice', () => {
  it('an upload: the second call gets the first file; another file under the key is idempotency_key_reused', async () => {
    const { fetch, exchanges } = recording()
    const { client } = await newAccount('same-key', { fetch })
    const data = randomBytes(50_000, 55)
    const idempotencyKey = `sdk-js-${randomUUID()}`
    const first = await client.files.upload(data, { filename: 'a.bin', idempotencyKey })
    const again = await client.files.upload(data, { filename: 'a.bin', idempotencyKey })
    expect({ ...again }).toEqual({ ...first })
    expect(posts(exchanges).map((e) => [e.key, e.replayed])).toEqual([
      [idempotencyKey, false],
      [idempotencyKey, true],
    ])
    const reused = await client.files.upload(randomBytes(50_001, 56), { filename: 'b.bin', idempotencyKey }).catch((e: unknown) => e)
    expect(reused).toBeInstanceOf(BadRequestError)
    expect(reused).toMatchObject({ status: 422, code: 'idempotency_key_reused' })
    expect(await fileIds(client)).toEqual([first.file_id])
    expect((await client.stats()).stats.uploads_today).toBe(1)
  })

  it('a resumable upload: the second call finds the upload done and sends no byte', async () => {
    const { fetch, exchanges } = recording()
    const { client } = await newAccount('same-key-tus', { fetch })
    const data = randomBytes(120_000, 57)
    const idempotencyKey = `sdk-js-${randomUUID()}`
    const first = await client.files.upload(data, { filename: 't.bin', resumable: true, chunkSize: 32 * 1024, idempotencyKey })
    const patches = exchanges.filter((e) => e.method === 'PATCH').length
    const again = await client.files.upload(data, { filename: 't.bin', resumable: true, chunkSize: 32 * 1024, idempotencyKey })
    expect(again.file_id).toBe(first.file_id)
    expect(exchanges.filter((e) => e.method === 'PATCH')).toHaveLength(patches)
    expect(await fileIds(client)).toEqual([first.file_id])
  })

  it('links.create: the same link again; another policy under the key is idempotency_key_reused', async () => {
    const { client } = await newAccount('same-key-link')
    const file = await client.files.upload(randomBytes(1000, 58), { filename: 'l.bin' })
    const idempotencyKey = `sdk-js-${randomUUID()}`
    const link = await client.links.create(file.file_id, { label: 'once', idempotencyKey })
    expect((await client.links.create(file.file_id, { label: 'once', idempotencyKey })).link_id).toBe(link.link_id)
    await expect(client.links.create(file.file_id, { label: 'another', idempotencyKey })).rejects.toMatchObject({
      name: 'BadRequestError',
      code: 'idempotency_key_reused',
    })
    expect((await client.links.list(file.file_id)).filter((l) => !l.default).map((l) => l.link_id)).toEqual([link.link_id])
  })

  it('while the first call still sends its body, the second waits (409 idempotency_in_progress) and gets its answer', async () => {
    const { fetch, exchanges } = recording()
    const { client, key } = await newAccount('in-progress', { fetch, maxRetries: 5 })
    // The slow first call goes by node:http (no recording), the second through the recording fetch.
    const slowClient = new Fileshare({ baseUrl: server().base_url, apiKey: key })
    const data = randomBytes(30_000, 59)
    const idempotencyKey = `sdk-js-${randomUUID()}`
    async function* slow() {
      yield data.subarray(0, 10_000)
      await until(() => posts(exchanges).some((e) => e.status === 409)) // the rest once the second call was told to wait
      yield data.subarray(10_000)
    }
    const first = slowClient.files.upload(slow(), { filename: 'a.bin', size: data.length, idempotencyKey })
    // The first call holds the key once its upload reserved its bytes.
    await until(async () => (await client.stats()).stats.storage_reserved > 0)
    const second = await client.files.upload(data, { filename: 'a.bin', idempotencyKey })
    const firstFile = await first
    expect(second.file_id).toBe(firstFile.file_id)
    expect(firstFile.sha256).toBe(sha256Hex(data))
    const answers = posts(exchanges).map((e) => [e.status, e.replayed])
    expect(answers[0]).toEqual([409, false])
    expect(answers.at(-1)).toEqual([201, true])
    expect(await fileIds(client)).toEqual([firstFile.file_id])
    expect((await client.stats()).stats.uploads_today).toBe(1)
  })
})

describe('paging by before_id', () => {
  it('iterate() while deleting every file it yields leaves none (250 files, 100 a page)', async () => {
    const { client } = await newAccount('iterate')
    const made: number[] = []
    for (let batch = 0; batch < 250; batch += 25) {
      const files = await Promise.all(
        Array.from({ length: 25 }, (_, i) => client.files.upload(new Uint8Array([batch + i]), { filename: `f${batch + i}.bin` })),
      )
      made.push(...files.map((f) => f.file_id))
    }
    const first = await client.files.list({ limit: 100 })
    expect(first.pagination).toEqual({ page: 1, limit: 100, total: 250, pages: 3, next_before_id: first.files.at(-1)!.file_id })
    const second = await client.files.list({ limit: 100, before_id: first.pagination.next_before_id! })
    expect(second.pagination.page).toBeNull()
    expect(second.files[0]!.file_id).toBeLessThan(first.files.at(-1)!.file_id)
    for (const wrong of [{ page: 1, before_id: made[0]! }, { before_id: 0 }, { before_id: 2 ** 53 }]) {
      await expect(client.files.list(wrong)).rejects.toMatchObject({ name: 'BadRequestError', status: 400, code: 'invalid_parameter' })
    }

    const deleted: number[] = []
    for await (const file of client.files.iterate({ limit: 100 })) {
      await client.files.delete(file.file_id)
      deleted.push(file.file_id)
    }
    expect(deleted).toEqual([...made].sort((a, b) => b - a)) // every file, once, newest first
    const left = await client.files.list()
    expect(left.files).toEqual([])
    expect(left.pagination).toMatchObject({ total: 0, next_before_id: null })
  })
})

describe('the storage quota', () => {
  it('stats carry max_storage (the pro plan: 100 GiB) and storage_reserved', async () => {
    const { limits, stats } = await new Fileshare({ baseUrl: server().base_url, apiKey: server().keys.pro }).stats()
    expect(limits.max_storage).toBe(100 * 1024 ** 3)
    expect(stats.storage_reserved).toBeGreaterThanOrEqual(0)
  })

  it('an upload over a quota set with the CLI is a LimitExceededError storage_quota_exceeded, and leaves nothing reserved', async () => {
    const { id, client } = await newAccount('quota', { maxRetries: 0 })
    await fileshareCli('account', 'set-limits', String(id), '--max-storage', '100000')
    const before = await client.stats()
    expect(before.limits.max_storage).toBe(100_000)
    expect(before.stats).toMatchObject({ storage_reserved: 0, total_size: 0 })

    const kept = await client.files.upload(randomBytes(60_000, 60), { filename: 'kept.bin' })
    for (const resumable of [false, true]) {
      // Refused on the declared length, before the body.
      const error = await client.files.upload(randomBytes(60_000, 61), { filename: 'over.bin', resumable }).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(LimitExceededError)
      expect(error).toMatchObject({ status: 403, code: 'storage_quota_exceeded' })
    }
    // A stream of unknown length (a deferred tus length): refused at the first byte past the quota.
    async function* grown() {
      for (let i = 0; i < 6; i++) yield randomBytes(10_000, 62 + i)
    }
    const deferred = await client.files
      .upload(grown(), { filename: 'grown.bin', resumable: true, chunkSize: 10_000 })
      .catch((e: unknown) => e)
    expect(deferred).toBeInstanceOf(LimitExceededError)
    expect(deferred).toMatchObject({ code: 'storage_quota_exceeded' })

    const after = await client.stats()
    expect(after.stats).toMatchObject({ total_files: 1, total_size: kept.size, storage_reserved: 0 })
    await fileshareCli('account', 'set-limits', String(id), '--max-storage', 'unlimited')
    expect((await client.stats()).limits.max_storage).toBeNull()
  })
})
