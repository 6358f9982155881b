import fs from 'node:fs'
import { readProcessStatus } from '../test/helpers/server-process.js'

export interface RssPeak {
  /** Resident set size when sampling started. */
  startBytes: number
  /** The kernel's high-water mark (VmHWM) over the sampled phase: the exact peak. */
  peakBytes: number
  /** The largest VmRSS seen by polling (a cross-check of peakBytes, which it can only undershoot). */
  sampledPeakBytes: number
}

function readStatus(pid: number): { rss: number; hwm: number } {
  const { rssBytes, hwmBytes } = readProcessStatus(pid)
  return { rss: rssBytes, hwm: hwmBytes }
}

/**
 * Samples another process's memory from /proc/<pid>/status (Linux). Writing 5 to
 * /proc/<pid>/clear_refs resets its VmHWM, so the peak read at the end belongs to this phase only.
 */
export class RssSampler {
  private readonly startBytes: number
  private sampledPeak: number
  private readonly timer: NodeJS.Timeout

  constructor(
    private readonly pid: number,
    intervalMs = 20,
  ) {
    fs.writeFileSync(`/proc/${pid}/clear_refs`, '5')
    this.startBytes = readStatus(pid).rss
    this.sampledPeak = this.startBytes
    this.timer = setInterval(() => {
      this.sampledPeak = Math.max(this.sampledPeak, readStatus(pid).rss)
    }, intervalMs)
  }

  stop(): RssPeak {
    clearInterval(this.timer)
    const { rss, hwm } = readStatus(this.pid)
    const sampledPeakBytes = Math.max(this.sampledPeak, rss)
    return { startBytes: this.startBytes, peakBytes: Math.max(hwm, sampledPeakBytes), sampledPeakBytes }
  }
}
