/**
 * Client process: downloads one URL, counting (and dropping) the bytes as they arrive, and prints
 * one JSON line with the time, the status, the byte count and the Content-Length the answer declared.
 * Input (one JSON argument): { url, method?, headers?, body? } (a body is sent as it is, e.g. JSON).
 */
import { once } from 'node:events'
import http from 'node:http'

export interface DownloadJob {
  url: string
  method?: string
  headers?: Record<string, string>
  body?: string
}

export interface DownloadResult {
  ms: number
  status: number
  bytes: number
  /** The answer's Content-Length, or null when it declared none. */
  declaredBytes: number | null
}

const { url, method = 'GET', headers = {}, body } = JSON.parse(process.argv[2]!) as DownloadJob
const started = performance.now()
const request = http.request(url, { method, headers })
request.end(body)
const [response] = (await once(request, 'response')) as [http.IncomingMessage]
let bytes = 0
response.on('data', (chunk: Buffer) => (bytes += chunk.length))
await once(response, 'end')
const declared = response.headers['content-length']
const result: DownloadResult = {
  ms: performance.now() - started,
  status: response.statusCode ?? 0,
  bytes,
  declaredBytes: declared === undefined ? null : Number(declared),
}
console.log(JSON.stringify(result))
