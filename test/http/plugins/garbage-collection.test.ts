import { randomBytes } from 'node:crypto'
import fs from 'node:fs/promises'
import path from 'node:path'
import { Readable } from 'node:stream'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterEach, describe, expect, it, onTestFinished } from 'vitest'
import { buildApp, type App } from '../../../src/app.js'
import { loadConfig } from '../../../src/config.js'
import {
  emptyGarbageCollectionReport,
  type GarbageCollectionOptions,
  type GarbageCollectionReport,
} from '../../../src/services/garbage-collector.js'
import { eventually, ROOT, spawnServer } from '../../helpers/server-process.js'
import { makeTempDir } from '../../helpers/test-app.js'

const HOUR = 3_600_000

interface LogLine {
  level: number
  msg: string
  gc?: GarbageCollectionReport
  err?: { message: string }
}

const opened: Array<{ app: App; dataDir: string }> = []
afterEach(async () => {
  for (const { app, dataDir } of opened.splice(0)) {
    await app.close()
    await fs.rm(dataDir, { recursive: true, force: true })
  }
})

/** The whole app on a fresh data folder, ready (so its timers run) but not listening; its log lines are kept. */
async function readyApp(env: Record<string, string>, beforeReady: (app: App) => void = () => {}) {
  const dataDir = await makeTempDir('fileshare-gc-plugin-')
  const lines: LogLine[] = []
  const config = loadConfig({ FILESHARE_DATA_DIR: dataDir, FILESHARE_LOG_LEVEL: 'info', ...env })
  const app = await buildApp(config, { logStream: { write: (line) => void lines.push(JSON.parse(line) as LogLine) } })
  opened.push({ app, dataDir })
  beforeReady(app)
  await app.ready()
  return { app, dataDir, lines, blobs: path.join(dataDir, 'blobs') }
}

/** Replaces the collector's sweep with `sweep`, counting calls and how many ran at once. */
function instrument(app: App, sweep: (options: GarbageCollectionOptions) => Promise<GarbageCollectionReport>) {
  const counts = { calls: 0, running: 0, maxRunning: 0 }
  app.services.garbageCollector.collect = async (options) => {
    counts.calls++
    counts.running++
    counts.maxRunning = Math.max(counts.maxRunning, counts.running)
    try {
      return await sweep(options)
    } finally {
      counts.running--
    }
  }
  return counts
}

const emptyReport = (options: GarbageCollectionOptions) => emptyGarbageCollectionReport({ graceMs: options.graceMs })

describe('periodic garbage collection in the server', () => {
  it('sweeps every FILESHARE_GC_INTERVAL_MS: old leftovers go, recent ones and every file stay', async () => {
    const { app, blobs, lines } = await readyApp({ FILESHARE_GC_INTERVAL_MS: '50', FILESHARE_GC_GRACE_MS: String(HOUR) })
    const { account } = await app.services.accounts.create('periodic@example.test', 'pro')
    const owner = { accountId: account.id, limits: { maxFileSize: 10_000, dailyUploads: 10 } }
    const file = await app.services.files.commit(await app.services.files.stage(owner, Readable.from([Buffer.from('kept')]), 'kept.txt'))
    const when = new Date(Date.now() - 2 * HOUR)
    const place = async (relative: string, old: boolean) => {
      await fs.mkdir(path.dirname(path.join(blobs, relative)), { recursive: true })
      await fs.writeFile(path.join(blobs, relative), randomBytes(100))
      if (old) await fs.utimes(path.join(blobs, relative), when, when)
    }
    const key = () => randomBytes(16).toString('hex')
    const [oldOrphan, youngOrphan] = [key(), key()]
    await place(`objects/${oldOrphan.slice(0, 2)}/${oldOrphan}`, true)
    await place(`objects/${youngOrphan.slice(0, 2)}/${youngOrphan}`, false)
    await place(`tmp/${key()}.part`, true)
    const youngTemp = `${key()}.part`
    await place(`tmp/${youngTemp}`, false)
    const fileBlob = path.join('objects', file.storage_key.slice(0, 2), file.storage_key)
    await fs.utimes(path.join(blobs, fileBlob), when, when)

    // Sweeps run every 50 ms, also while the leftovers are being placed: add up what every sweep
    // reported (a sweep logs once its removals are done).
    const sweeps = () => lines.filter((line) => line.msg === 'garbage collection swept')
    const total = (field: 'blobsRemoved' | 'unfinishedWritesRemoved' | 'bytesFreed' | 'failures') =>
      sweeps().reduce((sum, sweep) => sum + sweep.gc![field], 0)
    await eventually('sweeps that removed the old leftovers', async () => (total('bytesFreed') >= 200 ? true : undefined), 10_000, 20)
    for (const sweep of sweeps()) expect([sweep.level, sweep.gc!.graceMs]).toEqual([30, HOUR])
    expect({
      blobs: total('blobsRemoved'),
      unfinished: total('unfinishedWritesRemoved'),
      bytes: total('bytesFreed'),
      failures: total('failures'),
    }).toEqual({
      blobs: 1,
      unfinished: 1,
      bytes: 200,
      failures: 0,
    })
    const objects = (await fs.readdir(path.join(blobs, 'objects'), { recursive: true })).filter((entry) => /[a-f0-9]{32}$/.test(entry))
    expect(objects.map((entry) => path.basename(entry)).sort()).toEqual([file.storage_key, youngOrphan].sort())
    expect(await fs.readdir(path.join(blobs, 'tmp'))).toEqual([youngTemp])
    // The file of the row still downloads.
    const download = await app.inject({ url: `/download/${file.token}` })
    expect(download.statusCode).toBe(200)
    expect(download.body).toBe('kept')
  })

  it('never runs two sweeps at once, and keeps sweeping after one fails; failures are logged', async () => {
    let sweeps = 0
    let counts = { calls: 0, running: 0, maxRunning: 0 }
    const { app, lines } = await readyApp({ FILESHARE_GC_INTERVAL_MS: '1' }, (app) => {
      counts = instrument(app, async (options) => {
        sweeps++
        // Each sweep lasts far longer than the interval.
        await sleep(30)
        if (sweeps % 2 === 1) throw new Error(`sweep ${sweeps} broke`)
        return emptyReport(options)
      })
    })
    await eventually('four sweeps', async () => (counts.calls >= 4 ? true : undefined), 10_000, 10)
    expect(counts.maxRunning).toBe(1)
    const failures = lines.filter((line) => line.msg === 'garbage collection failed')
    expect(failures.length).toBeGreaterThanOrEqual(2)
    expect(failures[0]).toMatchObject({ level: 50, err: { message: 'sweep 1 broke' } })
    expect(lines.some((line) => line.msg === 'garbage collection swept')).toBe(true)
    expect((await app.inject({ url: '/healthz' })).statusCode).toBe(200)
  })

  it('close stops a sweep under way (its signal aborts) and waits for it; no sweep runs after', async () => {
    let signal: AbortSignal | undefined
    let counts = { calls: 0, running: 0, maxRunning: 0 }
    const { app, dataDir } = await readyApp({ FILESHARE_GC_INTERVAL_MS: '1' }, (app) => {
      counts = instrument(app, async (options) => {
        signal = options.signal
        // A long sweep that ends when told to.
        while (!options.signal?.aborted) await sleep(5)
        return { ...emptyReport(options), interrupted: true }
      })
    })
    await eventually('a sweep under way', async () => (counts.running === 1 ? true : undefined), 10_000, 5)
    opened.splice(0) // closed here, not by afterEach
    await app.close()
    await fs.rm(dataDir, { recursive: true, force: true })
    expect(signal!.aborted).toBe(true)
    expect(counts.running).toBe(0)
    const calls = counts.calls
    await sleep(50)
    expect(counts.calls).toBe(calls)
  })

  it('FILESHARE_GC_INTERVAL_MS=0 turns the sweeps off', async () => {
    let counts = { calls: 0, running: 0, maxRunning: 0 }
    await readyApp({ FILESHARE_GC_INTERVAL_MS: '0' }, (app) => {
      counts = instrument(app, async (options) => emptyReport(options))
    })
    await sleep(100)
    expect(counts.calls).toBe(0)
  })

  it('its timer never keeps the process alive', async () => {
    const dataDir = await makeTempDir('fileshare-gc-plugin-')
    // A process that builds the app (compiled), makes it ready and then has nothing left to do.
    const script = `
      const { buildApp } = await import(${JSON.stringify(path.join(ROOT, 'dist/app.js'))})
      const { loadConfig } = await import(${JSON.stringify(path.join(ROOT, 'dist/config.js'))})
      const app = await buildApp(loadConfig({ ...process.env, FILESHARE_LOG_LEVEL: 'silent' }))
      await app.ready()
      console.log('ready')`
    try {
      const child = spawnServer({ FILESHARE_DATA_DIR: dataDir, FILESHARE_GC_INTERVAL_MS: String(HOUR) }, [
        '--input-type=module',
        '-e',
        script,
      ])
      onTestFinished(() => void child.child.kill('SIGKILL'))
      // With a timer that held the event loop, this would not end before the test's timeout.
      expect(await child.exited).toEqual({ code: 0, signal: null })
      expect(child.stdout()).toBe('ready\n')
    } finally {
      await fs.rm(dataDir, { recursive: true, force: true })
    }
  })
})
