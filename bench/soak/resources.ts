import { readProcessStatus } from '../../test/helpers/server-process.js'

/** The server process's resource use over the run: resident memory and open file descriptors. */

export interface Sample {
  rssBytes: number
  /** The kernel's high-water mark of the resident set since the process started (VmHWM). */
  hwmBytes: number
  fds: number
}

async function sample(pid: number): Promise<Sample> {
  const { rssBytes, hwmBytes, fds } = readProcessStatus(pid)
  return { rssBytes, hwmBytes, fds }
}

export class ResourceWatch {
  readonly samples: Array<Sample & { at: number }> = []
  private timer: NodeJS.Timeout | undefined

  constructor(private readonly pid: number) {}

  async take(): Promise<Sample> {
    const taken = await sample(this.pid)
    this.samples.push({ ...taken, at: Date.now() })
    return taken
  }

  start(everyMs: number) {
    this.timer = setInterval(() => void this.take().catch(() => undefined), everyMs)
  }

  stop() {
    clearInterval(this.timer)
  }

  /**
   * The peaks over the samples. RSS is the exact peak: the kernel's high-water mark (VmHWM, which
   * includes the moments between two samples), or the largest sample if that is higher.
   */
  peak(): Sample {
    const hwmBytes = Math.max(...this.samples.map((s) => s.hwmBytes))
    return {
      rssBytes: Math.max(hwmBytes, ...this.samples.map((s) => s.rssBytes)),
      hwmBytes,
      fds: Math.max(...this.samples.map((s) => s.fds)),
    }
  }
}
