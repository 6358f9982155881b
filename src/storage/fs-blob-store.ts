import { randomBytes } from 'node:crypto'
import { createWriteStream } from 'node:fs'
import fs from 'node:fs/promises'
import path from 'node:path'
import type { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { BlobNotFoundError, InsufficientStorageError } from '../errors.js'
import type { BlobEntry, BlobStore, ByteRange, StoredBlob, UnfinishedWrite } from './blob-store.js'
import { ByteMeter } from './byte-meter.js'

const KEY_PATTERN = /^[a-f0-9]{32}$/
/** Names of the temporary files put() writes in tmp/. */
const TMP_PATTERN = /^[a-f0-9]{32}\.part$/

/**
 * Blobs in a local folder: written to tmp/, fsynced, then renamed into objects/ (atomic on one
 * file system), so a blob is either whole or absent.
 */
export class FsBlobStore implements BlobStore {
  private readonly tmpDir: string
  private readonly objectsDir: string

  constructor(root: string) {
    this.tmpDir = path.join(root, 'tmp')
    this.objectsDir = path.join(root, 'objects')
  }

  async init(): Promise<this> {
    await fs.mkdir(this.tmpDir, { recursive: true })
    await fs.mkdir(this.objectsDir, { recursive: true })
    return this
  }

  private pathOf(key: string): string {
    if (!KEY_PATTERN.test(key)) throw new BlobNotFoundError(key)
    return path.join(this.objectsDir, key.slice(0, 2), key)
  }

  async put(source: Readable, { maxBytes }: { maxBytes: number }): Promise<StoredBlob> {
    const key = randomBytes(16).toString('hex')
    const tmpPath = path.join(this.tmpDir, `${key}.part`)
    const meter = new ByteMeter(maxBytes)
    // flush: fsync before close, so the bytes are durable before the rename makes them visible.
    const sink = createWriteStream(tmpPath, { flags: 'wx', flush: true })
    try {
      await pipeline(source, meter, sink)
      const finalPath = this.pathOf(key)
      await fs.mkdir(path.dirname(finalPath), { recursive: true })
      await fs.rename(tmpPath, finalPath)
      await syncDirectory(path.dirname(finalPath))
    } catch (error) {
      // The stream opens its file on its own time: a source that fails at once rejects the
      // pipeline before that, and the late open would create the file after the rm.
      if (!sink.closed) await new Promise<void>((resolve) => sink.once('close', () => resolve()))
      await fs.rm(tmpPath, { force: true })
      source.resume() // let the request body drain so the connection can carry the error reply
      const code = (error as NodeJS.ErrnoException).code
      throw code === 'ENOSPC' || code === 'EDQUOT' ? new InsufficientStorageError({ cause: error }) : error
    }
    return { key, size: meter.size, sha256: meter.digest() }
  }

  async get(key: string, range?: ByteRange): Promise<Readable> {
    let handle: fs.FileHandle
    try {
      handle = await fs.open(this.pathOf(key), 'r')
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new BlobNotFoundError(key)
      throw error
    }
    return handle.createReadStream(range ? { start: range.start, end: range.end } : {})
  }

  async delete(key: string): Promise<void> {
    if (!KEY_PATTERN.test(key)) return
    await fs.rm(this.pathOf(key), { force: true })
  }

  async *list(): AsyncIterable<BlobEntry> {
    for (const shard of await fs.readdir(this.objectsDir)) {
      for (const name of await fs.readdir(path.join(this.objectsDir, shard)).catch(() => [])) {
        if (!KEY_PATTERN.test(name)) continue
        const stat = await fs.stat(path.join(this.objectsDir, shard, name)).catch(() => undefined)
        if (stat?.isFile()) yield { key: name, modifiedAt: stat.mtime, size: stat.size }
      }
    }
  }

  /** Temporary files in tmp/: a put in progress writes to one (so its mtime stays recent); a crash leaves one behind. */
  async *listUnfinishedWrites(): AsyncIterable<UnfinishedWrite> {
    for (const name of await fs.readdir(this.tmpDir)) {
      if (!TMP_PATTERN.test(name)) continue
      const stat = await fs.stat(path.join(this.tmpDir, name)).catch(() => undefined)
      if (stat?.isFile()) yield { id: name, lastWrittenAt: stat.mtime, size: stat.size }
    }
  }

  async removeUnfinishedWrite(id: string): Promise<void> {
    if (!TMP_PATTERN.test(id)) return
    await fs.rm(path.join(this.tmpDir, id), { force: true })
  }

  async check(): Promise<void> {
    await fs.access(this.tmpDir, fs.constants.W_OK)
    await fs.access(this.objectsDir, fs.constants.W_OK)
  }

  async close(): Promise<void> {}
}

/** fsync on the directory makes the rename itself durable. */
async function syncDirectory(dir: string): Promise<void> {
  const handle = await fs.open(dir, 'r')
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}
