import { randomBytes } from 'node:crypto'
import { Readable } from 'node:stream'
import { buffer } from 'node:stream/consumers'
import { describe, expect, it } from 'vitest'
import { BlobNotFoundError, NotFoundError, ScanPendingError } from '../../src/errors.js'
import type { FileRow } from '../../src/db/schema.js'
import { ArchiveService, type ArchiveOptions } from '../../src/services/archives.js'
import { ScanPolicy, SCANNING_OFF } from '../../src/services/scan-policy.js'
import type { BlobStore } from '../../src/storage/blob-store.js'
import { readZip } from '../helpers/zip-reader.js'

/** Files of account 1 in memory, each with its bytes under its own storage key. */
function fixture(contents: Record<string, Buffer>, options: ArchiveOptions = {}, scan: Pick<ScanPolicy, 'checkServable'> = SCANNING_OFF) {
  const rows = new Map<number, FileRow>()
  let id = 0
  for (const [filename, content] of Object.entries(contents)) {
    id++
    rows.set(id, {
      id,
      account_id: 1,
      filename,
      size: content.length,
      storage_key: `key-${id}`,
      created_at: Date.UTC(2026, 10, 27, 12, 0, 0),
      scan_status: 'clean',
    } as FileRow)
  }
  const opened: string[] = []
  const store = {
    async get(key: string) {
      opened.push(key)
      const row = [...rows.values()].find((one) => one.storage_key === key)!
      return Readable.from([contents[row.filename]!])
    },
  } as unknown as BlobStore
  const files = {
    async get(accountId: number, fileId: number) {
      const row = rows.get(fileId)
      if (!row || row.account_id !== accountId) throw new NotFoundError(`No file with id ${fileId}.`)
      return row
    },
  }
  return { service: new ArchiveService(files, store, scan, options), store, opened, rows }
}

describe('ArchiveService', () => {
  it('writes ZIP64 records when told to, which unzip programs read as any archive', async () => {
    const a = randomBytes(10_000)
    const { service } = fixture({ 'a.bin': a, 'b.txt': Buffer.from('b') }, { forceZip64: true })
    const archive = await service.open(await service.plan(1, [1, 2]))
    const bytes = await buffer(archive.stream)
    expect(bytes.length).toBe(archive.size)
    const { entries, zip64 } = await readZip(bytes)
    expect(zip64).toBe(true)
    expect(entries.map((entry) => entry.name)).toEqual(['a.bin', 'b.txt'])
    expect(entries[0]!.data.equals(a)).toBe(true)
  })

  it('knows the exact length before the first byte, without ZIP64 too', async () => {
    const { service } = fixture({ 'a.bin': randomBytes(1234), 'b.bin': Buffer.alloc(0) })
    const archive = await service.open(await service.plan(1, [2, 1]))
    expect((await buffer(archive.stream)).length).toBe(archive.size)
  })

  it('tells the exact length of an archive whose central directory passes 64 KiB (1000 entries)', async () => {
    const contents: Record<string, Buffer> = {}
    for (let i = 0; i < 1000; i++) contents[`a fairly long file name number ${i}.txt`] = Buffer.from(`${i}`)
    const { service } = fixture(contents)
    const archive = await service.open(
      await service.plan(
        1,
        Array.from({ length: 1000 }, (_, i) => i + 1),
      ),
    )
    const bytes = await buffer(archive.stream)
    expect(bytes.length).toBe(archive.size)
    const { entries, zip64 } = await readZip(bytes)
    expect(entries).toHaveLength(1000)
    // No ZIP64 where none is needed: the Mac Archive Utility does not read it.
    expect(zip64).toBe(false)
  })

  it('opens no stored file while planning, and each only when its turn comes', async () => {
    const { service, opened } = fixture({ 'a.bin': randomBytes(10), 'b.bin': randomBytes(10) })
    const entries = await service.plan(1, [1, 2])
    expect(opened).toEqual([])
    const archive = await service.open(entries)
    // The first is open before the status could go out (so that its failure is an error answer); the next waits its turn.
    expect(opened).toEqual(['key-1'])
    await buffer(archive.stream)
    expect(opened).toEqual(['key-1', 'key-2'])
  })

  it('a first stored file that cannot be opened rejects open() itself, before any byte or status', async () => {
    const { service, store, opened } = fixture({ 'a.bin': randomBytes(10), 'b.bin': randomBytes(10) })
    const realGet = store.get.bind(store)
    store.get = async (key: string) => {
      if (key === 'key-1') throw new BlobNotFoundError(key)
      return realGet(key)
    }
    await expect(service.open(await service.plan(1, [1, 2]))).rejects.toBeInstanceOf(BlobNotFoundError)
    // Nothing else was opened for an archive that will not be sent.
    expect(opened).toEqual([])
  })

  it('the first stored file, opened early, is closed when the reader goes away before it is read', async () => {
    const { service, store } = fixture({ 'a.bin': randomBytes(10) })
    const body = new Readable({ read() {} })
    store.get = async () => body
    const archive = await service.open(await service.plan(1, [1]))
    archive.stream.destroy()
    await new Promise((resolve) => setImmediate(resolve))
    expect(body.destroyed).toBe(true)
  })

  it('a stored file that cannot be opened destroys the stream with its error', async () => {
    const { service, store } = fixture({ 'a.bin': randomBytes(10), 'b.bin': randomBytes(10) })
    store.get = async (key: string) => {
      if (key === 'key-2') throw new Error('gone from the store')
      return Readable.from([Buffer.alloc(10)])
    }
    const archive = await service.open(await service.plan(1, [1, 2]))
    await expect(buffer(archive.stream)).rejects.toThrow('gone from the store')
  })

  it('a stored file with more bytes than its size, or one that closes without its end, destroys the stream', async () => {
    const { service, store } = fixture({ 'a.bin': randomBytes(10) })
    store.get = async () => Readable.from([Buffer.alloc(8), Buffer.alloc(8)])
    const tooLong = await service.open(await service.plan(1, [1]))
    await expect(buffer(tooLong.stream)).rejects.toThrow('run past its size')

    store.get = async () => {
      const body = new Readable({ read() {} })
      body.push(Buffer.alloc(4))
      setImmediate(() => body.destroy())
      return body
    }
    const cut = await service.open(await service.plan(1, [1]))
    await expect(buffer(cut.stream)).rejects.toThrow('ended early')
  })

  it('refuses a file that scanning has not cleared, where scanning is required, before any byte', async () => {
    const required = new ScanPolicy('required', 1_000_000)
    const { service, rows, opened } = fixture({ 'a.bin': randomBytes(10) }, {}, required)
    rows.get(1)!.scan_status = 'pending'
    await expect(service.plan(1, [1])).rejects.toBeInstanceOf(ScanPendingError)
    expect(opened).toEqual([])
  })

  it("another account's file is not found", async () => {
    const { service } = fixture({ 'a.bin': randomBytes(10) })
    await expect(service.plan(2, [1])).rejects.toThrow('No file with id 1.')
  })
})
