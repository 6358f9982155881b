/**
 * The ZIP download's memory through the real server (issue 37: "a 2 GiB selection streamed with flat
 * memory"): `POST /files/archive` of one stored file, then of all of them (four of 512 MiB in a full
 * run), each read by a client process that counts and drops the bytes, with the server's RSS sampled
 * (VmHWM reset before each). Flat means the archive of every file peaks no higher than the archive
 * of one: the server holds a bounded window of bytes, never the selection. A plain download of one
 * of the files (its public link) is measured the same way, for reference.
 */
import { formatBytes, type BenchPlan } from './bench-plan.js'
import { runClientScript } from './child-process.js'
import type { DownloadJob, DownloadResult } from './download-client.js'
import { RssSampler, type RssPeak } from './measure-rss.js'
import type { RunningServer } from './spawn-server.js'
import { flushDisk } from './transfer-bench.js'

/** How much higher the whole archive may peak than the one-file archive and still count as flat. */
export const FLAT_ARCHIVE_SLACK_BYTES = 16 * 1024 * 1024

export interface ArchiveRun extends RssPeak {
  ms: number
  bytes: number
  declaredBytes: number | null
}

export interface ArchiveBench {
  files: number
  fileBytes: number
  /** The archive of the first file alone, of every file, and the plain download of the first file. */
  one: ArchiveRun
  all: ArchiveRun
  plainDownload: ArchiveRun
}

export interface ArchiveBenchDeps {
  server: RunningServer
  key: string
  /** Uploads `count` files of `bytes` each to the server, as the rest of the bench does. */
  upload(bytes: number, count: number): Promise<{ file_id: number; public_link: string }[]>
  deleteFiles(ids: number[]): Promise<void>
  log(message: string): void
}

async function measured(server: RunningServer, job: DownloadJob): Promise<ArchiveRun> {
  flushDisk()
  const sampler = new RssSampler(server.pid)
  const result = await runClientScript<DownloadResult>('download-client.ts', job)
  const peak = sampler.stop()
  if (result.status !== 200) throw new Error(`${job.method ?? 'GET'} ${job.url} answered ${result.status}`)
  if (result.declaredBytes !== null && result.declaredBytes !== result.bytes) {
    throw new Error(`${job.url}: ${result.bytes} bytes came of the ${result.declaredBytes} its Content-Length declared`)
  }
  return { ...peak, ms: result.ms, bytes: result.bytes, declaredBytes: result.declaredBytes }
}

export async function measureArchive(plan: BenchPlan, deps: ArchiveBenchDeps): Promise<ArchiveBench> {
  const { server, key, log } = deps
  log(`archive: uploading ${plan.archiveFiles} files of ${formatBytes(plan.archiveFileBytes)}`)
  const files = await deps.upload(plan.archiveFileBytes, plan.archiveFiles)
  const ids = files.map((file) => file.file_id)
  const archiveOf = (selection: number[]): DownloadJob => ({
    url: `${server.url}/api/v1/files/archive`,
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ ids: selection }),
  })
  try {
    log(`archive: one file (${formatBytes(plan.archiveFileBytes)})`)
    const one = await measured(server, archiveOf(ids.slice(0, 1)))
    log(`archive: all ${ids.length} files (${formatBytes(plan.archiveFileBytes * ids.length)})`)
    const all = await measured(server, archiveOf(ids))
    log('archive: the plain download of one file, for reference')
    const plainDownload = await measured(server, { url: files[0]!.public_link })
    if (all.bytes < plan.archiveFileBytes * ids.length) throw new Error(`the archive of ${ids.length} files has only ${all.bytes} bytes`)
    return { files: ids.length, fileBytes: plan.archiveFileBytes, one, all, plainDownload }
  } finally {
    await deps.deleteFiles(ids)
  }
}
