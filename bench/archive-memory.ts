/**
 * The ZIP download's memory, measured where it is made: ArchiveService (yazl, STORE) streaming a
 * selection of generated files (no disk, no network: what is measured is the archive's own
 * pipeline) into a reader that takes every byte at once. Prints one JSON line: bytes, the length
 * told before the first byte, throughput, the process's RSS before and at its peak, and whether
 * the archive ended with ZIP64 records (a file of 4 GiB or more needs them).
 *
 *   node --import tsx bench/archive-memory.ts                  # 2 GiB: four files of 512 MiB
 *   node --import tsx bench/archive-memory.ts --files 1 --mib 4200   # one file past 4 GiB: ZIP64
 */
import { Readable } from 'node:stream'
import { parseArgs } from 'node:util'
import type { FileRow } from '../src/db/schema.js'
import { ArchiveService } from '../src/services/archives.js'
import { SCANNING_OFF } from '../src/services/scan-policy.js'
import type { BlobStore } from '../src/storage/blob-store.js'

const { values } = parseArgs({ options: { files: { type: 'string', default: '4' }, mib: { type: 'string', default: '512' } } })
const files = Number(values.files)
const fileBytes = Number(values.mib) * 1024 * 1024
const CHUNK = Buffer.alloc(256 * 1024, 0x5a)

/** `bytes` of generated content, pushed as the reader asks (one shared chunk: nothing is kept). */
function generated(bytes: number): Readable {
  let left = bytes
  return new Readable({
    highWaterMark: CHUNK.length,
    read() {
      if (left <= 0) return void this.push(null)
      const take = Math.min(left, CHUNK.length)
      left -= take
      this.push(take === CHUNK.length ? CHUNK : CHUNK.subarray(0, take))
    },
  })
}

const rows = Array.from({ length: files }, (_, i) => ({
  id: i + 1,
  account_id: 1,
  filename: `file-${i + 1}.bin`,
  size: fileBytes,
  storage_key: `key-${i + 1}`,
  created_at: Date.UTC(2026, 10, 28),
  scan_status: null,
}))
const store = { get: async () => generated(fileBytes) } as unknown as BlobStore
const service = new ArchiveService({ get: async (_account, id) => rows[id - 1] as unknown as FileRow }, store, SCANNING_OFF)

global.gc?.()
const before = process.memoryUsage()
let peakRss = before.rss
let peakHeap = before.heapUsed
/** Sampled in the reading loop: the archive's streams pass data on in microtasks, where a timer could starve. */
function sample() {
  const now = process.memoryUsage()
  peakRss = Math.max(peakRss, now.rss)
  peakHeap = Math.max(peakHeap, now.heapUsed)
}

const started = process.hrtime.bigint()
const archive = await service.open(
  await service.plan(
    1,
    rows.map((row) => row.id),
  ),
)
let bytes = 0
let chunks = 0
let tail = Buffer.alloc(0)
for await (const chunk of archive.stream as AsyncIterable<Buffer>) {
  bytes += chunk.length
  if (++chunks % 32 === 0) sample()
  tail = Buffer.concat([tail, chunk.subarray(-4096)]).subarray(-4096)
}
const seconds = Number(process.hrtime.bigint() - started) / 1e9
sample()

const mib = (n: number) => Math.round((n / 1024 / 1024) * 10) / 10
console.log(
  JSON.stringify({
    files,
    file_mib: mib(fileBytes),
    archive_bytes: bytes,
    told_length: archive.size,
    length_exact: bytes === archive.size,
    zip64: tail.includes(Buffer.from([0x50, 0x4b, 0x06, 0x06])),
    seconds: Math.round(seconds * 10) / 10,
    mib_per_s: Math.round(mib(bytes) / seconds),
    rss_before_mib: mib(before.rss),
    rss_peak_mib: mib(peakRss),
    heap_before_mib: mib(before.heapUsed),
    heap_peak_mib: mib(peakHeap),
  }),
)
