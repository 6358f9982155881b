/**
 * Client process: uploads streamed bodies to the given URLs, all at once, and prints one JSON line
 * with each upload's time, status and response body. Input (one JSON argument): UploadJob.
 */
import { once } from 'node:events'
import http from 'node:http'
import { StreamedBody } from './streamed-body.js'

export interface UploadJob {
  urls: string[]
  bytes: number
  /** multipart/form-data (the service) or the raw bytes (the bare pipe). */
  multipart: boolean
  headers: Record<string, string>
}

export interface UploadResult {
  ms: number
  status: number
  body: string
  /** When the response had ended, as Date.now() (ms since the epoch), for phases timed on another process's clock. */
  endedAt?: number
}

async function upload(url: string, job: UploadJob): Promise<UploadResult> {
  const body = new StreamedBody(job.bytes, job.multipart)
  const started = performance.now()
  const request = http.request(url, {
    method: 'POST',
    headers: { ...job.headers, 'content-type': body.contentType, 'content-length': String(body.contentLength) },
  })
  const responded = once(request, 'response') as Promise<[http.IncomingMessage]>
  const [[response]] = await Promise.all([responded, body.writeTo(request)])
  let text = ''
  for await (const chunk of response) text += String(chunk)
  return { ms: performance.now() - started, status: response.statusCode ?? 0, body: text, endedAt: Date.now() }
}

const job = JSON.parse(process.argv[2]!) as UploadJob
const started = performance.now()
const results = await Promise.all(job.urls.map((url) => upload(url, job)))
console.log(JSON.stringify({ totalMs: performance.now() - started, results }))
