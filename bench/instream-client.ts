/**
 * Client process: streams `bytes` pseudo-random bytes straight to clamd with INSTREAM (no Fileshare
 * server), as fast as clamd takes them: clamd's own ceiling for the scan section. The bytes are made
 * as bench/streamed-body.ts makes an upload's (one 1 MiB random block, reused), sent in chunks of
 * `chunkBytes` with backpressure. Prints one JSON line (InstreamResult). Input (one JSON argument):
 * InstreamJob.
 */
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import net from 'node:net'

export interface InstreamJob {
  port: number
  bytes: number
  chunkBytes: number
}

export interface InstreamResult {
  /** From the connection to clamd's answer. */
  ms: number
  /** From the connection until the last chunk and the end mark had been handed to the kernel. */
  sentMs: number
  /** clamd's answer without the NUL, e.g. `stream: OK`. */
  answer: string
}

const job = JSON.parse(process.argv[2]!) as InstreamJob
const block = randomBytes(1024 * 1024)
const started = performance.now()
const socket = net.connect({ port: job.port, host: '127.0.0.1' })
let received = Buffer.alloc(0)
const answered = new Promise<string>((resolve, reject) => {
  socket.on('data', (data: Buffer) => {
    received = Buffer.concat([received, data])
    const end = received.indexOf(0)
    if (end >= 0) resolve(received.subarray(0, end).toString('utf8'))
  })
  socket.on('error', reject)
  socket.on('close', () => resolve(received.toString('utf8')))
})
await once(socket, 'connect')
socket.write('zINSTREAM\0')
let offset = 0
for (let left = job.bytes; left > 0 && received.length === 0;) {
  const size = Math.min(job.chunkBytes, left, block.length - offset)
  const header = Buffer.alloc(4)
  header.writeUInt32BE(size)
  socket.write(header)
  const flowing = socket.write(block.subarray(offset, offset + size))
  left -= size
  offset = (offset + size) % block.length
  if (!flowing) await Promise.race([once(socket, 'drain'), answered])
}
await new Promise<void>((resolve) => socket.write(Buffer.alloc(4), () => resolve()))
const sentMs = performance.now() - started
const answer = await answered
const result: InstreamResult = { ms: performance.now() - started, sentMs, answer }
socket.destroy()
console.log(JSON.stringify(result))
