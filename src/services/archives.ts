import { PassThrough, type Readable } from 'node:stream'
import { ZipFile } from 'yazl'
import { NotFoundError } from '../errors.js'
import type { FileRow } from '../db/schema.js'
import { uniqueEntryNames } from '../lib/archive-entry-names.js'
import { useNativeCrc32InYazl } from '../lib/native-crc32.js'
import type { BlobStore } from '../storage/blob-store.js'
import type { ScanPolicy } from './scan-policy.js'

// Entries' CRC-32 by zlib, not by yazl's JavaScript one (src/lib/native-crc32.ts): about 5x the archive's throughput.
useNativeCrc32InYazl()

/** The most files one archive may hold: their lookups run before the first byte, so the wait before it stays short. */
export const MAX_ARCHIVE_FILES = 1000

/** How many lookups run at once while an archive is planned (PostgreSQL round trips overlap; SQLite does not mind). */
const LOOKUP_CONCURRENCY = 8

/** A ZIP64 end of central directory record (56 bytes) and its locator (20). */
const ZIP64_END_BYTES = 76

/**
 * What to take off the length yazl 3.3.1 tells. It counts a ZIP64 end record in once the central
 * directory reaches 0xffff bytes (it means 0xffffffff, as where it writes one): past about 900
 * entries its length is 76 bytes more than the archive. Writing the record anyway would agree, but
 * the Mac Archive Utility does not read ZIP64 (yazl's README): so the length is mended instead, and
 * the record is forced only where no exact answer is cheap (within a few KiB of 4 GiB of file data,
 * where ZIP64 is near anyway). Sizes as yazl lays them out: a local header of 30 bytes plus the name,
 * a data descriptor of 16 (24 with ZIP64), a central record of 46 plus the name and a 9-byte
 * timestamp field (28 more with ZIP64).
 */
function yazlLengthFix(entries: readonly ArchiveEntry[], forced: boolean): { over: number; forceZip64End: boolean } {
  if (forced) return { over: 0, forceZip64End: true }
  const names = entries.reduce((sum, entry) => sum + Buffer.byteLength(entry.name, 'utf8'), 0)
  const data = entries.reduce((sum, entry) => sum + entry.size, 0)
  const directoryOffsetAtMost = entries.length * (30 + 24) + names + data
  const directoryOffsetAtLeast = entries.length * (30 + 16) + names + data
  if (directoryOffsetAtMost < 0xffffffff) {
    // No entry needs ZIP64 here, so the central directory's size is exact; yazl writes no ZIP64 end.
    const directory = entries.length * (46 + 9) + names
    return { over: directory >= 0xffff ? ZIP64_END_BYTES : 0, forceZip64End: false }
  }
  // Past 4 GiB both count and write the record; right at the edge, forcing it makes them agree.
  return { over: 0, forceZip64End: directoryOffsetAtLeast < 0xffffffff }
}

export interface ArchiveEntry {
  fileId: number
  /** The name inside the archive: made safe, unique within it (archive-entry-names.ts). */
  name: string
  size: number
  /** The upload time (epoch ms), the entry's modification time. */
  modifiedAt: number
  storageKey: string
}

export interface OpenArchive {
  /** The ZIP's bytes, produced as they are read: one stored file open at a time. */
  stream: Readable
  /** The archive's exact length in bytes, known before its first byte (-1 if it could not be told). */
  size: number
}

export interface ArchiveOptions {
  /**
   * Writes every entry and the end record in the ZIP64 format, as a file of 4 GiB or more gets
   * anyway. Tests use it to check ZIP64 archives without writing 4 GiB.
   */
  forceZip64?: boolean
}

/**
 * Several of an account's files as one ZIP, streamed: nothing is written to disk or held whole in
 * memory. Every file is looked up before the first byte, so that a missing one refuses the whole
 * call with a 404 rather than ending in a short archive; then the stored bytes are copied in
 * (STORE, no compression: docs/api.md says why) one file at a time, with the sizes known up front,
 * which gives the archive's exact length before its first byte.
 */
export class ArchiveService {
  constructor(
    private readonly files: { get(accountId: number, fileId: number): Promise<FileRow> },
    private readonly store: BlobStore,
    private readonly scan: Pick<ScanPolicy, 'checkServable'>,
    private readonly options: ArchiveOptions = {},
  ) {}

  /**
   * The entries for `fileIds` (unique, in the order given) of the account. A file that does not
   * exist, has expired or is another account's is 404 naming the first such id; where virus scanning
   * is required, a file not scanned clean refuses the call as its own download would.
   */
  async plan(accountId: number, fileIds: readonly number[]): Promise<ArchiveEntry[]> {
    const rows: FileRow[] = new Array<FileRow>(fileIds.length)
    let next = 0
    const missing: number[] = []
    const lookUp = async () => {
      while (next < fileIds.length) {
        const index = next++
        const id = fileIds[index]!
        try {
          rows[index] = await this.files.get(accountId, id)
        } catch (error) {
          if (!(error instanceof NotFoundError)) throw error
          missing.push(index)
        }
      }
    }
    await Promise.all(Array.from({ length: Math.min(LOOKUP_CONCURRENCY, fileIds.length) }, lookUp))
    if (missing.length > 0) {
      const first = fileIds[Math.min(...missing)]!
      throw new NotFoundError(`No file with id ${first}${missing.length > 1 ? ` (and ${missing.length - 1} more)` : ''}.`)
    }
    for (const row of rows) this.scan.checkServable(row)
    const names = uniqueEntryNames(rows.map((row) => row.filename))
    return rows.map((row, index) => ({
      fileId: row.id,
      name: names[index]!,
      size: row.size,
      modifiedAt: row.created_at,
      storageKey: row.storage_key,
    }))
  }

  /**
   * Starts the archive of `entries`. The first stored file is opened before this resolves: a file
   * the store cannot give (a blob missing, the store down) rejects here with the store's error,
   * before the HTTP layer has sent a status, so the commonest failure is an error answer rather
   * than a 200 cut after its headers. Each later file is opened only when its turn comes, and read
   * as fast as the reader takes the archive. When the reader stops (destroys the stream: a client
   * gone), the open file is closed and no other is opened. When a later stored file fails to open,
   * or any breaks off, the stream is destroyed with that error: the archive never ends cleanly
   * short of its bytes, and the HTTP layer cuts the connection.
   */
  async open(entries: readonly ArchiveEntry[]): Promise<OpenArchive> {
    const first = entries.length > 0 ? await this.store.get(entries[0]!.storageKey) : undefined
    const zip = new ZipFile()
    // yazl's own output stream does not end on an error; this one is destroyed with it.
    const output = new PassThrough()
    let current: Readable | undefined
    let stopped = false
    const stop = (error?: Error) => {
      if (stopped) return
      stopped = true
      current?.destroy()
      output.destroy(error)
    }
    output.on('close', () => stop())
    zip.on('error', (error: Error) => stop(error))

    /** Watches a stored file's stream from when it is opened, which for the first file is before yazl asks for it. */
    const watch = (body: Readable, entry: ArchiveEntry) => {
      current = body
      // yazl pipes the stream without listening for its errors: a store failing mid-file is ours
      // to see, and so is a stream that closes without its end (a socket cut without an error).
      body.once('error', (error: Error) => stop(error))
      body.once('close', () => {
        if (!body.readableEnded) stop(new Error(`The stored bytes of file ${entry.fileId} ended early.`))
      })
    }
    /** Hands a watched stream to yazl, counting its bytes (a `data` listener: only now may it flow). */
    const hand = (body: Readable, entry: ArchiveEntry, callback: (error: unknown, stream: Readable) => void) => {
      // More bytes than the file's size would run past the declared length with a valid-looking
      // prefix; counted here, before yazl's pipe sees the chunk, the archive stops first.
      let read = 0
      body.on('data', (chunk: Buffer) => {
        read += chunk.length
        if (read > entry.size) stop(new Error(`The stored bytes of file ${entry.fileId} run past its size.`))
      })
      callback(null, body)
    }
    if (first) watch(first, entries[0]!)

    for (const [index, entry] of entries.entries()) {
      const options = {
        size: entry.size,
        mtime: new Date(entry.modifiedAt),
        compress: false,
        ...(this.options.forceZip64 && { forceZip64Format: true }),
      }
      zip.addReadStreamLazy(entry.name, options, (callback) => {
        if (stopped) return callback(new Error('The archive was abandoned.'), undefined as never)
        if (index === 0 && first) return hand(first, entry, callback)
        this.store.get(entry.storageKey).then(
          (body) => {
            if (stopped) {
              body.destroy()
              return callback(new Error('The archive was abandoned.'), undefined as never)
            }
            watch(body, entry)
            hand(body, entry, callback)
          },
          (error: unknown) => callback(error, undefined as never),
        )
      })
    }
    // With every size known and nothing compressed, yazl tells the length within end(); -1 if it cannot.
    // (@types/yazl 3.3.1 declares the callback without its argument.)
    let size = -1
    const tellSize = (calculated: number) => {
      size = calculated
    }
    const fix = yazlLengthFix(entries, this.options.forceZip64 === true)
    zip.end({ forceZip64Format: fix.forceZip64End, comment: '' }, tellSize as () => void)
    if (size >= 0) size -= fix.over
    ;(zip.outputStream as Readable).pipe(output)
    return { stream: output, size }
  }
}
