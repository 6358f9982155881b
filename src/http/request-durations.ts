/**
 * The `http_request_duration_seconds` histogram, counted without prom-client on the way.
 *
 * Every request observes it, so its cost is paid by every request: prom-client's `observe`, even
 * on a child cached by its labels, builds a label object and a hash string and validates the
 * labels on each call, and looking the child up by a `method route status` key built per request
 * cost about as much again. Together some 2.5 µs of a 90 µs `GET /files/:id` (docs/reliability.md,
 * "Metrics"). Here a series is found by three map lookups on values the request already holds (the
 * route's pattern and the method are the same string objects each time, the status a small
 * integer), and an observation is two additions and one increment, with nothing allocated.
 *
 * The registry reads it as it reads a prom-client metric, through `get()` at each scrape: the same
 * name, type, labels and series, in the same order and text as prom-client's Histogram writes them
 * (test/http/request-durations.test.ts compares the two).
 */

export type DurationLabel = 'method' | 'route' | 'status_code'

/** A series as prom-client's registry reads it (its MetricValueWithName). */
export interface DurationValue {
  labels: Partial<Record<DurationLabel | 'le', string | number>>
  value: number
  metricName: string
}

/** What the registry asks a metric for (prom-client's MetricObjectWithValues). */
export interface DurationMetricObject {
  name: string
  help: string
  type: 'histogram'
  values: DurationValue[]
  aggregator: 'sum'
}

/** One label set's observations: counts per bucket (not cumulated; the last is above every bound), sum and count. */
interface Series {
  readonly method: string
  readonly route: string
  readonly status: number
  readonly buckets: Float64Array
  sum: number
  count: number
}

export class RequestDurations {
  readonly name: string
  readonly help: string
  readonly type = 'histogram'
  readonly aggregator = 'sum'
  private readonly bounds: Float64Array
  /** route → method → status → series: each key is a value the request already has, none built per request. */
  private readonly byRoute = new Map<string, Map<string, Map<number, Series>>>()
  /** In the order of their first observation, as prom-client lists its series. */
  private readonly series: Series[] = []

  constructor(options: { name: string; help: string; buckets: readonly number[] }) {
    this.name = options.name
    this.help = options.help
    this.bounds = Float64Array.from(options.buckets)
    for (let i = 1; i < this.bounds.length; i++) {
      if (!(this.bounds[i]! > this.bounds[i - 1]!)) throw new RangeError('histogram buckets must be increasing')
    }
  }

  /** One request: its method, its route's pattern (`(unmatched)` when none), its status, and how long it took. */
  observe(method: string, route: string, status: number, seconds: number): void {
    let byMethod = this.byRoute.get(route)
    if (byMethod === undefined) {
      byMethod = new Map()
      this.byRoute.set(route, byMethod)
    }
    let byStatus = byMethod.get(method)
    if (byStatus === undefined) {
      byStatus = new Map()
      byMethod.set(method, byStatus)
    }
    let series = byStatus.get(status)
    if (series === undefined) {
      series = { method, route, status, buckets: new Float64Array(this.bounds.length + 1), sum: 0, count: 0 }
      byStatus.set(status, series)
      this.series.push(series)
    }
    const { bounds } = this
    let bucket = 0
    // Most answers fall in the first bucket or two: a linear walk beats a binary search here.
    while (bucket < bounds.length && seconds > bounds[bucket]!) bucket++
    series.buckets[bucket]! += 1
    series.sum += seconds
    series.count += 1
  }

  /** The registry's view, at a scrape: cumulative buckets (`le`), then `+Inf`, `_sum` and `_count` of each series. */
  get(): Promise<DurationMetricObject> {
    const values: DurationValue[] = []
    const bucketName = `${this.name}_bucket`
    for (const series of this.series) {
      const { method, route } = series
      const status_code = String(series.status)
      let cumulated = 0
      for (let i = 0; i < this.bounds.length; i++) {
        cumulated += series.buckets[i]!
        values.push({ labels: { le: this.bounds[i]!, method, route, status_code }, value: cumulated, metricName: bucketName })
      }
      values.push({ labels: { le: '+Inf', method, route, status_code }, value: series.count, metricName: bucketName })
      values.push({ labels: { method, route, status_code }, value: series.sum, metricName: `${this.name}_sum` })
      values.push({ labels: { method, route, status_code }, value: series.count, metricName: `${this.name}_count` })
    }
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator })
  }

  /** Forgets every series (prom-client's Registry.resetMetrics calls it). */
  reset(): void {
    this.byRoute.clear()
    this.series.length = 0
  }
}
