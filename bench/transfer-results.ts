/** The figures of the transfer section (bench/transfer-bench.ts measures them, bench/report.ts and charts.ts show them). */
import type { RssPeak } from './measure-rss.js'

/** One timed transfer: the client's time and the serving (or receiving) process's CPU time meanwhile. */
export interface TransferTry {
  ms: number
  cpuSeconds: number
}

/** One side's figures: its best try of each round, in round order, and the time of every try. */
export interface TransferRuns {
  best: TransferTry[]
  tries: number[]
}

export const UPLOAD_SIDES = ['service', 'bareFsync', 'bare', 'peer'] as const
export const DOWNLOAD_SIDES = ['service', 'nginx', 'bare', 'peer'] as const
/**
 * The clients against the sink: curl's multipart (`-F`) and raw (`-T`) uploads, the Node upload
 * client (bench/upload-client.ts, multipart), and curl downloading from the sink's memory.
 */
export const CEILINGS = ['curlMultipart', 'curlRaw', 'nodeMultipart', 'curlDownload'] as const
export type UploadSide = (typeof UPLOAD_SIDES)[number]
export type DownloadSide = (typeof DOWNLOAD_SIDES)[number]
export type Ceiling = (typeof CEILINGS)[number]

export interface SizeTransfers {
  bytes: number
  upload: Record<UploadSide, TransferRuns>
  download: Record<DownloadSide, TransferRuns>
  ceilings: Record<Ceiling, TransferRuns>
}

export interface TransferResults {
  rounds: number
  tries: number
  sizes: SizeTransfers[]
  /** Peak RSS of one upload of the largest size (the first try of the first round), per receiving process. */
  serviceUploadRss: RssPeak
  bareUploadRss: RssPeak
  peerUploadRss: RssPeak
  /** `curl --version`, first line. */
  curlVersion: string
  /** `nginx -v`. */
  nginxVersion: string
}

/** Adds a round's tries to `runs`: every try's time, and the best one (least time) as the round's figure. */
export function addRound(runs: TransferRuns, tries: TransferTry[]): void {
  runs.tries.push(...tries.map((one) => one.ms))
  runs.best.push(tries.reduce((best, one) => (one.ms < best.ms ? one : best)))
}
