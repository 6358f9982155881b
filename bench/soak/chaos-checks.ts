import type { Fault } from './chaos.js'
import { RECOVERY_LIMIT_MS } from './chaos.js'
import { CUT_BY_CLIENT, type Exchange } from './exchanges.js'
import { BACKEND_TIMEOUT_MS } from './scale-out-stack.js'

/*
 * The chaos soak's judgement of every exchange, by the phase of the run it fell in. A fault's phase
 * runs from the cut (or the kill) to RECOVERY_LIMIT_MS after the restore; an exchange belongs to it
 * when the two overlap. Everything else is the steady state.
 *
 * - Anywhere: no 500, and no 5xx but the ones allowed below.
 * - In a cut's phase: 503 with Retry-After (the documented answer when a dependency is away); a
 *   body cut off after its status was sent only when S3 went away under a download. No exchange
 *   takes longer than hangLimitMs (the kill's phase reports its longest, unjudged).
 * - In the kill's phase: also nginx's 502 and connections reset, for the requests the dead instance
 *   held (nginx passes new ones to the other instance).
 * - In the steady state: no 5xx and no failed exchange at all.
 */

/**
 * What a request may take during a fault: FILESHARE_BACKEND_TIMEOUT_MS for the backend that does not
 * answer, plus what the same request takes anyway, which on a loaded machine is seconds: the larger
 * of 5 s and the 99th percentile of the exchanges outside the faults.
 */
export const MIN_HANG_MARGIN_MS = 5_000

export function hangLimitMs(exchanges: Exchange[], faults: Fault[]): { limitMs: number; steadyP99Ms: number } {
  const steady = exchanges
    .filter((exchange) => exchange.error !== CUT_BY_CLIENT && !faults.some((fault) => overlaps(exchange, fault)))
    .map(duration)
    .sort((a, b) => a - b)
  const steadyP99Ms = steady.length === 0 ? 0 : steady[Math.min(steady.length - 1, Math.floor(0.99 * steady.length))]!
  return { limitMs: BACKEND_TIMEOUT_MS + Math.max(MIN_HANG_MARGIN_MS, steadyP99Ms), steadyP99Ms }
}

function overlaps(exchange: Exchange, fault: Fault): boolean {
  return exchange.startedAt <= fault.endedAt + RECOVERY_LIMIT_MS && endOf(exchange) >= fault.startedAt
}

export interface PhaseReport {
  /** The fault's kind, or 'steady'. */
  phase: string
  fault: Fault | undefined
  exchanges: number
  /** Statuses seen (`none` for no answer), with their counts. */
  statuses: Map<string, number>
  /** 503 answers, and how many of them lacked Retry-After. */
  unavailable: number
  unavailableWithoutRetryAfter: number
  /** Answers whose body broke off after the status line. */
  cutBodies: number
  /** Exchanges that got no answer at all. */
  noAnswer: number
  longestMs: number
  longest: Exchange | undefined
  /** Exchanges longer than HANG_LIMIT_MS. */
  hangs: number
  violations: string[]
}

/** When an exchange ended: its last byte, else its status line (a body nobody read), else its start. */
const endOf = (exchange: Exchange) => exchange.endedAt || exchange.headersAt || exchange.startedAt
const duration = (exchange: Exchange) => endOf(exchange) - exchange.startedAt

function describeExchange(exchange: Exchange, loadStarted: number): string {
  const at = ((exchange.startedAt - loadStarted) / 1000).toFixed(1)
  const outcome = exchange.status === undefined ? 'no answer' : `HTTP ${exchange.status}`
  return `${exchange.method} ${exchange.route} at ${at} s: ${outcome}${exchange.error ? ` (${exchange.error})` : ''}, ${duration(exchange)} ms`
}

export function judgeExchanges(exchanges: Exchange[], faults: Fault[], loadStarted: number, limitMs: number): PhaseReport[] {
  const phases: PhaseReport[] = [...faults.map((fault) => ({ phase: fault.kind, fault })), { phase: 'steady', fault: undefined }].map(
    ({ phase, fault }) => ({
      phase,
      fault,
      exchanges: 0,
      statuses: new Map<string, number>(),
      unavailable: 0,
      unavailableWithoutRetryAfter: 0,
      cutBodies: 0,
      noAnswer: 0,
      longestMs: 0,
      longest: undefined,
      hangs: 0,
      violations: [],
    }),
  )
  const steady = phases.at(-1)!
  for (const exchange of exchanges) {
    const end = exchange.endedAt || exchange.headersAt || exchange.startedAt
    const phase =
      phases.find(({ fault }) => fault && exchange.startedAt <= fault.endedAt + RECOVERY_LIMIT_MS && end >= fault.startedAt) ?? steady
    const kind = phase.fault?.kind
    const violation = (why: string) => {
      if (phase.violations.length < 20) phase.violations.push(`${why}: ${describeExchange(exchange, loadStarted)}`)
      else if (phase.violations.length === 20) phase.violations.push('… (further ones not listed)')
    }
    phase.exchanges++
    const cutByClient = exchange.error === CUT_BY_CLIENT
    const statusKey = cutByClient ? 'cut by the client' : exchange.status === undefined ? 'none' : String(exchange.status)
    phase.statuses.set(statusKey, (phase.statuses.get(statusKey) ?? 0) + 1)
    if (!cutByClient) {
      const took = duration(exchange)
      if (took > phase.longestMs) {
        phase.longestMs = took
        phase.longest = exchange
      }
      // A hang is a wait for a backend that does not answer: judged during the cuts. During the kill
      // an exchange is slow only for want of CPU (the instance starting again takes its share).
      if (took > limitMs) {
        phase.hangs++
        if (kind && kind !== 'kill -9') violation(`longer than ${limitMs} ms`)
      }
    }
    if (exchange.status === 503) {
      phase.unavailable++
      if (!exchange.retryAfter) {
        phase.unavailableWithoutRetryAfter++
        violation('503 without Retry-After')
      } else if (!kind) {
        violation('503 outside a fault')
      }
    } else if (exchange.status === 502 && kind === 'kill -9') {
      // nginx's answer for a request the killed instance held.
    } else if (exchange.status !== undefined && exchange.status >= 500) {
      violation(`HTTP ${exchange.status}`)
    }
    if (exchange.error && !cutByClient) {
      if (exchange.status === undefined) {
        phase.noAnswer++
        if (kind !== 'kill -9') violation('no answer')
      } else {
        phase.cutBodies++
        if (kind !== 'kill -9' && kind !== 'S3') violation('body cut off')
      }
    }
  }
  return phases
}

/** The requests that completed each second, and the errors by kind, in bins of `binSeconds` (per second). */
export function timeSeries(
  exchanges: Exchange[],
  loadStarted: number,
  binSeconds: number,
): { seconds: number[]; requests: number[]; errors: Map<string, number[]> } {
  // A loop, not Math.max(...): a 30-minute run makes more exchanges than a call takes arguments.
  const last = exchanges.reduce((latest, exchange) => Math.max(latest, endOf(exchange) - loadStarted), 0)
  const bins = Math.ceil(last / 1000 / binSeconds) + 1
  const requests = new Array<number>(bins).fill(0)
  const errors = new Map<string, number[]>()
  for (const exchange of exchanges) {
    const bin = Math.max(0, Math.floor((endOf(exchange) - loadStarted) / 1000 / binSeconds))
    requests[bin]! += 1 / binSeconds
    let kind: string | undefined
    if (exchange.error === CUT_BY_CLIENT) kind = undefined
    else if (exchange.status === undefined) kind = 'no answer'
    else if (exchange.status >= 500) kind = String(exchange.status)
    else if (exchange.error) kind = 'body cut off'
    else if (exchange.status === 409 || exchange.status === 423) kind = String(exchange.status)
    if (!kind) continue
    const series = errors.get(kind) ?? new Array<number>(bins).fill(0)
    series[bin]! += 1 / binSeconds
    errors.set(kind, series)
  }
  return { seconds: requests.map((_, index) => index * binSeconds), requests, errors }
}
