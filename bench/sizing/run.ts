/**
 * Measures what docs/scale-out.md's sizing rests on, on the scale-out stack (PostgreSQL, s3rver,
 * Redis) of this machine:
 * 1. a database of its own (SIZING_DB, default `sizing`), migrated by `fileshare migrate`, seeded
 *    with SIZING_FILES file rows (default 1,000,000) over SIZING_ACCOUNTS accounts (default 100:
 *    10,000 files each on average, as 100 million over 10,000) with what uploads write beside them
 *    (seed-database.ts); every table's and index's size after VACUUM ANALYZE;
 * 2. a server (src/server.ts through tsx) on that database, on s3rver behind a counting proxy and
 *    on Redis under a prefix of its own: for each kind of request, a batch of real requests and the
 *    rows they wrote (pg_stat_user_tables), the WAL they wrote (pg_waldump), the S3 requests they
 *    made and the server's CPU time;
 * 3. Redis: MEMORY USAGE of every key the server left, and of the request limiter's keys at
 *    several request counts per minute.
 * Then the database, the Redis keys and s3rver's folder are removed (SIZING_KEEP=1 keeps the database).
 *
 *   node --import tsx bench/sizing/run.ts > sizing.json
 *
 * One process at a time, modest load: requests go 1 to 8 at a time.
 */
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { Redis } from 'ioredis'
import pg from 'pg'
import { runCommand } from '../../test/helpers/cli.js'
import { cleanRedisPrefix, S3RVER_CREDENTIALS } from '../../test/helpers/scale-out-env.js'
import { freePort, ROOT, spawnServer, stopServerProcess, waitForHealth } from '../../test/helpers/server-process.js'
import { RedisRequestLimiter } from '../../src/limits/redis-request-limiter.js'
import { PerKeyLimiter } from '../../src/limits/per-key-limiter.js'
import { CpuMeter } from '../measure-cpu.js'
import { tsScriptArgs } from '../child-process.js'
import { averageRowWidth, statDelta, statSnapshot, tableSizes, walBetween, type StatDelta, type WalUse } from './pg-measures.js'
import { seedDatabase } from './seed-database.js'
import { startS3RequestCounter, type S3Counts } from './s3-request-counter.js'
import { api, call, download, inParallel, multipartBody, upload, type Target, type UploadedFile } from './traffic.js'

const PG_SERVER = process.env.SIZING_PG ?? 'postgres://postgres@127.0.0.1:5432'
const DATABASE = process.env.SIZING_DB ?? 'sizing'
const FILES = Number(process.env.SIZING_FILES ?? 1_000_000)
const ACCOUNTS = Number(process.env.SIZING_ACCOUNTS ?? 100)
const UPLOAD_MIB = Number(process.env.SIZING_UPLOAD_MIB ?? 20)
const UPLOADS = Number(process.env.SIZING_UPLOADS ?? 30)
const CALLS = Number(process.env.SIZING_CALLS ?? 2000)
const REDIS_URL = 'redis://127.0.0.1:6379'
const REDIS_PREFIX = 'sizing-bench:'

if (!/^sizing[a-z0-9_]*$/.test(DATABASE)) throw new Error(`SIZING_DB must start with "sizing" (it is dropped): ${DATABASE}`)
const log = (message: string) => console.error(`[sizing ${new Date().toISOString().slice(11, 19)}] ${message}`)
const databaseUrl = `${PG_SERVER}/${DATABASE}`

async function connect(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  return client
}

async function recreateDatabase(): Promise<void> {
  const admin = await connect(`${PG_SERVER}/postgres`)
  try {
    await admin.query(`drop database if exists ${DATABASE}`)
    await admin.query(`create database ${DATABASE}`)
  } finally {
    await admin.end()
  }
}

async function dropDatabase(): Promise<void> {
  const admin = await connect(`${PG_SERVER}/postgres`)
  try {
    await admin.query(`drop database if exists ${DATABASE} with (force)`)
  } finally {
    await admin.end()
  }
}

/** s3rver in a process of its own (bench/s3rver-process.ts): its work is neither the server's nor ours. */
async function startS3rverProcess(): Promise<{ endpoint: string; bucket: string; stop(): void }> {
  const child = spawn(process.execPath, tsScriptArgs('s3rver-process.ts', []).concat('fileshare-sizing'), {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'inherit'],
  })
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve)
    child.once('exit', (code) => reject(new Error(`s3rver exited with code ${code}`)))
  })
  const { endpoint, bucket } = JSON.parse(line) as { endpoint: string; bucket: string }
  return { endpoint, bucket, stop: () => child.stdin!.end() }
}

/** An endpoint that takes webhook deliveries (200, body dropped). */
async function startWebhookReceiver(): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((request, response) => {
    request.resume()
    request.on('end', () => response.end())
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

interface PhaseResult {
  requests: number
  rows: StatDelta
  wal: WalUse
  s3: S3Counts
  server_cpu_s: number
  server_cpu_us_per_request: number
  bytes: number
}

async function main(): Promise<void> {
  const machine = { cpus: os.cpus().length, model: os.cpus()[0]?.model, node: process.version, load: os.loadavg() }
  log(`machine ${JSON.stringify(machine)}`)
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'fileshare-sizing-'))
  const env: Record<string, string> = {
    FILESHARE_DATA_DIR: dataDir,
    FILESHARE_DATABASE_URL: databaseUrl,
    FILESHARE_REDIS_URL: REDIS_URL,
    FILESHARE_REDIS_PREFIX: REDIS_PREFIX,
    FILESHARE_LOG_LEVEL: 'info',
    // Room for the measured batches; the limiter's work per request is the same whatever the limit.
    FILESHARE_PLANS: JSON.stringify({
      pro: { requests_per_minute: 1_000_000, requests_per_day: 100_000_000, daily_uploads: 100_000, max_storage: 1e15 },
    }),
    FILESHARE_WEBHOOKS_ALLOW_PRIVATE: 'true',
    FILESHARE_WEBHOOKS_ALLOW_HTTP: 'true',
  }
  await recreateDatabase()
  const s3 = await startS3rverProcess()
  const counter = await startS3RequestCounter(s3.endpoint)
  const receiver = await startWebhookReceiver()
  const client = await connect(databaseUrl)
  let server: ReturnType<typeof spawnServer> | undefined
  try {
    const migrated = await runCommand(['migrate'], env)
    if (migrated.code !== 0) throw new Error(`fileshare migrate: ${migrated.stderr}`)
    const created = await runCommand(['account', 'create', '--email', 'traffic@example.com', '--plan', 'pro', '--json'], env)
    if (created.code !== 0) throw new Error(`fileshare account create: ${created.stderr}`)
    const account = JSON.parse(created.stdout) as { account_id: number; api_key: string }

    // 1. The seeded database and its sizes.
    const seedStarted = Date.now()
    await seedDatabase(client, { accounts: ACCOUNTS - 1, files: FILES, webhookAccountShare: 0.1 }, log)
    const seedSeconds = (Date.now() - seedStarted) / 1000
    log(`seeded in ${seedSeconds} s; vacuum analyze`)
    await client.query('vacuum analyze')
    const sizes = await tableSizes(client)
    const seededWidths = {
      files: await averageRowWidth(client, 'files', 'true'),
      links: await averageRowWidth(client, 'links', 'true'),
      audit_events: await averageRowWidth(client, 'audit_events', 'true'),
      webhook_messages: await averageRowWidth(client, 'webhook_messages', 'true'),
    }
    const { rows: settings } = await client.query<{ name: string; setting: string }>(
      `select name, setting from pg_settings where name in ('shared_buffers', 'full_page_writes', 'checkpoint_timeout', 'max_wal_size', 'wal_compression')`,
    )
    const maxIds = {
      files: Number((await client.query<{ max: string }>('select max(id) as max from files')).rows[0]!.max),
      audit_events: Number((await client.query<{ max: string }>('select max(id) as max from audit_events')).rows[0]!.max),
      webhook_messages: Number(
        (await client.query<{ max: string }>('select coalesce(max(id), 0) as max from webhook_messages')).rows[0]!.max,
      ),
    }

    // 2. A server on that database, and the batches of requests.
    const port = await freePort()
    const serverEnv = {
      ...env,
      PORT: String(port),
      HOST: '127.0.0.1',
      FILESHARE_PUBLIC_URL: `http://127.0.0.1:${port}`,
      FILESHARE_STORAGE: 's3',
      FILESHARE_S3_BUCKET: s3.bucket,
      FILESHARE_S3_ENDPOINT: counter.endpoint,
      FILESHARE_S3_FORCE_PATH_STYLE: 'true',
      AWS_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey,
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    }
    server = spawnServer(
      serverEnv,
      ['--max-semi-space-size=8', '--max-old-space-size=1024', '--import', 'tsx', path.join(ROOT, 'src/server.ts')],
      { logFile: path.join(dataDir, 'server.log') },
    )
    const url = `http://127.0.0.1:${port}`
    await waitForHealth(server, `${url}/readyz`, { timeoutMs: 60_000 })
    const pid = server.child.pid!
    const target: Target = { url, key: account.api_key }
    await api(target, 'POST', '/webhooks', 201, { url: receiver.url, events: ['*'] })
    // Warm-up: the first calls compile the code paths.
    const warm = await upload(target, multipartBody(1 << 20))
    await download(warm.public_link)
    for (let i = 0; i < 50; i++) await call(target, 'GET', `/files/${warm.file_id}`)
    await call(target, 'DELETE', `/files/${warm.file_id}`)

    const phases: Record<string, PhaseResult> = {}
    async function phase(name: string, requests: number, run: () => Promise<number>): Promise<void> {
      const before = await statSnapshot(client)
      counter.take()
      const cpu = new CpuMeter(pid)
      const bytes = await run()
      const serverCpu = cpu.stop()
      const after = await statSnapshot(client)
      const s3Counts = counter.take()
      phases[name] = {
        requests,
        rows: statDelta(before, after),
        wal: await walBetween(client, before.lsn, after.lsn),
        s3: s3Counts,
        server_cpu_s: serverCpu,
        server_cpu_us_per_request: Math.round((serverCpu / requests) * 1e6),
        bytes,
      }
      log(`${name}: ${JSON.stringify(phases[name])}`)
    }

    const form = multipartBody(UPLOAD_MIB << 20)
    const uploaded: UploadedFile[] = []
    await phase('upload', UPLOADS, async () => {
      await inParallel(UPLOADS, 2, async () => void uploaded.push(await upload(target, form)))
      return UPLOADS * (UPLOAD_MIB << 20)
    })
    await phase('download', UPLOADS, async () => {
      let bytes = 0
      await inParallel(UPLOADS, 2, async (i) => {
        const received = await download(uploaded[i]!.public_link)
        bytes += received
      })
      return bytes
    })
    await phase('download_range_1mib', UPLOADS, async () => {
      let bytes = 0
      await inParallel(UPLOADS, 2, async (i) => {
        const received = await download(uploaded[i]!.public_link, 'bytes=1048576-2097151')
        bytes += received
      })
      return bytes
    })
    // Seeded files of the account, from the middle of its list (their bytes do not exist: no download).
    const { rows: seededOfAccount } = await client.query<{ id: string }>(
      `select id from files where account_id = $1 and expires_at is null order by id desc limit $2 offset 5000`,
      [account.account_id, UPLOADS],
    )
    const seededIds = seededOfAccount.map((row) => Number(row.id))
    const seededId = seededIds[0]!
    const metadata: Array<[string, string, string, unknown?]> = [
      ['get_file', 'GET', `/files/${seededId}`],
      ['list_100', 'GET', '/files?limit=100'],
      ['stats', 'GET', '/stats'],
    ]
    for (const [name, method, route] of metadata) {
      // Warm-up, as the bench does: a call's first requests run code V8 has not optimized yet.
      await inParallel(CALLS / 2, 8, () => call(target, method, route))
      await phase(name, CALLS, async () => {
        await inParallel(CALLS, 8, () => call(target, method, route))
        return 0
      })
    }
    await phase('create_link', UPLOADS, async () => {
      await inParallel(UPLOADS, 2, (i) => call(target, 'POST', `/files/${seededIds[i]!}/links`, { label: 'for the client' }))
      return 0
    })
    await phase('delete', UPLOADS, async () => {
      await inParallel(UPLOADS, 2, (i) => call(target, 'DELETE', `/files/${uploaded[i]!.file_id}`))
      return 0
    })

    const trafficWidths = {
      files: await averageRowWidth(client, 'files', `id > ${maxIds.files}`),
      audit_events: await averageRowWidth(client, 'audit_events', `id > ${maxIds.audit_events} and action = 'file.uploaded'`),
      webhook_messages: await averageRowWidth(
        client,
        'webhook_messages',
        `id > ${maxIds.webhook_messages} and event_type = 'file.uploaded'`,
      ),
    }

    // 3. Redis: the keys the server left, and the request limiter's keys by requests per minute.
    const redis = new Redis(REDIS_URL)
    const redisKeys: Array<{ key: string; type: string; members?: number; bytes: number | null }> = []
    let cursor = '0'
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${REDIS_PREFIX}*`, 'COUNT', 500)
      for (const key of keys) {
        const type = await redis.type(key)
        redisKeys.push({
          key: key.replace(/\d{5,}$/, '<day>'),
          type,
          ...(type === 'zset' ? { members: await redis.zcard(key) } : {}),
          bytes: (await redis.memory('USAGE', key)) as number | null,
        })
      }
      cursor = next
    } while (cursor !== '0')
    const curvePrefix = `${REDIS_PREFIX}curve:`
    const limiter = new RedisRequestLimiter(redis, curvePrefix)
    const limiterCurve: Array<{ requests_in_the_minute: number; minute_zset_bytes: number | null; day_key_bytes: number | null }> = []
    const dayIndex = () => Math.floor(Date.now() / 86_400_000)
    for (const count of [1, 10, 60, 128, 129, 240, 600, 1000]) {
      for (let i = 0; i < count; i++) await limiter.consume(`a${count}`, { perMinute: 1_000_000, perDay: 100_000_000 })
      limiterCurve.push({
        requests_in_the_minute: count,
        minute_zset_bytes: (await redis.memory('USAGE', `${curvePrefix}a${count}:m`)) as number | null,
        day_key_bytes: (await redis.memory('USAGE', `${curvePrefix}a${count}:d:${dayIndex()}`)) as number | null,
      })
    }
    const perIp = new PerKeyLimiter(300, `${REDIS_PREFIX}curve-downloads`, redis)
    await perIp.hit('198.51.100.23')
    const perIpBytes = (await redis.memory('USAGE', `${REDIS_PREFIX}curve-downloads:198.51.100.23`)) as number | null
    const redisConfig = await redis.config('GET', 'zset-max-listpack-entries')
    redis.disconnect()

    console.log(
      JSON.stringify(
        {
          machine,
          plan: { files: FILES, accounts: ACCOUNTS, upload_mib: UPLOAD_MIB, uploads: UPLOADS, calls: CALLS },
          seed_seconds: seedSeconds,
          pg_settings: Object.fromEntries(settings.map((row) => [row.name, row.setting])),
          sizes,
          row_widths: { seeded: seededWidths, written_by_the_server: trafficWidths },
          phases,
          redis: { keys: redisKeys, limiter_curve: limiterCurve, per_ip_key_bytes: perIpBytes, config: redisConfig },
        },
        null,
        2,
      ),
    )
  } finally {
    if (server) await stopServerProcess(server, { signal: 'SIGTERM', timeoutMs: 30_000 })
    await client.end()
    await cleanRedisPrefix(REDIS_PREFIX)
    await counter.close()
    await receiver.close()
    s3.stop()
    if (process.env.SIZING_KEEP !== '1') await dropDatabase()
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
}

await main()
