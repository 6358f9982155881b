/**
 * Client process: drives one URL with autocannon and prints one JSON line with requests per
 * second and latency. Input (one JSON argument): LoadJob.
 */
import autocannon from 'autocannon'

export interface LoadJob {
  url: string
  headers: Record<string, string>
  connections: number
  seconds: number
}

export interface LoadResult {
  requestsPerSecond: number
  p50Ms: number
  p99Ms: number
  requests: number
  /** Responses that were not 2xx, and socket errors or timeouts: any of these spoils the run. */
  non2xx: number
  errors: number
}

const job = JSON.parse(process.argv[2]!) as LoadJob
const result = await autocannon({ url: job.url, headers: job.headers, connections: job.connections, duration: job.seconds })
const output: LoadResult = {
  requestsPerSecond: result.requests.average,
  p50Ms: result.latency.p50,
  p99Ms: result.latency.p99,
  requests: result.requests.total,
  non2xx: result.non2xx,
  errors: result.errors + result.timeouts,
}
console.log(JSON.stringify(output))
