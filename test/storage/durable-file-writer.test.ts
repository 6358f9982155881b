import { randomBytes } from 'node:crypto'
import fs from 'node:fs/promises'
import path from 'node:path'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { DurableFileWriter } from '../../src/storage/durable-file-writer.js'
import { makeTempDir } from '../helpers/test-app.js'

/** The prototype of node:fs/promises' FileHandle, whose sync calls the tests watch. */
async function fileHandlePrototype(dir: string): Promise<{ datasync(): Promise<void>; sync(): Promise<void> }> {
  const handle = await fs.open(path.join(dir, 'probe'), 'w')
  await handle.close()
  return Object.getPrototypeOf(handle) as { datasync(): Promise<void>; sync(): Promise<void> }
}

function chunks(bytes: Buffer, size: number): Readable {
  return Readable.from(
    (function* () {
      for (let offset = 0; offset < bytes.length; offset += size) yield bytes.subarray(offset, offset + size)
    })(),
  )
}

describe('DurableFileWriter', () => {
  let dir: string
  beforeEach(async () => {
    dir = await makeTempDir('fileshare-durable-writer-')
  })
  afterEach(async () => {
    vi.restoreAllMocks()
    await fs.rm(dir, { recursive: true, force: true })
  })

  it('writes the exact bytes, syncing in the background while they stream and once at the end', async () => {
    const prototype = await fileHandlePrototype(dir)
    const datasync = vi.spyOn(prototype, 'datasync')
    const sync = vi.spyOn(prototype, 'sync')
    const bytes = randomBytes(3 * 1024 * 1024 + 5)
    const file = path.join(dir, 'blob')
    const writer = new DurableFileWriter(file, { syncEveryBytes: 256 * 1024 })
    await pipeline(chunks(bytes, 65_536), writer)
    expect((await fs.readFile(file)).equals(bytes)).toBe(true)
    expect(writer.bytesWritten).toBe(bytes.length)
    expect(datasync.mock.calls.length).toBeGreaterThan(0)
    expect(sync).toHaveBeenCalledTimes(1)
  })

  it('writes an empty file', async () => {
    const file = path.join(dir, 'empty')
    await pipeline(Readable.from([]), new DurableFileWriter(file))
    expect((await fs.stat(file)).size).toBe(0)
  })

  it('never replaces a file that exists', async () => {
    const file = path.join(dir, 'taken')
    await fs.writeFile(file, 'first')
    await expect(pipeline(chunks(randomBytes(1000), 100), new DurableFileWriter(file))).rejects.toMatchObject({ code: 'EEXIST' })
    expect(await fs.readFile(file, 'utf8')).toBe('first')
  })

  it('fails when a background sync failed, even if the final one succeeds', async () => {
    const prototype = await fileHandlePrototype(dir)
    const lost = Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' })
    vi.spyOn(prototype, 'datasync').mockRejectedValueOnce(lost)
    const writer = new DurableFileWriter(path.join(dir, 'blob'), { syncEveryBytes: 64 * 1024 })
    await expect(pipeline(chunks(randomBytes(1024 * 1024), 16_384), writer)).rejects.toBe(lost)
    expect(writer.closed).toBe(true)
  })

  it('closes its file when destroyed while a background sync runs', async () => {
    const prototype = await fileHandlePrototype(dir)
    let release: () => void = () => {}
    const original = prototype.datasync
    vi.spyOn(prototype, 'datasync').mockImplementation(async function (this: unknown) {
      await new Promise<void>((resolve) => (release = resolve))
      return original.call(this)
    })
    const writer = new DurableFileWriter(path.join(dir, 'blob'), { syncEveryBytes: 1 })
    writer.write(randomBytes(1000))
    await vi.waitFor(() => expect(prototype.datasync).toHaveBeenCalled())
    writer.destroy(new Error('client gone'))
    writer.on('error', () => {})
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(writer.closed).toBe(false)
    release()
    await vi.waitFor(() => expect(writer.closed).toBe(true))
  })
})
