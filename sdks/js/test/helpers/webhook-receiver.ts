import { createServer, type IncomingHttpHeaders } from 'node:http'

/** A message a test receiver got. */
export interface Received {
  path: string
  headers: IncomingHttpHeaders
  body: Buffer
}

/** A webhook receiver on 127.0.0.1 that keeps what it gets and answers 204. */
export async function startWebhookReceiver(): Promise<{ url: string; received: Received[]; close: () => Promise<void> }> {
  const received: Received[] = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      received.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) })
      res.writeHead(204).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    received,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }
}
