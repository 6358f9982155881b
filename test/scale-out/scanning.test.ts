import { randomBytes } from 'node:crypto'
import fs from 'node:fs/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CLAMD_AVAILABLE, EICAR, EICAR_SIGNATURE, startClamd, type TestClamd } from '../helpers/clamd.js'
import { runCommand } from '../helpers/cli.js'
import {
  cleanRedisPrefix,
  createPgSchema,
  dropPgSchema,
  isPostgresReachable,
  isRedisReachable,
  newRedisPrefix,
  scaleOutEnv,
  startS3rver,
  type TestS3rver,
} from '../helpers/scale-out-env.js'
import { freePort, SERVER, startServerProcess, stopServerProcess, type ServerProcess } from '../helpers/server-process.js'
import { makeTempDir } from '../helpers/test-app.js'

/**
 * Virus scanning on the scale-out stack, with real processes: files left pending while clamd is
 * down survive a restart of every instance and are scanned once it is back, each file by exactly
 * one instance (the sum of the instances' scan counts is the number of files).
 */

const [postgresReachable, redisReachable] = await Promise.all([isPostgresReachable(), isRedisReachable()])
const runnable = postgresReachable && redisReachable && CLAMD_AVAILABLE

const bearer = (apiKey: string) => ({ authorization: `Bearer ${apiKey}` })

/** The sum of a counter's samples with `result` in `results`, from a Prometheus text page. */
function scanCount(metrics: string, results: string[]): number {
  let sum = 0
  for (const line of metrics.split('\n')) {
    const match = /^fileshare_scan_duration_seconds_count\{result="([a-z]+)"\} (\d+)/.exec(line)
    if (match && results.includes(match[1]!)) sum += Number(match[2])
  }
  return sum
}

describe.skipIf(!runnable)('virus scanning across instances and restarts', () => {
  let schema: string
  let s3: TestS3rver
  let clamd: TestClamd
  let redisPrefix: string
  let env: Record<string, string>
  const dataDirs: string[] = []
  const running: ServerProcess[] = []

  async function start(): Promise<ServerProcess & { metrics: string }> {
    const dataDir = await makeTempDir('fileshare-scan-')
    dataDirs.push(dataDir)
    const metricsPort = await freePort()
    const server = await startServerProcess({
      dataDir,
      env: { ...env, FILESHARE_METRICS_ADDR: `127.0.0.1:${metricsPort}` },
      readyTimeoutMs: 20_000,
    })
    running.push(server)
    return { ...server, metrics: `http://127.0.0.1:${metricsPort}/metrics` }
  }

  beforeAll(async () => {
    await fs.access(SERVER)
    ;[schema, s3, clamd] = await Promise.all([createPgSchema(), startS3rver('fileshare-scanning'), startClamd()])
    redisPrefix = newRedisPrefix('scanning')
    env = {
      ...scaleOutEnv({ schema, bucket: 'fileshare-scanning', s3Endpoint: s3.endpoint, redisPrefix }),
      FILESHARE_LOG_LEVEL: 'error',
      FILESHARE_PUBLIC_URL: 'http://files.example.test',
      FILESHARE_CLAMD: clamd.url,
      FILESHARE_SCAN: 'required',
    }
  }, 60_000)

  afterAll(async () => {
    await Promise.allSettled(running.map((server) => stopServerProcess(server)))
    await Promise.allSettled([
      schema && dropPgSchema(schema),
      s3?.close(),
      clamd?.close(),
      redisPrefix && cleanRedisPrefix(redisPrefix),
      ...dataDirs.map((dir) => fs.rm(dir, { recursive: true, force: true })),
    ])
  }, 30_000)

  it('files pending while clamd is down survive a restart of both instances, then each is scanned exactly once', async () => {
    await clamd.stop()
    let [a, b] = await Promise.all([start(), start()])
    const created = JSON.parse(
      (
        await runCommand(['account', 'create', '--email', 'scan@example.test', '--plan', 'pro', '--json'], {
          ...env,
          FILESHARE_DATA_DIR: a.dataDir,
        })
      ).stdout,
    ) as { api_key: string; account_id: number }
    const apiKey = created.api_key
    // The polls below are many requests: the plan's rate limits are not what is tested here.
    await runCommand(
      ['account', 'set-limits', String(created.account_id), '--requests-per-minute', '100000', '--requests-per-day', '1000000'],
      { ...env, FILESHARE_DATA_DIR: a.dataDir },
    )
    const upload = (server: ServerProcess, content: string | Uint8Array, name: string) => {
      const form = new FormData()
      form.append('file', new Blob([content]), name)
      return fetch(`${server.api}/files/upload`, { method: 'POST', headers: bearer(apiKey), body: form })
    }
    const ids: Array<{ id: number; infected: boolean }> = []
    for (let i = 0; i < 10; i++) {
      const infected = i % 4 === 0
      const response = await upload(i % 2 === 0 ? a : b, infected ? `${i} ${EICAR}` : randomBytes(2000 + i), `f${i}`)
      expect(response.status).toBe(201)
      ids.push({ id: ((await response.json()) as { file_id: number }).file_id, infected })
    }
    // Both instances stop (clamd still down): nothing was scanned.
    await Promise.all([a, b].map((server) => stopServerProcess(server, { signal: 'SIGTERM', timeoutMs: 10_000 })))
    await clamd.start()
    ;[a, b] = await Promise.all([start(), start()])
    for (const { id, infected } of ids) {
      await expect
        .poll(
          async () => {
            const response = await fetch(`${a.api}/files/${id}`, { headers: bearer(apiKey) })
            const body = (await response.json()) as { file?: { scan: { status: string } } }
            return body.file?.scan.status ?? JSON.stringify(body)
          },
          { timeout: 20_000, interval: 100 },
        )
        .toBe(infected ? 'infected' : 'clean')
    }
    const infectedRecord = (await (await fetch(`${b.api}/files/${ids[0]!.id}`, { headers: bearer(apiKey) })).json()) as {
      file: { scan: { signature: string } }
    }
    expect(infectedRecord.file.scan.signature).toBe(EICAR_SIGNATURE)
    const verdicts = await Promise.all(
      [a, b].map(async (server) => scanCount(await (await fetch(server.metrics)).text(), ['clean', 'infected'])),
    )
    expect(verdicts[0]! + verdicts[1]!).toBe(ids.length)
    const stats = (await (await fetch(`${b.api}/stats`, { headers: bearer(apiKey) })).json()) as { stats: { total_files: number } }
    expect(stats.stats.total_files).toBe(ids.filter((file) => !file.infected).length)
  })
})
