/**
 * A server that does nothing with what it gets, to measure the bench's clients: what a client can
 * send or take when the server costs nothing. Run as its own process by bench/run.ts.
 *
 *   POST|PUT /sink      reads the request body and drops it, counting the bytes; answers 201
 *                       with {"bytes": n}
 *   GET /bytes/<n>      answers n bytes from one reused 1 MiB buffer (no file, no disk)
 *   GET /json           answers {"success":true} (the readiness probe)
 */
import { once } from 'node:events'
import http from 'node:http'

const port = Number(process.env.SINK_PORT)
const CHUNK = Buffer.alloc(1024 * 1024, 0x5a)
const BYTES = /^\/bytes\/([0-9]+)$/

async function send(response: http.ServerResponse, bytes: number): Promise<void> {
  response.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': bytes })
  for (let left = bytes; left > 0; left -= CHUNK.length) {
    if (!response.write(left >= CHUNK.length ? CHUNK : CHUNK.subarray(0, left))) await once(response, 'drain')
  }
  response.end()
}

http
  .createServer((request, response) => {
    const url = request.url ?? '/'
    if ((request.method === 'POST' || request.method === 'PUT') && url === '/sink') {
      let bytes = 0
      request.on('data', (chunk: Buffer) => (bytes += chunk.length))
      request.on('end', () => {
        response.writeHead(201, { 'content-type': 'application/json' })
        response.end(JSON.stringify({ bytes }))
      })
      return
    }
    const wanted = request.method === 'GET' ? BYTES.exec(url) : null
    if (wanted) {
      send(response, Number(wanted[1])).catch(() => response.destroy())
      return
    }
    if (request.method === 'GET' && url === '/json') {
      response.writeHead(200, { 'content-type': 'application/json' })
      response.end('{"success":true}')
      return
    }
    response.writeHead(404).end()
  })
  .listen(port, '127.0.0.1')
