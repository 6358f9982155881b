import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { benchPlan, MiB } from '../../bench/bench-plan.js'
import {
  atLeast,
  atMost,
  costBelow,
  metadataTarget,
  metricsCostOf,
  renderTables,
  SOAK_HEADING,
  TARGETS,
  targetChecks,
  writeBenchmarksDoc,
  writeBenchmarksSection,
  type BenchResults,
  type MeasuredLoad,
} from '../../bench/report.js'
import { renderBenchmarksSoakSection } from '../../bench/soak/report.js'
import { DEFAULTS, soakCommand } from '../../bench/soak/settings.js'
import { rssTrend, secondHalfTrend, SOAK_TARGETS, soakTargetChecks } from '../../bench/soak/targets.js'

/* The verdicts of `npm run bench` and `npm run soak` against the targets of issue 17. */

function loadRun(requestsPerSecond: number, cpuMicrosPerRequest: number): MeasuredLoad {
  return {
    requests: requestsPerSecond * 10,
    requestsPerSecond,
    p50Ms: 1,
    p99Ms: 4,
    non2xx: 0,
    errors: 0,
    cpuMicrosPerRequest,
  } as MeasuredLoad
}

const peak = (peakBytes: number) => ({ startBytes: 100 * MiB, peakBytes, sampledPeakBytes: peakBytes, ms: 1000 })

/** A full run whose figures sit on either side of each target. */
function results(): BenchResults {
  const bare = loadRun(20_000, 40)
  const small = {
    detail: loadRun(9_000, 90),
    list: loadRun(2_000, 420),
    stats: loadRun(8_000, 100),
    deepList: loadRun(1_500, 600),
    beforeIdList: loadRun(2_000, 420),
  }
  return {
    plan: { ...benchPlan(), quick: false },
    startedAt: new Date('2026-11-25T10:00:00Z'),
    finishedAt: new Date('2026-11-25T10:05:00Z'),
    loadAverageAtStart: [1, 1, 1],
    serverCommand: 'node --max-semi-space-size=8 dist/server.js',
    seedSeconds: 50,
    transfer: {
      // Upload: 1.20x the bare pipe (met, ≤ 1.25x), 1.20x the bare pipe with fsync (missed, ≤ 1.15x).
      uploadMs: { service: [1200, 1200, 1200], bare: [1000, 1000, 1000], bareFsync: [1000, 1000, 1000], peer: [900, 900, 900] },
      uploadCpuSeconds: { service: [1, 1, 1], bare: [1, 1, 1], bareFsync: [1, 1, 1], peer: [1, 1, 1] },
      // Download: exactly the bare read stream (met, ≤ 1.0x), 1.1x res.download (missed by 10%).
      downloadMs: { service: [1100, 1100, 1100], bare: [1100, 1100, 1100], peer: [1000, 1000, 1000] },
      downloadCpuSeconds: { service: [1, 1, 1], bare: [1, 1, 1], peer: [1, 1, 1] },
      serviceUploadRss: peak(120 * MiB),
      bareUploadRss: peak(90 * MiB),
      peerUploadRss: peak(95 * MiB),
    },
    rss: { asStarted: { large: peak(140 * MiB), concurrent: peak(151 * MiB) } },
    load: { bare, small, large: small },
    // Off: 10,000/s at 100 µs; on: 9,600/s at 103 µs: 4% of the requests lost (met), 3% of CPU added (met).
    metrics: {
      address: '127.0.0.1:9100',
      off: [loadRun(10_000, 100), loadRun(10_000, 100)],
      on: [loadRun(9_600, 103), loadRun(9_600, 103)],
      scrapeBytes: 2000,
    },
  }
}

describe('bench verdicts', () => {
  it('states a ceiling as met up to and including the limit, and a miss relative to it', () => {
    expect(atMost(1.0, 1.0)).toBe('met')
    expect(atMost(1.02, 1.0)).toBe('**missed** by 2.0%')
    expect(atMost(1.5, 1.25)).toBe('**missed** by 20%')
    expect(atLeast(0.45, 0.45)).toBe('met')
    expect(atLeast(0.36, 0.45)).toBe('**missed** by 20%')
  })

  it('states a cost as met only strictly below the limit, and a miss in percentage points', () => {
    expect(costBelow(0.049, 0.05)).toBe('met')
    expect(costBelow(-0.02, 0.05)).toBe('met')
    expect(costBelow(0.05, 0.05)).toBe('**missed** by 0.0 percentage points')
    expect(costBelow(0.071, 0.05)).toBe('**missed** by 2.1 percentage points')
  })

  it('holds the targets of issue 17', () => {
    expect(TARGETS).toMatchObject({
      uploadRatio: 1.25,
      uploadFsyncRatio: 1.15,
      downloadRatio: 1,
      downloadPeerRatio: 1,
      peakRssBytes: 150 * MiB,
      detailShareOfBare: 0.45,
      statsShareOfBare: 0.45,
      listCpuMicros: 400,
      metricsCost: 0.05,
    })
  })

  it('judges GET /files/:id and GET /stats by share of the bare route, the listing by CPU per request', () => {
    const bare = loadRun(20_000, 40)
    expect(metadataTarget('detail', loadRun(9_000, 500), bare)).toEqual(['≥ 45% of bare req/s', 'met'])
    expect(metadataTarget('stats', loadRun(8_000, 10), bare)).toEqual(['≥ 45% of bare req/s', '**missed** by 11%'])
    expect(metadataTarget('list', loadRun(1, 400), bare)).toEqual(['≤ 400 µs CPU per request', 'met'])
    expect(metadataTarget('list', loadRun(100_000, 402), bare)).toEqual(['≤ 400 µs CPU per request', '**missed** by 0.5%'])
    expect(metadataTarget('deepList', loadRun(1, 1), bare)).toEqual(['', ''])
  })

  it('measures the cost of metrics as requests/s lost and CPU per request added', () => {
    const { rateCost, cpuCost } = metricsCostOf(results().metrics as { off: MeasuredLoad[]; on: MeasuredLoad[] })
    expect(rateCost).toBeCloseTo(0.04)
    expect(cpuCost).toBeCloseTo(0.03)
  })

  it('gives every target measured a verdict, in the summary and in the tables', () => {
    const run = results()
    const verdicts = Object.fromEntries(targetChecks(run).map((check) => [check.target, check.result]))
    expect(verdicts).toMatchObject({
      'Upload time ÷ the bare pipe ≤ 1.25x': 'met',
      'Upload time ÷ the bare pipe with fsync ≤ 1.15x': '**missed** by 4.3%',
      'Download time ÷ the bare read stream ≤ 1.00x': 'met',
      "Download time ÷ Express's res.download ≤ 1.00x": '**missed** by 10%',
      'Peak RSS, one 5 GiB upload < 150.0 MiB': 'met',
      'Peak RSS, 16 concurrent 256 MiB uploads < 150.0 MiB': '**missed** by 0.7%',
      'GET /files/:id: ≥ 45% of bare req/s': 'met',
      'GET /stats: ≥ 45% of bare req/s': '**missed** by 11%',
      'GET /files?limit=100: ≤ 400 µs CPU per request': '**missed** by 5.0%',
      'Metrics on: GET /files/:id requests/s lost < 5%': 'met',
      'Metrics on: GET /files/:id CPU per request added < 5%': 'met',
    })
    const tables = renderTables(run)
    expect(tables).toContain('| 1.20x | ≤ 1.15x | **missed** by 4.3% |')
    expect(tables).toMatch(/Download 1 GiB vs Express 5 `res.download` .*\| 1.10x \| ≤ 1.00x \| \*\*missed\*\* by 10% \|/)
    expect(tables).toMatch(/GET \/files\?limit=100 \(page 1\) .*\| ≤ 400 µs CPU per request \| \*\*missed\*\* by 5.0% \|/)
    expect(tables).toMatch(/GET \/stats .*\| ≥ 45% of bare req\/s \| \*\*missed\*\* by 11% \|/)
    expect(tables).toContain('| Requests/s lost (1 − on ÷ off) | 4.0% | < 5% | met |')
    expect(tables).toContain('| Server CPU per request added (on ÷ off − 1) | 3.0% | < 5% | met |')
  })

  it('leaves out the targets of sections that did not run, or were skipped', () => {
    const run = results()
    delete run.transfer
    delete run.load
    run.metrics = { skipped: 'not yet' }
    expect(targetChecks(run).map((check) => check.target)).toEqual([
      'Peak RSS, one 5 GiB upload < 150.0 MiB',
      'Peak RSS, 16 concurrent 256 MiB uploads < 150.0 MiB',
    ])
  })
})

describe('soak verdicts', () => {
  const start = Date.UTC(2026, 10, 25, 10)
  const samples = (seconds: number, rssAt: (second: number) => number) =>
    Array.from({ length: seconds + 1 }, (_, second) => ({ at: start + second * 1000, rssBytes: rssAt(second) * MiB }))

  it('fits the least-squares slope of RSS in MiB per minute', () => {
    const trend = rssTrend(
      samples(300, (second) => 100 + second / 30),
      start,
      start + 300_000,
    )
    expect(trend?.slopeMiBPerMinute).toBeCloseTo(2)
    expect(trend?.samples).toBe(301)
    expect(trend?.spanSeconds).toBe(300)
    expect(
      rssTrend(
        samples(1, () => 100),
        start,
        start + 1000,
      ),
    ).toBeUndefined()
  })

  it('sees no trend in a garbage-collection sawtooth', () => {
    // Rises 30 MiB over 45 s, falls back at once, for 5 minutes.
    const trend = rssTrend(
      samples(300, (second) => 130 + ((second % 45) * 30) / 45),
      start,
      start + 300_000,
    )
    expect(Math.abs(trend!.slopeMiBPerMinute)).toBeLessThan(SOAK_TARGETS.slopeMiBPerMinute)
  })

  it('takes the trend over the second half of the load only', () => {
    // Climbs fast in the first half, flat in the second.
    const all = samples(600, (second) => (second < 300 ? 80 + second / 3 : 180))
    expect(secondHalfTrend(all, start, start + 600_000)?.slopeMiBPerMinute).toBeCloseTo(0)
    expect(rssTrend(all, start, start + 600_000)!.slopeMiBPerMinute).toBeGreaterThan(5)
  })

  it('judges the peak against 160 MiB and the slope against 1 MiB/min, marking a short run as indicative', () => {
    const flat = { slopeMiBPerMinute: 0.4, samples: 300, spanSeconds: 300 }
    expect(soakTargetChecks({ peakRssBytes: 150 * MiB, trend: flat, loadSeconds: 600 }).map((check) => check.result)).toEqual([
      'met',
      'met',
    ])
    const rising = { slopeMiBPerMinute: 1.5, samples: 300, spanSeconds: 300 }
    const checks = soakTargetChecks({ peakRssBytes: 209 * MiB, trend: rising, loadSeconds: 600 })
    expect(checks.map((check) => check.result)).toEqual(['**missed** by 31%', '**missed** by 0.50 MiB/min'])
    expect(checks[1]!.measured).toBe('+1.50 MiB/min (300 samples over 300 s)')
    const short = soakTargetChecks({ peakRssBytes: 150 * MiB, trend: flat, loadSeconds: 180 })
    expect(short[0]!.result).toBe('met (indicative: 180 s of load, not 600)')
    expect(soakTargetChecks({ peakRssBytes: 150 * MiB, trend: undefined, loadSeconds: 600 })[1]!.result).toBe('**not measured**')
  })

  it('writes the command that repeats the run', () => {
    expect(soakCommand(DEFAULTS, '')).toBe('npm run soak')
    expect(soakCommand({ ...DEFAULTS, seconds: 600, clients: 24 }, '--max-semi-space-size=4')).toBe(
      'SOAK_SECONDS=600 SOAK_CLIENTS=24 BENCH_SERVER_NODE_FLAGS="--max-semi-space-size=4" npm run soak',
    )
  })
})

describe('docs/benchmarks.md', () => {
  let dir: string | undefined
  afterEach(() => {
    if (dir) fs.rmSync(dir, { recursive: true, force: true })
    dir = undefined
  })

  it("keeps the soak's section and the hand-written notes when the bench rewrites the file, and the soak replaces its own section", () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-report-test-'))
    const file = path.join(dir, 'benchmarks.md')
    fs.writeFileSync(
      file,
      '# Benchmarks\n\nold figures\n\n<!-- Everything below this line is written by hand; bench/run.ts keeps it. -->\n\n## Notes\n\nmine\n',
    )
    const sample = { rssBytes: 100 * MiB, hwmBytes: 100 * MiB, fds: 24 }
    const soak = (peakMiB: number) =>
      renderBenchmarksSoakSection({
        passed: true,
        startedAt: new Date(),
        loadAverageAtStart: [1, 1, 1],
        serverCommand: 'node --max-semi-space-size=8 dist/server.js',
        elapsedSeconds: 600,
        requests: 360_000,
        startSample: sample,
        peak: { ...sample, rssBytes: peakMiB * MiB },
        endSample: sample,
        targets: soakTargetChecks({
          peakRssBytes: peakMiB * MiB,
          trend: { slopeMiBPerMinute: 0, samples: 300, spanSeconds: 300 },
          loadSeconds: 600,
        }),
        charts: [],
      })
    writeBenchmarksSection(file, soak(209), { before: [] })
    writeBenchmarksSection(file, soak(150), { before: [] })
    writeBenchmarksDoc(file, results())
    const text = fs.readFileSync(file, 'utf8')
    expect(text.split(SOAK_HEADING)).toHaveLength(2)
    expect(text).toContain('| Peak RSS through the soak < 160.0 MiB | 150.0 MiB | met |')
    expect(text).toContain('360,000 requests in 600 s (600/s)')
    expect(text).not.toContain('old figures')
    expect(text.indexOf('### Targets')).toBeLessThan(text.indexOf(SOAK_HEADING))
    expect(text.indexOf(SOAK_HEADING)).toBeLessThan(text.indexOf('<!-- Everything below this line'))
    expect(text.endsWith('## Notes\n\nmine\n')).toBe(true)
  })
})
