import { MiB, mib } from '../bench-plan.js'
import { atMost } from '../report.js'

/*
 * The soak's memory targets (issue 17): peak RSS under 160 MiB through a 10-minute mixed soak, and
 * no upward trend in the second half of its load.
 *
 * The trend is the least-squares slope of the RSS samples (one a second) over the second half of the
 * load. "No upward trend" is a slope of at most 1 MiB per minute: over the 5-minute second half of a
 * 10-minute soak that is a fitted rise of 5 MiB, about 3% of the budget, and below what a real leak
 * shows. The garbage collector and the allocator make RSS swing by tens of MiB within a minute, with
 * no trend; over 300 samples such a sawtooth moves the slope by a fraction of a MiB per minute. A
 * leak that adds even a few kilobytes per request, at the hundreds of requests per second of the
 * soak, grows by several MiB a minute: well above the threshold. A flat zero would call noise a
 * trend; a threshold of several MiB a minute would let a leak that fills the 160 MiB budget within
 * the hour pass.
 */
export const SOAK_TARGETS = {
  peakRssBytes: 160 * MiB,
  slopeMiBPerMinute: 1,
  /** The length of soak the targets are stated for. */
  loadSeconds: 600,
}

export interface RssTrend {
  /** The least-squares slope of RSS over time, in MiB per minute. */
  slopeMiBPerMinute: number
  /** The samples it was fitted to, and the span they cover in seconds. */
  samples: number
  spanSeconds: number
}

/**
 * The least-squares slope of RSS over the samples taken from `from` to `to` (ms since the epoch, both
 * included); undefined with fewer than 3 samples there.
 */
export function rssTrend(samples: Array<{ at: number; rssBytes: number }>, from: number, to: number): RssTrend | undefined {
  const window = samples.filter((sample) => sample.at >= from && sample.at <= to)
  if (window.length < 3) return undefined
  const xs = window.map((sample) => (sample.at - from) / 60_000)
  const ys = window.map((sample) => sample.rssBytes / MiB)
  const meanX = xs.reduce((sum, x) => sum + x, 0) / xs.length
  const meanY = ys.reduce((sum, y) => sum + y, 0) / ys.length
  let covariance = 0
  let variance = 0
  for (let i = 0; i < xs.length; i++) {
    covariance += (xs[i]! - meanX) * (ys[i]! - meanY)
    variance += (xs[i]! - meanX) ** 2
  }
  if (variance === 0) return undefined
  return { slopeMiBPerMinute: covariance / variance, samples: window.length, spanSeconds: (window.at(-1)!.at - window[0]!.at) / 1000 }
}

/** The trend over the second half of the load (from its midpoint to its end). */
export function secondHalfTrend(
  samples: Array<{ at: number; rssBytes: number }>,
  loadStarted: number,
  loadEnded: number,
): RssTrend | undefined {
  return rssTrend(samples, loadStarted + (loadEnded - loadStarted) / 2, loadEnded)
}

export interface SoakTargetCheck {
  target: string
  measured: string
  result: string
}

const signedSlope = (slope: number) => `${slope >= 0 ? '+' : '−'}${Math.abs(slope).toFixed(2)} MiB/min`

/**
 * The soak's targets with their verdicts. A run shorter than the 10 minutes the targets are stated
 * for still gets its verdicts, marked as indicative only.
 */
export function soakTargetChecks(run: { peakRssBytes: number; trend: RssTrend | undefined; loadSeconds: number }): SoakTargetCheck[] {
  const { peakRssBytes, trend, loadSeconds } = run
  const short = loadSeconds < SOAK_TARGETS.loadSeconds - 1
  const mark = (result: string) => (short ? `${result} (indicative: ${Math.round(loadSeconds)} s of load, not 600)` : result)
  const slope = trend?.slopeMiBPerMinute
  return [
    {
      target: `Peak RSS through the soak < ${mib(SOAK_TARGETS.peakRssBytes)}`,
      measured: mib(peakRssBytes),
      result: mark(atMost(peakRssBytes, SOAK_TARGETS.peakRssBytes)),
    },
    {
      target: `RSS trend over the second half of the load (least-squares slope) ≤ ${signedSlope(SOAK_TARGETS.slopeMiBPerMinute)}`,
      measured:
        slope === undefined
          ? 'too few samples'
          : `${signedSlope(slope)} (${trend!.samples} samples over ${Math.round(trend!.spanSeconds)} s)`,
      result:
        slope === undefined
          ? '**not measured**'
          : mark(
              slope <= SOAK_TARGETS.slopeMiBPerMinute
                ? 'met'
                : `**missed** by ${(slope - SOAK_TARGETS.slopeMiBPerMinute).toFixed(2)} MiB/min`,
            ),
    },
  ]
}
