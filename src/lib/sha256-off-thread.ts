import { createHash } from 'node:crypto'
import { availableParallelism } from 'node:os'
import { Worker } from 'node:worker_threads'

/**
 * SHA-256 of a stream's bytes computed on a worker thread, so that the event loop only copies the
 * bytes (23 ms a 512 MiB against 350 ms for the hash, on the machine of issue 36) while the
 * upload's parsing and writing go on.
 *
 * The bytes are copied into batches of BATCH_BYTES, each transferred to the worker and transferred
 * back once hashed: BATCHES_PER_HASH buffers a hash, reused, at most that many in flight (the
 * caller waits for one to come back: the worker's pace holds the upload's). A stream that ends
 * before its first batch is full is hashed on the spot and never reaches the worker.
 *
 * Copying beats transferring the chunks themselves: a chunk is a view into the socket's buffer,
 * which is still being written to disk, and one message a 64 KiB chunk costs more than the copy.
 */
const BATCH_BYTES = 256 * 1024
const BATCHES_PER_HASH = 4

/** The worker: one node:crypto hash per session, fed in order (a port keeps its messages' order). */
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads')
const { createHash } = require('node:crypto')
const hashes = new Map()
parentPort.on('message', (message) => {
  const { id } = message
  if (message.type === 'update') {
    let hash = hashes.get(id)
    if (hash === undefined) hashes.set(id, (hash = createHash('sha256')))
    hash.update(new Uint8Array(message.buffer, 0, message.length))
    parentPort.postMessage({ type: 'ack', id, buffer: message.buffer }, [message.buffer])
  } else if (message.type === 'digest') {
    const hash = hashes.get(id) ?? createHash('sha256')
    hashes.delete(id)
    parentPort.postMessage({ type: 'digest', id, digest: hash.digest('hex') })
  } else if (message.type === 'abort') {
    hashes.delete(id)
  }
})
`

type WorkerReply = { type: 'ack'; id: number; buffer: ArrayBuffer } | { type: 'digest'; id: number; digest: string }

interface Session {
  onAck(buffer: ArrayBuffer): void
  onDigest(digest: string): void
  onFailure(error: Error): void
}

interface PooledWorker {
  worker: Worker
  sessions: Map<number, Session>
}

/**
 * The process's hashing workers: one a spare core, at most four, started when first needed and
 * kept (no thread per upload). A worker that fails fails the hashes it held and is replaced by the
 * next hash that needs one.
 */
class Sha256WorkerPool {
  private readonly workers: PooledWorker[] = []
  private nextId = 1

  constructor(private readonly size: number) {}

  /** Opens a session on the least busy worker. */
  open(session: Session): { id: number; post(message: object, transfer?: ArrayBuffer[]): void; close(): void } {
    const pooled = this.leastBusy()
    const id = this.nextId++
    pooled.sessions.set(id, session)
    return {
      id,
      post: (message, transfer) => pooled.worker.postMessage({ ...message, id }, transfer),
      close: () => pooled.sessions.delete(id),
    }
  }

  /** Hashes in progress on the workers (for tests: none once every upload is over). */
  get openSessions(): number {
    return this.workers.reduce((sum, pooled) => sum + pooled.sessions.size, 0)
  }

  /** Worker threads running. */
  get threads(): number {
    return this.workers.length
  }

  private leastBusy(): PooledWorker {
    if (this.workers.length < this.size) return this.start()
    return this.workers.reduce((best, pooled) => (pooled.sessions.size < best.sessions.size ? pooled : best))
  }

  private start(): PooledWorker {
    const worker = new Worker(WORKER_SOURCE, { eval: true })
    // An idle pool must not keep the process alive.
    worker.unref()
    const pooled: PooledWorker = { worker, sessions: new Map() }
    this.workers.push(pooled)
    worker.on('message', (reply: WorkerReply) => {
      const session = pooled.sessions.get(reply.id)
      if (reply.type === 'ack') session?.onAck(reply.buffer)
      else session?.onDigest(reply.digest)
    })
    const fail = (error: Error) => {
      const index = this.workers.indexOf(pooled)
      if (index >= 0) this.workers.splice(index, 1)
      for (const session of pooled.sessions.values()) session.onFailure(error)
      pooled.sessions.clear()
    }
    worker.on('error', fail)
    worker.on('exit', (code) => fail(new Error(`The SHA-256 worker exited with code ${code}.`)))
    return pooled
  }

  /** Stops the workers (tests): their hashes fail. */
  async terminate(): Promise<void> {
    await Promise.all(this.workers.map(({ worker }) => worker.terminate()))
  }
}

export const sha256Workers = new Sha256WorkerPool(Math.min(4, Math.max(1, availableParallelism() - 1)))

/** One SHA-256 computed off the event loop: update() with the bytes in order, then digest() once. */
export class OffThreadSha256 {
  private session: ReturnType<Sha256WorkerPool['open']> | undefined
  /** Buffers back from the worker, ready to be filled. */
  private readonly spare: ArrayBuffer[] = []
  private allocated = 0
  private batch: Uint8Array | undefined
  private filled = 0
  private waiting: { resolve: () => void; reject: (error: Error) => void } | undefined
  private digesting: { resolve: (digest: string) => void; reject: (error: Error) => void } | undefined
  private failure: Error | undefined
  private done = false

  /** Takes a copy of `chunk`; returns a promise when the caller must wait for the worker first. */
  update(chunk: Uint8Array): Promise<void> | undefined {
    if (this.failure) return Promise.reject(this.failure)
    let offset = 0
    while (offset < chunk.length) {
      if (this.batch === undefined) {
        const buffer = this.takeBuffer()
        if (buffer === undefined) {
          return new Promise<void>((resolve, reject) => (this.waiting = { resolve, reject })).then(() =>
            this.update(chunk.subarray(offset)),
          )
        }
        this.batch = new Uint8Array(buffer)
        this.filled = 0
      }
      const length = Math.min(chunk.length - offset, BATCH_BYTES - this.filled)
      this.batch.set(chunk.subarray(offset, offset + length), this.filled)
      this.filled += length
      offset += length
      if (this.filled === BATCH_BYTES) this.send()
    }
    return undefined
  }

  /** The hex digest of every byte given; the hash is over afterwards. */
  async digest(): Promise<string> {
    if (this.failure) throw this.failure
    this.done = true
    if (this.session === undefined) {
      // Never filled a batch: hashing here is cheaper than the round trip.
      return createHash('sha256')
        .update(this.batch?.subarray(0, this.filled) ?? new Uint8Array())
        .digest('hex')
    }
    if (this.filled > 0) this.send()
    const session = this.session
    const digest = new Promise<string>((resolve, reject) => (this.digesting = { resolve, reject }))
    session.post({ type: 'digest' })
    try {
      return await digest
    } finally {
      session.close()
    }
  }

  /** Gives the hash up (a failed upload): the worker drops it. */
  abort(): void {
    if (this.done) return
    this.done = true
    this.session?.post({ type: 'abort' })
    this.session?.close()
    this.batch = undefined
    this.spare.length = 0
  }

  private takeBuffer(): ArrayBuffer | undefined {
    const buffer = this.spare.pop()
    if (buffer !== undefined || this.allocated === BATCHES_PER_HASH) return buffer
    this.allocated++
    return new ArrayBuffer(BATCH_BYTES)
  }

  private send(): void {
    this.session ??= sha256Workers.open({
      onAck: (buffer) => {
        this.spare.push(buffer)
        const waiting = this.waiting
        this.waiting = undefined
        waiting?.resolve()
      },
      onDigest: (digest) => this.digesting?.resolve(digest),
      onFailure: (error) => {
        this.failure = error
        this.waiting?.reject(error)
        this.digesting?.reject(error)
      },
    })
    const buffer = this.batch!.buffer as ArrayBuffer
    this.session.post({ type: 'update', buffer, length: this.filled }, [buffer])
    this.batch = undefined
    this.filled = 0
  }
}
