/**
 * Client process: asks the server `GET /healthz` and a small authenticated API call
 * (`GET /api/v1/files?limit=1`) every `intervalMs`, each on a keep-alive connection of its own,
 * until its standard input closes; then prints one JSON line with every sample (ProbeSample[]).
 * A request still out at a tick is waited for (the next starts when it ends), so a blocked server
 * shows as long samples, not as a pile of queued ones. Input (one JSON argument): ProbeJob.
 */
import http from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'

export interface ProbeJob {
  /** The server's origin, e.g. http://127.0.0.1:3000. */
  url: string
  key: string
  intervalMs: number
}

export interface ProbeSample {
  kind: 'healthz' | 'api'
  /** When the request was sent (Date.now(), ms since the epoch: the bench compares it with its own clock). */
  at: number
  ms: number
  status: number
}

const job = JSON.parse(process.argv[2]!) as ProbeJob
const samples: ProbeSample[] = []
let running = true
process.stdin.on('data', () => {})
process.stdin.on('end', () => (running = false))
process.stdin.on('close', () => (running = false))

function get(agent: http.Agent, path: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = http.get(`${job.url}${path}`, { agent, headers }, (response) => {
      response.resume()
      response.on('end', () => resolve(response.statusCode ?? 0))
      response.on('error', reject)
    })
    request.on('error', reject)
  })
}

async function probe(kind: ProbeSample['kind'], path: string, headers: Record<string, string>): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
  while (running) {
    const at = Date.now()
    const started = performance.now()
    let status = 0
    try {
      status = await get(agent, path, headers)
    } catch {
      status = -1
    }
    const ms = performance.now() - started
    samples.push({ kind, at, ms, status })
    await sleep(Math.max(0, job.intervalMs - ms))
  }
  agent.destroy()
}

await Promise.all([
  probe('healthz', '/healthz', {}),
  // Half an interval later, so that the two calls do not always arrive together.
  sleep(job.intervalMs / 2).then(() => probe('api', '/api/v1/files?limit=1', { authorization: `Bearer ${job.key}` })),
])
console.log(JSON.stringify(samples))
