import { Histogram, Registry, type Metric } from 'prom-client'
import { describe, expect, it } from 'vitest'
import { RequestDurations } from '../../src/http/request-durations.js'

/**
 * http_request_duration_seconds is counted by a class of its own (src/http/request-durations.ts), not
 * by prom-client's Histogram: a scrape must not tell the difference. Each case feeds the same
 * observations to both, each in a registry of its own, and compares what the registries write.
 */

const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300]
const NAME = 'http_request_duration_seconds'
const HELP = 'Time from the request to the end of its answer, by method, route pattern and status.'

type Observation = [method: string, route: string, status: number, seconds: number]

function both(observations: Observation[]) {
  const theirs = new Registry()
  const histogram = new Histogram({
    name: NAME,
    help: HELP,
    labelNames: ['method', 'route', 'status_code'],
    buckets: BUCKETS,
    registers: [theirs],
  })
  const ours = new Registry()
  const durations = new RequestDurations({ name: NAME, help: HELP, buckets: BUCKETS })
  ours.registerMetric(durations as unknown as Metric)
  for (const [method, route, status, seconds] of observations) {
    histogram.labels(method, route, String(status)).observe(seconds)
    durations.observe(method, route, status, seconds)
  }
  return { theirs, ours, durations }
}

/** The parts of a series a reader uses (prom-client adds an empty exemplar field). */
async function series(registry: Registry) {
  const [metric] = await registry.getMetricsAsJSON()
  const { values, ...rest } = metric as unknown as { values: Array<{ labels: object; value: number; metricName: string }> }
  return { ...rest, values: values.map(({ labels, value, metricName }) => ({ labels, value, metricName })) }
}

describe('the request-duration histogram', () => {
  const observations: Observation[] = [
    ['GET', '/api/v1/files/:file_id', 200, 0.0004],
    ['GET', '/api/v1/files/:file_id', 200, 0.001], // on a bound: counted in its bucket (le is "less or equal")
    ['GET', '/api/v1/files/:file_id', 200, 0.0011],
    ['GET', '/api/v1/files/:file_id', 404, 0.002],
    ['POST', '/api/v1/files/upload', 201, 3.7],
    ['GET', '(unmatched)', 404, 0.00003],
    ['GET', '/download/:token', 200, 301], // above every bound: only +Inf
    ['GET', '/api/v1/files/:file_id', 200, 0.3],
    ['PATCH', '/api/v1/uploads/:upload_id', 204, 0.05],
  ]

  it('writes the same Prometheus text as prom-client', async () => {
    const { theirs, ours } = both(observations)
    const text = await ours.metrics()
    expect(text).toBe(await theirs.metrics())
    expect(text).toContain(`# TYPE ${NAME} histogram`)
    expect(text).toContain(`${NAME}_bucket{le="0.001",method="GET",route="/api/v1/files/:file_id",status_code="200"} 2`)
    expect(text).toContain(`${NAME}_bucket{le="300",method="GET",route="/download/:token",status_code="200"} 0`)
    expect(text).toContain(`${NAME}_bucket{le="+Inf",method="GET",route="/download/:token",status_code="200"} 1`)
    expect(text).toContain(`${NAME}_count{method="GET",route="/api/v1/files/:file_id",status_code="200"} 4`)
  })

  it('gives the same series to a JSON reader, sum and count included', async () => {
    const { theirs, ours } = both(observations)
    expect(await series(ours)).toEqual(await series(theirs))
    const sums = (await series(ours)).values.filter((value) => value.metricName === `${NAME}_sum`)
    expect(sums.find((value) => (value.labels as { status_code: string }).status_code === '201')?.value).toBe(3.7)
  })

  it('has no series before a request, and none after a reset', async () => {
    const { ours, durations } = both([])
    expect(await ours.metrics()).toBe(`# HELP ${NAME} ${HELP}\n# TYPE ${NAME} histogram\n`)
    durations.observe('GET', '/healthz', 200, 0.0001)
    expect(await ours.metrics()).toContain(`${NAME}_count{method="GET",route="/healthz",status_code="200"} 1`)
    ours.resetMetrics()
    expect(await ours.metrics()).not.toContain(`${NAME}_count`)
  })

  it('refuses buckets that do not increase', () => {
    expect(() => new RequestDurations({ name: NAME, help: HELP, buckets: [0.1, 0.1] })).toThrow(RangeError)
  })
})
