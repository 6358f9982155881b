/**
 * The loop of a background worker that takes its work from the database (the webhook dispatcher,
 * the virus scanner): it takes what is due, at once again while that found work and there is room
 * for more, else after `pollMs` or when woken. Each instance runs its own; the database shares the
 * work out between them.
 */
export class WorkLoop {
  private stopped = true
  private timer: NodeJS.Timeout | undefined
  private wakeUp: (() => void) | undefined
  private loop: Promise<void> | undefined

  constructor(
    /** Takes what is due now and starts it; resolves with how much it took. */
    private readonly take: () => Promise<number>,
    private readonly hasRoom: () => boolean,
    private readonly pollMs: number,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Runs until stop(). */
  start(): void {
    if (!this.stopped) return
    this.stopped = false
    this.loop = (async () => {
      while (!this.stopped) {
        let taken = 0
        try {
          taken = await this.take()
        } catch (error) {
          this.onError(error)
        }
        if (this.stopped) break
        if (taken > 0 && this.hasRoom()) continue
        await new Promise<void>((resolve) => {
          this.wakeUp = resolve
          this.timer = setTimeout(resolve, this.pollMs)
          this.timer.unref()
        })
        this.wakeUp = undefined
      }
    })()
  }

  /** Looks again now (a piece of work ended: there is room). */
  wake(): void {
    this.wakeUp?.()
  }

  /**
   * Work was just stored by this process: look sooner than the next poll. It commits a moment
   * later, so the look comes after a short pause (an early look finds nothing, and the poll catches it).
   */
  nudge(delayMs: number): void {
    if (this.stopped) return
    setTimeout(() => this.wakeUp?.(), delayMs).unref()
  }

  /** Stops taking work; resolves once the loop has ended (the work it started is the worker's to wait for). */
  async stop(): Promise<void> {
    this.stopped = true
    clearTimeout(this.timer)
    this.wakeUp?.()
    await this.loop
  }
}
