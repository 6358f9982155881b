import { describe, expect, it } from 'vitest'
import { benchPlan } from '../../bench/bench-plan.js'
import { METADATA_CALLS, renderTables, targetChecks, type BenchResults, type MeasuredLoad } from '../../bench/report.js'

/* The sort and search rows of `npm run bench`'s load section (issue 37): flat cost targets for the sorts, none for a search. */

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

function results(find: boolean): BenchResults {
  const calls = Object.fromEntries(METADATA_CALLS.map((call) => [call, loadRun(2_000, 400)])) as Record<
    (typeof METADATA_CALLS)[number],
    MeasuredLoad
  >
  const peerRuns = { fileshare: [loadRun(2_000, 400)], peer: [loadRun(1_000, 800)] }
  return {
    plan: { ...benchPlan(), quick: false },
    startedAt: new Date('2026-11-28T03:00:00Z'),
    finishedAt: new Date('2026-11-28T03:05:00Z'),
    loadAverageAtStart: [1, 1, 1],
    serverCommand: 'node dist/server.js',
    seedSeconds: 50,
    load: {
      bare: loadRun(20_000, 40),
      small: calls,
      large: calls,
      peer: { detail: peerRuns, stats: peerRuns },
      ...(find && {
        find: {
          small: { sortedList: loadRun(2_000, 400), sortedLastPage: loadRun(2_000, 400), search: loadRun(1_500, 600) },
          // the name sort stays flat (1.10x, met); the size sort's last page grows 2.5x (missed); a search 500x (no target)
          large: { sortedList: loadRun(1_900, 440), sortedLastPage: loadRun(800, 1_000), search: loadRun(3, 300_000) },
        },
      }),
    },
  }
}

describe('bench: the file list sorts and search', () => {
  it('renders a row per call with both sizes, a flat-cost verdict for the sorts and none for a search', () => {
    const tables = renderTables(results(true))
    expect(tables).toContain('| GET /files?limit=100&sort=filename&order=asc (page 1) |')
    expect(tables).toMatch(/\| GET \/files\?limit=100&sort=filename&order=asc \(page 1\) \|[^\n]*\| 1\.10x[^\n]*\| ≤ 2\.00x \| met \|/)
    expect(tables).toMatch(/\| GET \/files\?limit=100&sort=size&order=asc&page=<last> \|[^\n]*\| ≤ 2\.00x \| \*\*missed\*\* by 25% \|/)
    expect(tables).toMatch(/\| GET \/files\?limit=100&q=<one name> \(a search\) \|[^\n]*\| none \(a scan\) \| {2}\|/)
    const checks = targetChecks(results(true)).filter((check) => check.target.startsWith('GET /files?limit=100&'))
    expect(checks.map((check) => [check.target.split(':')[0], check.result])).toEqual([
      ['GET /files?limit=100&sort=filename&order=asc', 'met'],
      ['GET /files?limit=100&sort=size&order=asc&page=<last>', '**missed** by 25%'],
    ])
  })

  it('leaves the section out for results from before it existed', () => {
    expect(renderTables(results(false))).not.toContain('sort=filename')
    expect(targetChecks(results(false)).some((check) => check.target.includes('sort='))).toBe(false)
  })
})
