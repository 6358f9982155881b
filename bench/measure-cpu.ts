import fs from 'node:fs'

/** Linux reports utime and stime in clock ticks of 1/100 s (USER_HZ) on every common platform. */
const TICKS_PER_SECOND = 100

/** CPU seconds (user + system) another process has used so far, from /proc/<pid>/stat. */
function cpuSeconds(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
  // The command name (field 2) may hold spaces; the fields after its closing parenthesis do not.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  const utime = Number(fields[11])
  const stime = Number(fields[12])
  return (utime + stime) / TICKS_PER_SECOND
}

/**
 * The CPU time a process spends during one phase. Unlike requests per second, it hardly depends
 * on what else runs on the machine, so it compares two runs fairly on a busy host.
 */
export class CpuMeter {
  private readonly start: number

  constructor(private readonly pid: number) {
    this.start = cpuSeconds(pid)
  }

  /** CPU seconds used since the meter was made. */
  stop(): number {
    return cpuSeconds(this.pid) - this.start
  }
}
