/**
 * Client process: downloads one URL, counting (and dropping) the bytes as they arrive, and prints
 * one JSON line with the time, the status and the byte count. Input (one JSON argument): { url }.
 */
import { once } from 'node:events'
import http from 'node:http'

export interface DownloadResult {
  ms: number
  status: number
  bytes: number
}

const { url } = JSON.parse(process.argv[2]!) as { url: string }
const started = performance.now()
const request = http.get(url)
const [response] = (await once(request, 'response')) as [http.IncomingMessage]
let bytes = 0
response.on('data', (chunk: Buffer) => (bytes += chunk.length))
await once(response, 'end')
const result: DownloadResult = { ms: performance.now() - started, status: response.statusCode ?? 0, bytes }
console.log(JSON.stringify(result))
