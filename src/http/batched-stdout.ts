import pino from 'pino'

/** A batch goes out once it holds this many characters (about as many bytes: log lines are mostly ASCII)... */
const BATCH_CHARS = 8 * 1024
/** ...or this long after its first line. */
const BATCH_MS = 20

/**
 * Collects log lines and hands them to pino's destination (sonic-boom, writing asynchronously) a
 * batch at a time, so that under load one write carries dozens of access-log lines instead of one
 * each (a system call per line was a visible part of a metadata request's CPU). The batching is
 * done here rather than with sonic-boom's own minLength: sonic-boom measured the UTF-8 length of
 * everything it held on every line it was given (Buffer.byteLength of a growing string, flattened
 * each time), about 4% of a GET /files/:id's CPU; here a line costs an array push.
 */
class LineBatches implements pino.DestinationStream {
  private lines: string[] = []
  private chars = 0
  private timer: NodeJS.Timeout | undefined

  constructor(private readonly out: pino.DestinationStream & { flushSync(): void; flush(cb?: (error?: Error) => void): void }) {}

  write(line: string): void {
    this.lines.push(line)
    this.chars += line.length
    if (this.chars >= BATCH_CHARS) this.handOver()
    else this.timer ??= setTimeout(this.handOver, BATCH_MS).unref()
  }

  /** Gives the batch to the destination, which writes it as soon as its previous write is done. */
  private readonly handOver = (): void => {
    const batch = this.take()
    if (batch !== undefined) this.out.write(batch)
  }

  private take(): string | undefined {
    clearTimeout(this.timer)
    this.timer = undefined
    if (this.lines.length === 0) return undefined
    const batch = this.lines.join('')
    this.lines = []
    this.chars = 0
    return batch
  }

  /** pino's logger.flush(): what waits here and in the destination goes out. */
  flush(cb?: (error?: Error) => void): void {
    this.handOver()
    this.out.flush(cb)
  }

  /**
   * At exit, with no event loop left: this batch joins the destination's lines behind those it
   * holds, and the destination writes them all synchronously, in order, retrying partial writes
   * and a full pipe (an asynchronous write started now would never complete).
   */
  flushSync(): void {
    const batch = this.take()
    try {
      if (batch !== undefined) this.out.write(batch)
      this.out.flushSync()
    } catch {
      // The destination destroyed (EPIPE: nobody reads the log any more), or stdout refusing: nothing more can go out.
    }
  }
}

let destination: LineBatches | undefined

/**
 * stdout for the logger: lines in batches of 8 KiB or 20 ms (LineBatches) through pino's own
 * destination (sonic-boom), which writes without blocking the event loop. What still waits is
 * written when the process exits normally; a kill -9, an abort or a second signal during shutdown can
 * lose the last 20 ms of lines. One per
 * process: every app built in it shares it.
 */
export function batchedStdout(): pino.DestinationStream {
  if (destination === undefined) {
    const batches = new LineBatches(pino.destination({ dest: 1, sync: false }))
    process.on('exit', () => batches.flushSync())
    destination = batches
  }
  return destination
}
