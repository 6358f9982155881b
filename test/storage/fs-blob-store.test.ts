import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import fs from 'node:fs/promises'
import path from 'node:path'
import { Readable } from 'node:stream'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { BlobNotFoundError, FileTooLargeError } from '../../src/errors.js'
import { BlobReadStream } from '../../src/storage/blob-read-stream.js'
import { FsBlobStore } from '../../src/storage/fs-blob-store.js'
import { makeTempDir } from '../helpers/test-app.js'
import {
  chunkedSource,
  describeBlobStoreContract,
  failingSource,
  listKeys,
  listUnfinished,
  readAll,
} from '../helpers/blob-store-contract.js'

describeBlobStoreContract('FsBlobStore', async () => {
  const root = await makeTempDir('fileshare-fs-blobs-')
  return {
    store: await new FsBlobStore(root).init(),
    cleanup: () => fs.rm(root, { recursive: true, force: true }),
    // put() writes tmp/<key>.part and renames it when done: a kill before the rename leaves it there.
    interruptWrite: (bytes) => fs.writeFile(path.join(root, 'tmp', `${randomBytes(16).toString('hex')}.part`), bytes),
  }
})

describe('FsBlobStore on disk', () => {
  // The store's root sits three levels below `base`, so that escaping keys would land inside `base`.
  let base: string
  let root: string
  let store: FsBlobStore

  beforeEach(async () => {
    base = await makeTempDir('fileshare-fs-jail-')
    root = path.join(base, 'srv', 'data', 'blobs')
    store = await new FsBlobStore(root).init()
  })
  afterEach(async () => {
    await fs.rm(base, { recursive: true, force: true })
  })

  const tmpEntries = () => fs.readdir(path.join(root, 'tmp'))

  it('init creates the folders it needs, and a fresh store is empty', async () => {
    expect((await fs.stat(path.join(root, 'tmp'))).isDirectory()).toBe(true)
    expect((await fs.stat(path.join(root, 'objects'))).isDirectory()).toBe(true)
    expect(await listKeys(store)).toEqual([])
  })

  it('leaves no file in tmp/ after a successful put, and the bytes are under objects/', async () => {
    const content = randomBytes(50_000)
    const { key } = await store.put(chunkedSource(content), { maxBytes: 100_000 })
    expect(await tmpEntries()).toEqual([])
    const objects = await fs.readdir(path.join(root, 'objects'), { recursive: true })
    const files = objects.filter((entry) => path.basename(entry) === key)
    expect(files).toHaveLength(1)
    expect((await fs.readFile(path.join(root, 'objects', files[0]!))).equals(content)).toBe(true)
  })

  it('leaves no file in tmp/ after a put over maxBytes', async () => {
    await expect(store.put(chunkedSource(randomBytes(50_000), 4096), { maxBytes: 10_000 })).rejects.toBeInstanceOf(FileTooLargeError)
    expect(await tmpEntries()).toEqual([])
    expect(await listKeys(store)).toEqual([])
  })

  it('leaves no file in tmp/ after a put whose source fails', async () => {
    await expect(store.put(failingSource(randomBytes(50_000), new Error('source broke')), { maxBytes: 1_000_000 })).rejects.toThrow(
      'source broke',
    )
    expect(await tmpEntries()).toEqual([])
    expect(await listKeys(store)).toEqual([])
  })

  it('leaves no file in tmp/ after many concurrent puts, failed or not', async () => {
    await Promise.allSettled([
      ...Array.from({ length: 5 }, () => store.put(chunkedSource(randomBytes(8_000)), { maxBytes: 10_000 })),
      ...Array.from({ length: 5 }, () => store.put(chunkedSource(randomBytes(20_000)), { maxBytes: 10_000 })),
      ...Array.from({ length: 5 }, () => store.put(failingSource(randomBytes(5_000), new Error('gone')), { maxBytes: 10_000 })),
    ])
    expect(await tmpEntries()).toEqual([])
    expect(await listKeys(store)).toHaveLength(5)
  })

  it('a key that is not one of its keys is not found and never reaches a path outside the root', async () => {
    // Where each key would point if it were joined to objects/<first two chars>/ unchecked.
    const escapingKeys = ['../../etc/passwd', '../../../outside', '../secret']
    const decoys: string[] = []
    for (const key of escapingKeys) {
      const unchecked = path.join(root, 'objects', key.slice(0, 2), key)
      if (path.relative(root, unchecked).startsWith('..')) {
        expect(unchecked.startsWith(base + path.sep)).toBe(true)
        await fs.mkdir(path.dirname(unchecked), { recursive: true })
        await fs.writeFile(unchecked, 'decoy outside the store')
        decoys.push(unchecked)
      }
    }
    expect(decoys).toHaveLength(escapingKeys.length)

    for (const key of [...escapingKeys, '..', '/etc/passwd', 'C:\\Windows\\win.ini', '', 'ABCDEF', 'a'.repeat(31)]) {
      await expect(store.get(key), key).rejects.toBeInstanceOf(BlobNotFoundError)
      await expect(store.get(key, { start: 0, end: 3 }), key).rejects.toBeInstanceOf(BlobNotFoundError)
      await expect(store.delete(key), key).resolves.toBeUndefined()
    }
    for (const decoy of decoys) expect(await fs.readFile(decoy, 'utf8')).toBe('decoy outside the store')
  })

  it('a valid key whose file was placed by hand outside objects/ is not found', async () => {
    // Keys name files only inside objects/: a blob-shaped file in tmp/ or the root is not a blob.
    const key = randomBytes(16).toString('hex')
    await fs.writeFile(path.join(root, key), 'stray')
    await fs.writeFile(path.join(root, 'tmp', key), 'stray')
    await expect(store.get(key)).rejects.toBeInstanceOf(BlobNotFoundError)
    expect(await listKeys(store)).toEqual([])
  })

  it('keeps a blob readable across store instances on the same root', async () => {
    const content = Buffer.from('durable')
    const { key } = await store.put(chunkedSource(content), { maxBytes: 100 })
    const reopened = await new FsBlobStore(root).init()
    expect((await readAll(await reopened.get(key))).equals(content)).toBe(true)
    expect(await listKeys(reopened)).toEqual([key])
  })

  it('a put in progress is an unfinished write dated by its latest write, and is none once it completes', async () => {
    const HOUR = 3_600_000
    let release = false
    const written = randomBytes(40_000)
    async function* slowBody() {
      yield written.subarray(0, 20_000)
      while (!release) await sleep(5)
      yield written.subarray(20_000)
    }
    const putting = store.put(Readable.from(slowBody(), { objectMode: false }), { maxBytes: 100_000 })
    const firstHalf = async () => {
      const writes = await listUnfinished(store)
      return writes.length === 1 && writes[0]!.size === 20_000 ? writes[0] : undefined
    }
    let inFlight = await firstHalf()
    while (!inFlight) {
      await sleep(5)
      inFlight = await firstHalf()
    }
    // As if the first bytes had arrived two hours ago, on a very slow link.
    const tmpFile = path.join(root, 'tmp', inFlight.id)
    await fs.utimes(tmpFile, new Date(Date.now() - 2 * HOUR), new Date(Date.now() - 2 * HOUR))
    expect((await listUnfinished(store))[0]!.lastWrittenAt.getTime()).toBeLessThan(Date.now() - HOUR)

    const beforeMore = Date.now()
    release = true
    const { key } = await putting
    // The last bytes freshened the file's time before it became the blob.
    const [blob] = await (async () => {
      const entries = []
      for await (const entry of store.list()) entries.push(entry)
      return entries
    })()
    expect(blob).toMatchObject({ key, size: 40_000 })
    expect(blob!.modifiedAt.getTime()).toBeGreaterThanOrEqual(beforeMore - 1_000)
    expect(await listUnfinished(store)).toEqual([])
  })

  it('check rejects when its folders are gone', async () => {
    await fs.rm(root, { recursive: true, force: true })
    await expect(store.check()).rejects.toThrow()
  })
})

describe('FsBlobStore sending a blob over HTTP', () => {
  const READ_CHUNK = 256 * 1024
  let root: string
  let server: http.Server
  let url: string
  let store: FsBlobStore
  let key: string
  const content = randomBytes(16 * 1024 * 1024 + 123)

  beforeEach(async () => {
    root = await makeTempDir('fileshare-fs-send-')
    store = await new FsBlobStore(root).init()
    ;({ key } = await store.put(chunkedSource(content, 64 * 1024), { maxBytes: content.length }))
    // As the download route sends it: told its response, then piped into it.
    server = http.createServer((request, response) => {
      const [, start, end] = /^\/(\d+)-(\d+)$/.exec(request.url ?? '') ?? []
      void store.get(key, start === undefined ? undefined : { start: Number(start), end: Number(end) }).then((body) => {
        ;(body as BlobReadStream).drainsInto(response)
        body.pipe(response)
      })
    })
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  afterEach(async () => {
    vi.restoreAllMocks()
    server.close()
    await fs.rm(root, { recursive: true, force: true })
  })

  /** The body; a slow reader stops now and then, long enough for the server's socket to back up. */
  async function download(path: string, slow: boolean): Promise<Buffer> {
    const response = (await once(http.get(url + path), 'response')) as [http.IncomingMessage]
    const chunks: Buffer[] = []
    let count = 0
    for await (const chunk of response[0]) {
      chunks.push(chunk as Buffer)
      if (slow && ++count % 64 === 1) await sleep(50)
    }
    return Buffer.concat(chunks)
  }

  it('sends the exact bytes, whole and ranged, fast reader or slow, reusing its read buffers', async () => {
    const allocations = vi.spyOn(Buffer, 'allocUnsafeSlow')
    expect((await download('/', false)).equals(content)).toBe(true)
    expect((await download('/', true)).equals(content)).toBe(true)
    expect((await download('/1000-3000000', true)).equals(content.subarray(1000, 3_000_001))).toBe(true)
    expect((await download(`/0-${content.length - 1}`, false)).equals(content)).toBe(true)
    // 64 reads of 256 KiB per whole download; buffers come back as the socket writes them.
    const readBuffers = allocations.mock.calls.filter(([size]) => size === READ_CHUNK).length
    expect(readBuffers).toBeLessThan(64)
  })

  it('gives every read a buffer of its own when read by anything but its response', async () => {
    const body = (await store.get(key)) as BlobReadStream
    const chunks: Buffer[] = []
    for await (const chunk of body) chunks.push(chunk as Buffer)
    expect(new Set(chunks.map((chunk) => chunk.buffer)).size).toBe(chunks.length)
    expect(Buffer.concat(chunks).equals(content)).toBe(true)
  })
})
