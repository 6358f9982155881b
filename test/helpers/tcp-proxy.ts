import net from 'node:net'

/**
 * A TCP proxy in front of a real backend (PostgreSQL, Redis, S3) that a test can cut and restore,
 * so that the service sees its dependency go away and come back without stopping the shared one.
 */
export interface TcpProxy {
  port: number
  /** Stops listening and drops every open connection: the backend is "down" (ECONNREFUSED). */
  cut(): Promise<void>
  /** Listens again on the same port. */
  restore(): Promise<void>
  /**
   * Holds every byte in both directions, on open connections and new ones, without closing
   * anything: a backend that stalls (a hung server, a network that drops packets) rather than refuses.
   */
  freeze(): void
  /** Lets the held bytes through again. */
  thaw(): void
  close(): Promise<void>
  /** Bytes the clients have sent towards the backend so far, over every connection (to cut one midway). */
  readonly bytesFromClients: number
}

export async function startTcpProxy(targetPort: number, targetHost = '127.0.0.1'): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>()
  let bytesFromClients = 0
  let frozen = false
  const track = (socket: net.Socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => socket.destroy())
  }
  const server = net.createServer((client) => {
    const upstream = net.connect(targetPort, targetHost)
    track(client)
    track(upstream)
    client.on('close', () => upstream.destroy())
    upstream.on('close', () => client.destroy())
    client.on('data', (chunk: Buffer) => (bytesFromClients += chunk.length))
    client.pipe(upstream).pipe(client)
    // After pipe(), which resumes its source.
    if (frozen) for (const socket of [client, upstream]) socket.pause()
  })
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject)
        resolve()
      })
    })
  await listen(0)
  const port = (server.address() as net.AddressInfo).port
  const cut = async () => {
    if (!server.listening) return
    const closed = new Promise<void>((resolve) => server.close(() => resolve()))
    for (const socket of sockets) socket.destroy()
    await closed
  }
  return {
    port,
    cut,
    restore: () => listen(port),
    // A paused socket is read no further: what the other side sends waits in the kernel's buffers.
    freeze: () => {
      frozen = true
      for (const socket of sockets) socket.pause()
    },
    thaw: () => {
      frozen = false
      for (const socket of sockets) socket.resume()
    },
    close: cut,
    get bytesFromClients() {
      return bytesFromClients
    },
  }
}
