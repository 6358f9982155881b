/**
 * The transfer section of `npm run bench`: uploads and downloads with curl as the client
 * (bench/curl-client.ts), each size in rounds; in a round every side takes `tries` turns in order
 * (A, B, C, D, A, B, C, D) and its best try is its figure for the round. The clients' own ceilings
 * (curl and the Node upload client against bench/sink-server.ts, which only counts bytes) are
 * measured in the same rounds, so that a client-bound figure shows as one.
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import fs from 'node:fs/promises'
import path from 'node:path'
import Database from 'better-sqlite3'
import { NGINX } from '../test/helpers/nginx.js'
import { formatBytes, type BenchPlan } from './bench-plan.js'
import { runClientScript } from './child-process.js'
import { curlDownload, curlUpload, type CurlResult, type UploadBody } from './curl-client.js'
import { CpuMeter } from './measure-cpu.js'
import { RssSampler, type RssPeak } from './measure-rss.js'
import { startNginxFileServer } from './nginx-file-server.js'
import type { RunningServer } from './spawn-server.js'
import {
  addRound,
  CEILINGS,
  type Ceiling,
  DOWNLOAD_SIDES,
  UPLOAD_SIDES,
  type DownloadSide,
  type SizeTransfers,
  type TransferResults,
  type TransferRuns,
  type TransferTry,
  type UploadSide,
} from './transfer-results.js'
import type { UploadJob, UploadResult } from './upload-client.js'

export interface TransferServers {
  service: RunningServer
  bare: RunningServer
  peer: RunningServer
  sink: RunningServer
}

export interface TransferContext {
  plan: BenchPlan
  root: string
  /** The service's data folder (its SQLite file and blob folder). */
  dataDir: string
  dirs: { bare: string; peer: string }
  key: string
  log: (message: string) => void
  /** Registers a process to stop with the others. */
  started: (server: { stop(): Promise<unknown> }) => void
}

const emptyRuns = (): TransferRuns => ({ best: [], tries: [] })
const sidesOf = <K extends string>(keys: readonly K[]) =>
  Object.fromEntries(keys.map((key) => [key, emptyRuns()])) as Record<K, TransferRuns>

/** Writes dirty pages out before a timed upload, so that one run's writeback does not land in the next. */
export function flushDisk(): void {
  execFileSync('sync')
}

/** A file of `bytes` pseudo-random bytes (one 1 MiB random block repeated, as every upload of the bench), read once into the page cache. */
async function sourceFile(dir: string, bytes: number): Promise<string> {
  const file = path.join(dir, `bench-${formatBytes(bytes).replace(' ', '')}.bin`)
  const block = randomBytes(1024 * 1024)
  const handle = await fs.open(file, 'w')
  try {
    for (let left = bytes; left > 0; left -= block.length) await handle.write(left >= block.length ? block : block.subarray(0, left))
  } finally {
    await handle.close()
  }
  await fs.readFile(file).then(() => undefined)
  return file
}

function expect(result: { status: number; body: string }, status: number, what: string): void {
  if (result.status !== status) throw new Error(`${what}: expected ${status}, got ${result.status}: ${result.body.slice(0, 300)}`)
}

/** Times one transfer, with the CPU time `pid` spends meanwhile. */
async function timed<T extends { ms: number }>(pid: number, transfer: () => Promise<T>): Promise<{ result: T; cpuSeconds: number }> {
  const cpu = new CpuMeter(pid)
  const result = await transfer()
  return { result, cpuSeconds: cpu.stop() }
}

function storageKey(dataDir: string, fileId: number): string {
  const db = new Database(path.join(dataDir, 'fileshare.sqlite'), { readonly: true, fileMustExist: true })
  try {
    const row = db.prepare<[number], { storage_key: string }>('SELECT storage_key FROM files WHERE id = ?').get(fileId)
    if (!row) throw new Error(`no file ${fileId} in the service's database`)
    return row.storage_key
  } finally {
    db.close()
  }
}

export async function measureTransfers(servers: TransferServers, context: TransferContext): Promise<TransferResults> {
  const { plan, log } = context
  const { service, bare, peer, sink } = servers
  const sourceDir = path.join(context.root, 'sources')
  await fs.mkdir(sourceDir, { recursive: true })
  const sizes = plan.transferSizes
  const files = new Map<number, string>()
  for (const bytes of sizes) files.set(bytes, await sourceFile(sourceDir, bytes))
  // nginx serves the service's own blobs, the very files Fileshare sends.
  const nginx = await startNginxFileServer(path.join(context.dataDir, 'blobs', 'objects'), path.join(context.root, 'nginx'))
  context.started(nginx)
  const results: SizeTransfers[] = sizes.map((bytes) => ({
    bytes,
    upload: sidesOf(UPLOAD_SIDES),
    download: sidesOf(DOWNLOAD_SIDES),
    ceilings: sidesOf(CEILINGS),
  }))
  const rss: Partial<Record<'service' | 'bare' | 'peer', RssPeak>> = {}
  const largest = Math.max(...sizes)
  const auth = { authorization: `Bearer ${context.key}` }
  let stored = 0

  for (let round = 0; round < plan.transferRounds; round++) {
    for (const size of results) {
      const { bytes } = size
      const file = files.get(bytes)!
      const label = `${formatBytes(bytes)}, round ${round + 1}/${plan.transferRounds}`
      log(`transfer ${label}: uploads (curl), ${plan.transferTries} turns each`)
      const tries = Object.fromEntries(UPLOAD_SIDES.map((side) => [side, [] as TransferTry[]])) as Record<UploadSide, TransferTry[]>
      const serviceFiles: { file_id: number; public_link: string }[] = []
      const names: Record<'bare' | 'peer', string[]> = { bare: [], peer: [] }
      for (let turn = 0; turn < plan.transferTries; turn++) {
        for (const side of UPLOAD_SIDES) {
          flushDisk()
          const target = side === 'service' ? service : side === 'peer' ? peer : bare
          const sampler = round === 0 && turn === 0 && bytes === largest && side !== 'bareFsync' ? new RssSampler(target.pid) : undefined
          let upload: () => Promise<CurlResult>
          const name = `t${stored++}`
          if (side === 'service') upload = () => curlUpload(`${service.url}/api/v1/files/upload`, file, 'multipart', auth)
          else if (side === 'peer') upload = () => curlUpload(`${peer.url}/upload`, file, 'multipart')
          else upload = () => curlUpload(`${bare.url}/upload/${name}${side === 'bareFsync' ? '?fsync=1' : ''}`, file, 'raw')
          const { result, cpuSeconds } = await timed(target.pid, upload)
          if (sampler) rss[side as 'service' | 'bare' | 'peer'] = sampler.stop()
          expect(result, 201, `upload of ${formatBytes(bytes)} to ${side}`)
          tries[side].push({ ms: result.ms, cpuSeconds })
          if (side === 'service') {
            const created = JSON.parse(result.body) as { file_id: number; public_link: string; size: number }
            if (created.size !== bytes) throw new Error(`the service stored ${created.size} bytes of ${bytes}`)
            serviceFiles.push(created)
          } else if (side === 'peer') {
            const created = JSON.parse(result.body) as { filename: string; size: number }
            if (created.size !== bytes) throw new Error(`the peer stored ${created.size} bytes of ${bytes}`)
            names.peer.push(created.filename)
          } else {
            names.bare.push(name)
          }
        }
      }
      for (const side of UPLOAD_SIDES) addRound(size.upload[side], tries[side])
      flushDisk()

      // Each side reads back a file it has just written: every download comes from the page cache.
      log(`transfer ${label}: downloads (curl)`)
      const serviceFile = serviceFiles.at(-1)!
      const key = storageKey(context.dataDir, serviceFile.file_id)
      const downloads: Record<DownloadSide, { url: string; pid: number }> = {
        service: { url: serviceFile.public_link, pid: service.pid },
        nginx: { url: `${nginx.url}/blob/${key.slice(0, 2)}/${key}`, pid: nginx.workerPid },
        bare: { url: `${bare.url}/blob/${names.bare.at(-1)!}`, pid: bare.pid },
        peer: { url: `${peer.url}/blob/${names.peer.at(-1)!}`, pid: peer.pid },
      }
      const downloadTries = Object.fromEntries(DOWNLOAD_SIDES.map((side) => [side, [] as TransferTry[]])) as Record<
        DownloadSide,
        TransferTry[]
      >
      for (let turn = 0; turn < plan.transferTries; turn++) {
        for (const side of DOWNLOAD_SIDES) {
          const { url, pid } = downloads[side]
          const { result, cpuSeconds } = await timed(pid, () => curlDownload(url))
          if (result.status !== 200 || result.downloaded !== bytes) {
            throw new Error(`download of ${formatBytes(bytes)} from ${side}: ${result.status}, ${result.downloaded} bytes`)
          }
          downloadTries[side].push({ ms: result.ms, cpuSeconds })
        }
      }
      for (const side of DOWNLOAD_SIDES) addRound(size.download[side], downloadTries[side])

      // Once a round (the sink costs next to nothing, so the clients vary less than the servers); the rounds give the median.
      log(`transfer ${label}: client ceilings (sink)`)
      for (const side of CEILINGS) {
        const { result, cpuSeconds } = await timed(sink.pid, () => ceiling(side, sink.url, file, bytes))
        addRound(size.ceilings[side], [{ ms: result.ms, cpuSeconds }])
      }

      for (const created of serviceFiles) {
        const response = await fetch(`${service.url}/api/v1/files/${created.file_id}`, { method: 'DELETE', headers: auth })
        await response.arrayBuffer()
        if (!response.ok) throw new Error(`DELETE /files/${created.file_id} answered ${response.status}`)
      }
      for (const name of names.bare) await fs.rm(path.join(context.dirs.bare, name))
      for (const name of names.peer) await fs.rm(path.join(context.dirs.peer, name))
    }
  }
  await nginx.stop()
  return {
    rounds: plan.transferRounds,
    tries: plan.transferTries,
    sizes: results,
    serviceUploadRss: rss.service!,
    bareUploadRss: rss.bare!,
    peerUploadRss: rss.peer!,
    curlVersion: execFileSync('curl', ['--version'], { encoding: 'utf8' }).split('\n')[0]!,
    // nginx -v answers on stderr.
    nginxVersion: spawnSync(NGINX, ['-v'], { encoding: 'utf8' }).stderr.trim(),
  }
}

/** One client against the sink; the sink checks nothing, so the byte count is checked here. */
async function ceiling(side: Ceiling, sinkUrl: string, file: string, bytes: number): Promise<{ ms: number }> {
  if (side === 'curlDownload') {
    const result = await curlDownload(`${sinkUrl}/bytes/${bytes}`)
    if (result.downloaded !== bytes) throw new Error(`curl took ${result.downloaded} bytes of ${bytes} from the sink`)
    return result
  }
  if (side === 'nodeMultipart') {
    const job: UploadJob = { urls: [`${sinkUrl}/sink`], bytes, multipart: true, headers: {} }
    const { results } = await runClientScript<{ results: UploadResult[] }>('upload-client.ts', job)
    expect(results[0]!, 201, 'the Node client against the sink')
    const received = (JSON.parse(results[0]!.body) as { bytes: number }).bytes
    if (received < bytes) throw new Error(`the sink got ${received} bytes of ${bytes} from the Node client`)
    return results[0]!
  }
  const body: UploadBody = side === 'curlMultipart' ? 'multipart' : 'raw'
  const result = await curlUpload(`${sinkUrl}/sink`, file, body)
  expect(result, 201, `curl (${body}) against the sink`)
  const received = (JSON.parse(result.body) as { bytes: number }).bytes
  if (received < bytes) throw new Error(`the sink got ${received} bytes of ${bytes} from curl`)
  return result
}
