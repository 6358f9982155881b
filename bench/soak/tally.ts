/** What the soak saw: requests per operation with their latencies, statuses, and problems. */

export const OPERATIONS = ['upload', 'resumable_upload', 'download_range', 'download_full', 'list', 'get', 'delete', 'stats'] as const
export type Operation = (typeof OPERATIONS)[number]

interface OperationTally {
  count: number
  latenciesMs: number[]
}

export class Tally {
  readonly operations = new Map<Operation, OperationTally>()
  readonly statusCounts = new Map<number, number>()
  readonly problems: string[] = []
  serverErrors = 0
  failures = 0

  /**
   * `judgedLater`: 5xx answers and failed exchanges are not problems in themselves (the chaos soak
   * judges each by the phase of the run it fell in); they are still counted.
   */
  constructor(private readonly judgedLater = false) {}

  problem(message: string) {
    if (this.problems.length < 50) this.problems.push(message)
    else if (this.problems.length === 50) this.problems.push('… (further problems not listed)')
  }

  noteStatus(operation: Operation, status: number) {
    this.statusCounts.set(status, (this.statusCounts.get(status) ?? 0) + 1)
    if (status >= 500) {
      this.serverErrors++
      if (!this.judgedLater) this.problem(`${operation}: HTTP ${status}`)
    }
  }

  /** An operation that ended with an exception (no answer, a body cut off). */
  noteFailure(operation: Operation, error: Error) {
    this.failures++
    if (!this.judgedLater) this.problem(`${operation}: ${error.message} ${String(error.cause ?? '')}`)
  }

  noteLatency(operation: Operation, latencyMs: number) {
    const tally = this.operations.get(operation) ?? { count: 0, latenciesMs: [] }
    tally.count++
    tally.latenciesMs.push(latencyMs)
    this.operations.set(operation, tally)
  }

  /** Requests counted so far, over every operation. */
  requests(): number {
    return [...this.operations.values()].reduce((sum, tally) => sum + tally.count, 0)
  }
}
