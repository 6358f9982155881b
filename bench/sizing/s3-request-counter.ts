import http from 'node:http'
import type { AddressInfo } from 'node:net'

/** Requests to S3 by kind (the API operation), and the body bytes each way. */
export interface S3Counts {
  requests: Record<string, number>
  bytesIn: number
  bytesOut: number
}

/** The S3 operation a request is, from its method, query and Range header. */
function operation(request: http.IncomingMessage): string {
  const query = new URL(request.url ?? '/', 'http://s3').searchParams
  switch (request.method) {
    case 'POST':
      if (query.has('uploads')) return 'CreateMultipartUpload'
      if (query.has('uploadId')) return 'CompleteMultipartUpload'
      if (query.has('delete')) return 'DeleteObjects'
      return 'POST'
    case 'PUT':
      return query.has('partNumber') ? 'UploadPart' : 'PutObject'
    case 'GET':
      if (query.has('list-type')) return 'ListObjectsV2'
      if (query.has('uploads')) return 'ListMultipartUploads'
      if (query.has('uploadId')) return 'ListParts'
      return request.headers.range ? 'GetObject (Range)' : 'GetObject'
    case 'DELETE':
      return query.has('uploadId') ? 'AbortMultipartUpload' : 'DeleteObject'
    case 'HEAD':
      return 'HeadObject'
    default:
      return request.method ?? '?'
  }
}

/**
 * A plain HTTP proxy in front of an S3 endpoint (s3rver) that counts what passes: the server under
 * measurement talks to it as its FILESHARE_S3_ENDPOINT. `take()` returns the counts so far and starts
 * again from zero.
 */
export async function startS3RequestCounter(target: string): Promise<{ endpoint: string; take(): S3Counts; close(): Promise<void> }> {
  const upstream = new URL(target)
  let counts: S3Counts = { requests: {}, bytesIn: 0, bytesOut: 0 }
  const agent = new http.Agent({ keepAlive: true })
  const server = http.createServer((request, response) => {
    const kind = operation(request)
    counts.requests[kind] = (counts.requests[kind] ?? 0) + 1
    const forward = http.request(
      { host: upstream.hostname, port: upstream.port, method: request.method, path: request.url, headers: request.headers, agent },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.on('data', (chunk: Buffer) => (counts.bytesOut += chunk.length))
        answer.pipe(response)
      },
    )
    forward.on('error', () => response.destroy())
    request.on('data', (chunk: Buffer) => (counts.bytesIn += chunk.length))
    request.pipe(forward)
  })
  server.keepAliveTimeout = 60_000
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    take() {
      const taken = counts
      counts = { requests: {}, bytesIn: 0, bytesOut: 0 }
      return taken
    },
    async close() {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      agent.destroy()
    },
  }
}
