import { readProcessStatus } from '../../test/helpers/server-process.js'

/** The server process's resource use over the run: resident memory and open file descriptors. */

export interface Sample {
  rssBytes: number
  fds: number
}

async function sample(pid: number): Promise<Sample> {
  const { rssBytes, fds } = readProcessStatus(pid)
  return { rssBytes, fds }
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

  peak(): Sample {
    return {
      rssBytes: Math.max(...this.samples.map((s) => s.rssBytes)),
      fds: Math.max(...this.samples.map((s) => s.fds)),
    }
  }
}
