export const MiB = 1024 * 1024
const GiB = 1024 * MiB

/** Sizes and durations of one bench run: the figures by default, small ones with BENCH_QUICK=1. */
export interface BenchPlan {
  quick: boolean
  /** The files of the upload and download comparisons (curl as the client). */
  transferSizes: number[]
  /** Rounds of every transfer; the verdicts take the median over the rounds. */
  transferRounds: number
  /** Turns each side takes in a round (A, B, A, B); its best try is its figure for the round. */
  transferTries: number
  /** The large upload whose peak RSS must not exceed the small one's. */
  largeUploadBytes: number
  concurrentUploads: number
  concurrentUploadBytes: number
  /** The resumable (tus) upload whose peak RSS is compared with the bare pipe's, and its PATCH size. */
  resumableUploadBytes: number
  resumableChunkBytes: number
  /** Files of the two accounts whose metadata calls are compared. */
  smallAccountFiles: number
  largeAccountFiles: number
  connections: number
  loadSeconds: number
  /** Before each load run, discarded. */
  warmupSeconds: number
  /** Before the first load run on a server, per metadata call, discarded: until V8 has optimized the hot code. */
  serverWarmupSeconds: number
  /**
   * The order of the metrics-cost runs, without and with the Prometheus listener. Two 10-second
   * runs a side differed by 5 to 12 % from the machine's noise alone, more than the 5 % measured.
   */
  metricsTurns: ReadonlyArray<'off' | 'on'>
  /** The ZIP download (bench/archive-bench.ts): this many stored files of archiveFileBytes each, as one archive. */
  archiveFiles: number
  archiveFileBytes: number
  /** The file of the scan section (BENCH_ONLY=scan): uploaded to the S3 store, scanned by clamd. */
  scanBytes: number
  /** Seconds of latency probing on the idle server before the scan section's upload. */
  scanIdleSeconds: number
}

function integerFromEnv(name: string, fallback: number): number {
  const raw = process.env[name]
  if (raw === undefined || raw === '') return fallback
  if (!/^[0-9]+$/.test(raw)) throw new Error(`${name} must be a non-negative integer, got "${raw}"`)
  return Number(raw)
}

export function benchPlan(): BenchPlan {
  const quick = process.env.BENCH_QUICK === '1'
  return {
    quick,
    transferSizes: quick ? [32 * MiB, 64 * MiB] : [512 * MiB, GiB],
    transferRounds: integerFromEnv('BENCH_REPEATS', quick ? 1 : 3),
    transferTries: 2,
    largeUploadBytes: quick ? 256 * MiB : 5 * GiB,
    concurrentUploads: 16,
    concurrentUploadBytes: quick ? 16 * MiB : 256 * MiB,
    resumableUploadBytes: quick ? 256 * MiB : 2 * GiB,
    resumableChunkBytes: quick ? 16 * MiB : 64 * MiB,
    smallAccountFiles: 1_000,
    largeAccountFiles: integerFromEnv('BENCH_LARGE_ACCOUNT_FILES', quick ? 20_000 : 1_000_000),
    archiveFiles: 4,
    archiveFileBytes: quick ? 32 * MiB : 512 * MiB,
    connections: 32,
    loadSeconds: integerFromEnv('BENCH_SECONDS', quick ? 3 : 10),
    warmupSeconds: quick ? 1 : 2,
    serverWarmupSeconds: quick ? 2 : 5,
    metricsTurns: quick ? ['off', 'on', 'on', 'off'] : ['off', 'on', 'on', 'off', 'off', 'on', 'on', 'off'],
    scanBytes: quick ? 64 * MiB : GiB,
    scanIdleSeconds: quick ? 2 : 10,
  }
}

/** Memory sizes in the reports: mebibytes with one decimal. */
export const mib = (bytes: number) => `${(bytes / MiB).toFixed(1)} MiB`

export function formatBytes(bytes: number): string {
  if (bytes >= GiB && bytes % GiB === 0) return `${bytes / GiB} GiB`
  if (bytes >= MiB) return `${Math.round(bytes / MiB)} MiB`
  return `${bytes} B`
}
