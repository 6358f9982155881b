// A TCP proxy in front of the server that can cut connections, to test resumes.
import { createServer, connect, type Server, type Socket } from 'node:net'

export interface CuttingProxy {
  url: string
  /** Bytes relayed from clients to the server. */
  upstreamBytes: number
  /** Bytes relayed from the server to clients. */
  downstreamBytes: number
  cuts: number
  /** Cut the next connection once this many bytes went up (client to server). */
  cutUpstreamAfter(bytes: number): void
  /** Cut the next connection once this many bytes came down (server to client). */
  cutDownstreamAfter(bytes: number): void
  close(): Promise<void>
}

export async function startCuttingProxy(target: string): Promise<CuttingProxy> {
  const { hostname, port } = new URL(target)
  const sockets = new Set<Socket>()
  let upCut: number | undefined
  let downCut: number | undefined
  const proxy: CuttingProxy = {
    url: '',
    upstreamBytes: 0,
    downstreamBytes: 0,
    cuts: 0,
    cutUpstreamAfter: (bytes) => void (upCut = bytes),
    cutDownstreamAfter: (bytes) => void (downCut = bytes),
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      }),
  }
  const server: Server = createServer((client) => {
    const upstream = connect(Number(port), hostname)
    sockets.add(client)
    sockets.add(upstream)
    let up = 0
    let down = 0
    const cut = () => {
      proxy.cuts++
      client.destroy()
      upstream.destroy()
    }
    client.on('data', (chunk: Buffer) => {
      up += chunk.length
      proxy.upstreamBytes += chunk.length
      if (upCut !== undefined && up >= upCut) {
        upCut = undefined
        return cut()
      }
      if (!upstream.write(chunk)) {
        client.pause()
        upstream.once('drain', () => client.resume())
      }
    })
    upstream.on('data', (chunk: Buffer) => {
      down += chunk.length
      proxy.downstreamBytes += chunk.length
      if (downCut !== undefined && down >= downCut) {
        const limit = downCut
        downCut = undefined
        client.write(chunk.subarray(0, Math.max(0, chunk.length - (down - limit))), () => cut())
        return
      }
      if (!client.write(chunk)) {
        upstream.pause()
        client.once('drain', () => upstream.resume())
      }
    })
    const end = () => {
      client.destroy()
      upstream.destroy()
      sockets.delete(client)
      sockets.delete(upstream)
    }
    client.on('close', end)
    upstream.on('close', end)
    client.on('error', end)
    upstream.on('error', end)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address() as { port: number }
  proxy.url = `http://127.0.0.1:${address.port}`
  return proxy
}
