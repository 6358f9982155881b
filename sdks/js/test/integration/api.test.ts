// Every call against the real server (started by the shared launcher), and the error classes.
import { readFileSync, writeFileSync } from 'node:fs'
import { Readable, Writable } from 'node:stream'
import { afterAll, describe, expect, it } from 'vitest'
import {
  APIConnectionError,
  AuthenticationError,
  BadRequestError,
  ConfigurationError,
  Fileshare,
  NotFoundError,
  PermissionDeniedError,
  type FileRecord,
} from '../../src/index.js'
import { client, randomBytes, server, sha256Hex, tempDir } from '../helpers/env.js'

const tmp = tempDir()
afterAll(() => tmp.remove())

describe('files and stats with a pro key', () => {
  const fs = client('pro')

  it('uploads every kind of source and returns the record', async () => {
    const data = randomBytes(300_000, 3)
    writeFileSync(tmp.file('from-path.bin'), data)
    const progress: [number, number | undefined][] = []
    const fromPath = await fs.files.upload(tmp.file('from-path.bin'), { onProgress: (s, t) => progress.push([s, t]) })
    expect(fromPath).toMatchObject({ filename: 'from-path.bin', size: data.length, sha256: sha256Hex(data), download_count: 0 })
    expect(fromPath.public_link).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/download\//)
    expect(fromPath.uploaded_at).toBeInstanceOf(Date)
    expect(progress.at(-1)).toEqual([data.length, data.length])
    expect(progress.every(([sent], i) => i === 0 || sent >= progress[i - 1]![0])).toBe(true)

    const fromBytes = await fs.files.upload(data, { filename: 'bytes.bin' })
    const fromBlob = await fs.files.upload(new Blob([data as Uint8Array<ArrayBuffer>]), { filename: 'blob.txt' })
    const fromFile = await fs.files.upload(new File(['héllo'], 'résumé "1".txt'))
    const fromWebStream = await fs.files.upload(new Blob([data as Uint8Array<ArrayBuffer>]).stream(), { filename: 'web.bin' })
    const fromNodeStream = await fs.files.upload(Readable.from([Buffer.from(data)]), { filename: 'node.bin' })
    const empty = await fs.files.upload(new Uint8Array(0), { filename: 'empty.bin' })
    expect(fromBytes.sha256).toBe(sha256Hex(data))
    expect(fromBlob).toMatchObject({ filename: 'blob.txt', content_type: 'text/plain', sha256: sha256Hex(data) })
    expect(fromFile).toMatchObject({ filename: 'résumé "1".txt', size: 6 })
    expect(fromWebStream.sha256).toBe(sha256Hex(data))
    expect(fromNodeStream.sha256).toBe(sha256Hex(data))
    expect(empty.size).toBe(0)
  })

  it('uploads resumably (tus) when forced, with checksums, and gets the same record', async () => {
    const data = randomBytes(2_500_000, 4)
    const progress: number[] = []
    const file = await fs.files.upload(data, {
      filename: 'tus.bin',
      resumable: true,
      chunkSize: 1024 * 1024,
      onProgress: (s) => progress.push(s),
    })
    expect(file).toMatchObject({ filename: 'tus.bin', size: data.length, sha256: sha256Hex(data) })
    expect(progress.at(-1)).toBe(data.length)
    const again = await fs.files.get(file.file_id)
    expect({ ...again }).toEqual({ ...file })
    // A stream of unknown length goes with a deferred length.
    const stream = await fs.files.upload(Readable.from([Buffer.from(data.subarray(0, 1_500_000)), Buffer.from(data.subarray(1_500_000))]), {
      filename: 'deferred.bin',
      resumable: true,
      chunkSize: 1024 * 1024,
    })
    expect(stream.sha256).toBe(sha256Hex(data))
    const zero = await fs.files.upload(new Uint8Array(0), { filename: 'zero.bin', resumable: true })
    expect(zero.size).toBe(0)
  })

  it('detects resumable uploads with OPTIONS /uploads', async () => {
    await expect(fs.resumableUploads()).resolves.toMatchObject({ available: true, checksumSha256: true })
  })

  it('gets, lists, iterates across pages without a duplicate, deletes', async () => {
    const created: FileRecord[] = []
    for (let i = 0; i < 5; i++) created.push(await fs.files.upload(new TextEncoder().encode(`file ${i}`), { filename: `list-${i}.txt` }))
    const got = await fs.files.get(created[0]!.file_id)
    expect(got.filename).toBe('list-0.txt')

    const page = await fs.files.list({ page: 1, limit: 2 })
    expect(page.files).toHaveLength(2)
    expect(page.pagination).toMatchObject({ page: 1, limit: 2 })
    expect(page.pagination.pages).toBe(Math.ceil(page.pagination.total / 2))

    // Uploads during the iteration shift the pages: nothing may come twice.
    const seen: number[] = []
    let uploadedDuring = 0
    for await (const file of fs.files.iterate({ limit: 2 })) {
      seen.push(file.file_id)
      if (uploadedDuring < 3) {
        uploadedDuring++
        await fs.files.upload(new TextEncoder().encode('during'), { filename: 'during.txt' })
      }
    }
    expect(new Set(seen).size).toBe(seen.length)
    for (const file of created) expect(seen).toContain(file.file_id)

    const stats = await fs.stats()
    expect(stats.plan).toBe('pro')
    expect(stats.stats.total_files).toBeGreaterThanOrEqual(5)
    expect(stats.limits.max_file_size).toBe(5 * 1024 ** 3)

    await fs.files.delete(created[0]!.file_id)
    await expect(fs.files.get(created[0]!.file_id)).rejects.toBeInstanceOf(NotFoundError)
    await expect(fs.files.delete(created[0]!.file_id)).rejects.toMatchObject({ name: 'NotFoundError', status: 404, code: 'not_found' })
  })

  it('downloads to a path, a Node stream and a web stream, verified against the ETag', async () => {
    const data = randomBytes(1_234_567, 5)
    const file = await fs.files.upload(data, { filename: 'dl.bin' })
    const progress: number[] = []
    const result = await fs.download(file, tmp.file('dl.bin'), { onProgress: (n) => progress.push(n) })
    expect(result).toEqual({ size: data.length, sha256: sha256Hex(data), resumedFrom: 0 })
    expect(sha256Hex(readFileSync(tmp.file('dl.bin')))).toBe(sha256Hex(data))
    expect(progress.at(-1)).toBe(data.length)

    const chunks: Buffer[] = []
    const sink = new Writable({ write: (chunk: Buffer, _enc, done) => void (chunks.push(chunk), done()) })
    await fs.download(file.public_link, sink)
    expect(sha256Hex(Buffer.concat(chunks))).toBe(sha256Hex(data))

    const webChunks: Uint8Array[] = []
    await fs.download(file, new WritableStream({ write: (chunk) => void webChunks.push(chunk) }))
    expect(sha256Hex(Buffer.concat(webChunks))).toBe(sha256Hex(data))
    expect((await fs.files.get(file.file_id)).download_count).toBe(3)

    const empty = await fs.files.upload(new Uint8Array(0), { filename: 'e.bin' })
    await fs.download(empty, tmp.file('e.bin'))
    expect(readFileSync(tmp.file('e.bin')).length).toBe(0)
  })
})

describe('error classes against the real server', () => {
  it('AuthenticationError for a bad key', async () => {
    const bad = new Fileshare({ baseUrl: server().base_url, apiKey: 'fsk_' + 'A'.repeat(43) })
    const error = await bad.stats().catch((e: unknown) => e)
    expect(error).toBeInstanceOf(AuthenticationError)
    expect(error).toMatchObject({ status: 401, code: 'unauthorized' })
    expect((error as AuthenticationError).requestId).toMatch(/^[0-9a-f-]{36}$/)
  })

  it('PermissionDeniedError for a free account, on every call', async () => {
    const free = client('free')
    for (const call of [
      () => free.stats(),
      () => free.files.list(),
      () => free.files.get(1),
      () => free.files.upload(new Uint8Array(3), { filename: 'x' }),
    ]) {
      const error = await call().catch((e: unknown) => e)
      expect(error).toBeInstanceOf(PermissionDeniedError)
      expect(error).toMatchObject({ status: 403, code: 'plan_not_supported' })
    }
    await expect(free.files.upload(new Uint8Array(3), { filename: 'x', resumable: true })).rejects.toBeInstanceOf(PermissionDeniedError)
  })

  it('NotFoundError for an unknown file and an unknown link', async () => {
    const fs = client('pro')
    await expect(fs.files.get(9_000_000)).rejects.toBeInstanceOf(NotFoundError)
    await expect(fs.download(`${server().server_url}/download/${'x'.repeat(32)}`, tmp.file('nf.bin'))).rejects.toBeInstanceOf(NotFoundError)
  })

  it('BadRequestError for a refused parameter', async () => {
    const error = await client('pro')
      .files.list({ limit: 500 })
      .catch((e: unknown) => e)
    expect(error).toBeInstanceOf(BadRequestError)
    expect(error).toMatchObject({ status: 400, code: 'invalid_parameter' })
  })

  it('APIConnectionError when nothing answers', async () => {
    const dead = new Fileshare({ baseUrl: 'http://127.0.0.1:9/api/v1', apiKey: 'fsk_x', maxRetries: 1, sleep: async () => {} })
    await expect(dead.stats()).rejects.toBeInstanceOf(APIConnectionError)
  })

  it('ConfigurationError for a source the SDK cannot read', async () => {
    await expect(client('pro').files.upload(42 as never)).rejects.toBeInstanceOf(ConfigurationError)
  })

  it('aborts a call with an AbortSignal', async () => {
    const controller = new AbortController()
    const pending = client('pro').files.upload(randomBytes(8 * 1024 * 1024), {
      filename: 'abort.bin',
      signal: controller.signal,
      onProgress: (sent) => sent > 1024 * 1024 && controller.abort(),
    })
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' })
  })
})
