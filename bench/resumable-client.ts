/**
 * Client process: one resumable upload (tus 1.0.0) of `bytes` pseudo-random bytes to a Fileshare
 * server, as a tus client sends it: a POST that creates the upload, then PATCHes of `chunkBytes`
 * in order, each body produced as it is sent (bench/streamed-body.ts), never held in memory.
 * Prints one JSON line (ResumableUploadResult). Input (one JSON argument): ResumableUploadJob.
 */
import { once } from 'node:events'
import http from 'node:http'
import { StreamedBody } from './streamed-body.js'

export interface ResumableUploadJob {
  /** The server's origin, e.g. http://127.0.0.1:3000. */
  url: string
  key: string
  bytes: number
  chunkBytes: number
}

export interface ResumableUploadResult {
  /** From the POST to the answer of the last PATCH. */
  ms: number
  patches: number
  /** The slowest PATCH, in ms. */
  slowestPatchMs: number
  /** Fileshare-File-Id of the completing PATCH. */
  fileId: number
}

const TUS = { 'tus-resumable': '1.0.0' }

interface Answer {
  status: number
  headers: http.IncomingHttpHeaders
  body: string
}

async function send(url: string, method: string, headers: Record<string, string>, body?: StreamedBody): Promise<Answer> {
  const request = http.request(url, { method, headers })
  const responded = once(request, 'response') as Promise<[http.IncomingMessage]>
  const [[response]] = await Promise.all([responded, body ? body.writeTo(request) : Promise.resolve(request.end())])
  let text = ''
  for await (const chunk of response) text += String(chunk)
  return { status: response.statusCode ?? 0, headers: response.headers, body: text }
}

function expect(answer: Answer, status: number, what: string): void {
  if (answer.status !== status) throw new Error(`${what}: expected ${status}, got ${answer.status}: ${answer.body.slice(0, 300)}`)
}

const job = JSON.parse(process.argv[2]!) as ResumableUploadJob
const auth = { authorization: `Bearer ${job.key}` }
const started = performance.now()
const created = await send(`${job.url}/api/v1/uploads`, 'POST', {
  ...auth,
  ...TUS,
  'upload-length': String(job.bytes),
  'upload-metadata': `filename ${Buffer.from('bench-resumable.bin').toString('base64')}`,
})
expect(created, 201, 'POST /api/v1/uploads')
const location = new URL(String(created.headers.location), job.url).href

let offset = 0
let patches = 0
let slowestPatchMs = 0
let fileId = 0
while (offset < job.bytes) {
  const size = Math.min(job.chunkBytes, job.bytes - offset)
  const patchStarted = performance.now()
  const answer = await send(
    location,
    'PATCH',
    {
      ...auth,
      ...TUS,
      'upload-offset': String(offset),
      'content-type': 'application/offset+octet-stream',
      'content-length': String(size),
    },
    new StreamedBody(size, false),
  )
  expect(answer, 204, `PATCH at ${offset}`)
  slowestPatchMs = Math.max(slowestPatchMs, performance.now() - patchStarted)
  patches++
  offset = Number(answer.headers['upload-offset'])
  if (offset === job.bytes) fileId = Number(answer.headers['fileshare-file-id'])
}
if (!(fileId > 0)) throw new Error('the completing PATCH carried no Fileshare-File-Id')
const result: ResumableUploadResult = { ms: performance.now() - started, patches, slowestPatchMs, fileId }
console.log(JSON.stringify(result))
