// LimitExceededError (exit 5) and RateLimitError (exit 8) from the "limited" account (1 MiB files,
// 10 requests a minute). On a launcher of its own: spending that account's minute on the suite's
// shared server would break the SDK's own limit tests running beside this file.
import { writeFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Fileshare, RateLimitError } from '../../src/index.js'
import { fshare, outputs } from '../helpers/cli.js'
import { tempDir } from '../helpers/env.js'
import { startLauncher, stopLauncher, type LauncherInfo } from '../helpers/launcher.js'

let info: LauncherInfo
let stop: () => Promise<unknown>
const tmp = tempDir()

beforeAll(async () => {
  const launched = await startLauncher()
  info = launched.info
  stop = () => stopLauncher(launched.child)
}, 60_000)

afterAll(async () => {
  await stop?.()
  tmp.remove()
})

const limited = () => ({ env: { FILESHARE_BASE_URL: info.base_url, FILESHARE_API_KEY: info.keys.limited }, cwd: tmp.dir })

describe.sequential('limits of the limited account', () => {
  it('LimitExceededError → 5 for a file over max_file_size', async () => {
    writeFileSync(tmp.file('big.bin'), new Uint8Array(info.limits.limited.max_file_size + 1))
    const run = await fshare(['upload', 'big.bin', '--json', '--retries', '0'], limited())
    expect(run.code).toBe(5)
    expect(JSON.parse(run.stdout)).toMatchObject({
      ok: false,
      path: 'big.bin',
      error: { type: 'LimitExceededError', status: 403, code: 'file_too_large', exit_code: 5 },
    })
    expect(run.stderr).toMatch(/^fshare: upload big\.bin: LimitExceededError: 403 file_too_large: /)
  })

  it('RateLimitError → 8, with retry_after, once the requests of the minute are spent', async () => {
    const client = new Fileshare({ baseUrl: info.base_url, apiKey: info.keys.limited, maxRetries: 0 })
    // Spend what is left of the minute (the upload above counted once).
    for (let i = 0; i < info.limits.limited.requests_per_minute; i++) {
      const error = await client.stats().then(
        () => undefined,
        (e: unknown) => e,
      )
      if (error instanceof RateLimitError) break
    }
    const [json, human] = await Promise.all([
      fshare(['ls', '--json', '--retries', '0'], limited()),
      fshare(['stats', '--retries', '0'], limited()),
    ])
    expect(json.code).toBe(8)
    const { error } = JSON.parse(json.stdout)
    expect(error).toMatchObject({ type: 'RateLimitError', status: 429, code: 'rate_limited', exit_code: 8 })
    expect(error.retry_after).toBeGreaterThan(0)
    expect(error.rate_limit).toMatchObject({ limit: info.limits.limited.requests_per_minute, remaining: 0 })
    expect(human.code).toBe(8)
    expect(human.stderr).toMatch(/^fshare: RateLimitError: 429 rate_limited: .+ \(retry after \d+ s, request id [0-9a-f-]{36}\)\n$/)
  })

  it('no key in any output', () => {
    for (const key of Object.values(info.keys)) for (const output of outputs) expect(output).not.toContain(key)
  })
})
