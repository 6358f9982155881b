/**
 * The bare Node.js baseline the service is measured against: what the same machine does with no
 * framework, no parsing, no hashing, no database. Run as its own process by bench/run.ts.
 *
 *   POST /upload/<name>[?fsync=1]  pipes the raw request body straight to a file (with ?fsync=1
 *                                  the file is fsynced before close, as the service does)
 *   GET  /blob/<name>              serves that file with fs.createReadStream
 *   GET  /json                     answers BASELINE_JSON, the body of a real GET /files/:id
 */
import { createReadStream, createWriteStream } from 'node:fs'
import fs from 'node:fs/promises'
import http from 'node:http'
import path from 'node:path'
import { pipeline } from 'node:stream/promises'

const dir = process.env.BASELINE_DIR!
const port = Number(process.env.BASELINE_PORT)
// Parsed once and serialized per request, as a minimal real route would build its reply.
const detail: unknown = JSON.parse(process.env.BASELINE_JSON ?? '{"success":true}')
const NAME = /^\/(upload|blob)\/([a-z0-9-]+)$/

async function handle(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
  const url = new URL(request.url ?? '/', 'http://baseline')
  if (request.method === 'GET' && url.pathname === '/json') {
    response.writeHead(200, { 'content-type': 'application/json; charset=utf-8' })
    response.end(JSON.stringify(detail))
    return
  }
  const [, action, name] = NAME.exec(url.pathname) ?? []
  const file = name ? path.join(dir, name) : ''
  if (request.method === 'POST' && action === 'upload') {
    await pipeline(request, createWriteStream(file, { flush: url.searchParams.get('fsync') === '1' }))
    response.writeHead(201, { 'content-type': 'application/json' })
    response.end('{"success":true}')
    return
  }
  if (request.method === 'GET' && action === 'blob') {
    const { size } = await fs.stat(file)
    response.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': size })
    await pipeline(createReadStream(file), response)
    return
  }
  response.writeHead(404).end()
}

http
  .createServer((request, response) => {
    handle(request, response).catch((error: Error) => {
      if (!response.headersSent) response.writeHead(500)
      response.end(error.message)
    })
  })
  .listen(port, '127.0.0.1')
