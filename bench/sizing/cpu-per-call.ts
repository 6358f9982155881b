/**
 * Server CPU per call and per transferred GiB on the two stacks, in the same run: the embedded one
 * (SQLite, blob folder, in-memory limits), which `npm run bench` measures, and the scale-out one
 * (PostgreSQL, S3 through s3rver, Redis), which docs/scale-out.md's sizing runs. The two servers
 * (src/server.ts through tsx, `npm start`'s node flags) take turns, twice each, so that the
 * machine's changing load falls on both alike.
 *
 *   node --import tsx bench/sizing/cpu-per-call.ts > cpu.json
 *
 * Modest load: transfers 2 at a time, calls 4 at a time.
 */
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { createInterface } from 'node:readline'
import pg from 'pg'
import { runCommand } from '../../test/helpers/cli.js'
import { cleanRedisPrefix, S3RVER_CREDENTIALS } from '../../test/helpers/scale-out-env.js'
import { freePort, ROOT, spawnServer, stopServerProcess, waitForHealth } from '../../test/helpers/server-process.js'
import { CpuMeter } from '../measure-cpu.js'
import { tsScriptArgs } from '../child-process.js'
import { call, download, inParallel, multipartBody, upload, type Target, type UploadedFile } from './traffic.js'

const PG_SERVER = process.env.SIZING_PG ?? 'postgres://postgres@127.0.0.1:5432'
const DATABASE = 'sizing_cpu'
const REDIS_PREFIX = 'sizing-cpu:'
const TRANSFERS = Number(process.env.SIZING_TRANSFERS ?? 8)
const TRANSFER_MIB = Number(process.env.SIZING_UPLOAD_MIB ?? 20)
const CALLS = Number(process.env.SIZING_CALLS ?? 1500)
const ROUNDS = 2

const log = (message: string) => console.error(`[cpu ${new Date().toISOString().slice(11, 19)}] ${message}`)

async function admin(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: `${PG_SERVER}/postgres` })
  await client.connect()
  try {
    await client.query(statement)
  } finally {
    await client.end()
  }
}

interface Stack {
  name: 'embedded' | 'scale-out'
  target: Target
  pid: number
  files: number[]
  uploaded: UploadedFile[]
  stop(): Promise<unknown>
}

async function startStack(name: Stack['name'], extra: Record<string, string>): Promise<Stack> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `fileshare-cpu-${name}-`))
  const port = await freePort()
  const env: Record<string, string> = {
    FILESHARE_DATA_DIR: dataDir,
    FILESHARE_LOG_LEVEL: 'info',
    FILESHARE_PLANS: JSON.stringify({
      pro: { requests_per_minute: 1_000_000, requests_per_day: 100_000_000, daily_uploads: 100_000, max_storage: 1e15 },
    }),
    PORT: String(port),
    HOST: '127.0.0.1',
    FILESHARE_PUBLIC_URL: `http://127.0.0.1:${port}`,
    ...extra,
  }
  const migrated = await runCommand(['migrate'], env)
  if (migrated.code !== 0) throw new Error(`fileshare migrate: ${migrated.stderr}`)
  const created = await runCommand(['account', 'create', '--email', `${name}@example.com`, '--plan', 'pro', '--json'], env)
  if (created.code !== 0) throw new Error(`fileshare account create: ${created.stderr}`)
  const { api_key: key } = JSON.parse(created.stdout) as { api_key: string }
  const server = spawnServer(
    env,
    ['--max-semi-space-size=8', '--max-old-space-size=1024', '--import', 'tsx', path.join(ROOT, 'src/server.ts')],
    { logFile: path.join(dataDir, 'server.log') },
  )
  const url = `http://127.0.0.1:${port}`
  await waitForHealth(server, `${url}/readyz`, { timeoutMs: 60_000 })
  const target = { url, key }
  // 150 small files, so that a list page holds 100.
  const small = multipartBody(1024)
  const files: number[] = []
  await inParallel(150, 4, async () => void files.push((await upload(target, small)).file_id))
  return {
    name,
    target,
    pid: server.child.pid!,
    files,
    uploaded: [],
    async stop() {
      await stopServerProcess(server, { signal: 'SIGTERM', timeoutMs: 30_000 })
      fs.rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

type Totals = Record<string, { cpu_s: number; units: number }>

async function measureTurn(stack: Stack, totals: Totals, form: { body: Buffer; contentType: string }): Promise<void> {
  const add = (kind: string, cpu: number, units: number) => {
    const total = (totals[kind] ??= { cpu_s: 0, units: 0 })
    total.cpu_s += cpu
    total.units += units
  }
  const gib = (TRANSFERS * TRANSFER_MIB) / 1024
  let cpu = new CpuMeter(stack.pid)
  const uploaded: UploadedFile[] = []
  await inParallel(TRANSFERS, 2, async () => void uploaded.push(await upload(stack.target, form)))
  add('upload_per_gib', cpu.stop(), gib)
  cpu = new CpuMeter(stack.pid)
  await inParallel(TRANSFERS, 2, async (i) => void (await download(uploaded[i]!.public_link)))
  add('download_per_gib', cpu.stop(), gib)
  await inParallel(TRANSFERS, 2, (i) => call(stack.target, 'DELETE', `/files/${uploaded[i]!.file_id}`))
  const middle = stack.files[Math.floor(stack.files.length / 2)]!
  for (const [kind, route] of [
    ['get_file', `/files/${middle}`],
    ['list_100', '/files?limit=100'],
    ['stats', '/stats'],
  ] as const) {
    await inParallel(CALLS / 3, 4, () => call(stack.target, 'GET', route))
    cpu = new CpuMeter(stack.pid)
    await inParallel(CALLS, 4, () => call(stack.target, 'GET', route))
    add(kind, cpu.stop(), CALLS)
  }
}

async function main(): Promise<void> {
  const machine = { cpus: os.cpus().length, model: os.cpus()[0]?.model, node: process.version, load: os.loadavg() }
  log(`machine ${JSON.stringify(machine)}`)
  await admin(`drop database if exists ${DATABASE}`)
  await admin(`create database ${DATABASE}`)
  const s3 = spawn(process.execPath, tsScriptArgs('s3rver-process.ts').concat('fileshare-sizing-cpu'), {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'inherit'],
  })
  const stacks: Stack[] = []
  try {
    const line = await new Promise<string>((resolve) => createInterface({ input: s3.stdout! }).once('line', resolve))
    const { endpoint, bucket } = JSON.parse(line) as { endpoint: string; bucket: string }
    stacks.push(await startStack('embedded', {}))
    stacks.push(
      await startStack('scale-out', {
        FILESHARE_DATABASE_URL: `${PG_SERVER}/${DATABASE}`,
        FILESHARE_REDIS_URL: 'redis://127.0.0.1:6379',
        FILESHARE_REDIS_PREFIX: REDIS_PREFIX,
        FILESHARE_STORAGE: 's3',
        FILESHARE_S3_BUCKET: bucket,
        FILESHARE_S3_ENDPOINT: endpoint,
        FILESHARE_S3_FORCE_PATH_STYLE: 'true',
        AWS_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId,
        AWS_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey,
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      }),
    )
    const form = multipartBody(TRANSFER_MIB << 20)
    // Warm-up of the transfer paths, then the turns: A, B, then B, A.
    for (const stack of stacks) {
      const warm = await upload(stack.target, form)
      await download(warm.public_link)
      await call(stack.target, 'DELETE', `/files/${warm.file_id}`)
    }
    const totals: Record<string, Totals> = { embedded: {}, 'scale-out': {} }
    for (let round = 0; round < ROUNDS; round++) {
      for (const stack of round % 2 === 0 ? stacks : [...stacks].reverse()) {
        await measureTurn(stack, totals[stack.name]!, form)
        log(`round ${round + 1} ${stack.name} done`)
      }
    }
    const perUnit = Object.fromEntries(
      Object.entries(totals).map(([name, kinds]) => [
        name,
        Object.fromEntries(
          Object.entries(kinds).map(([kind, { cpu_s, units }]) => [
            kind,
            kind.endsWith('per_gib')
              ? { cpu_s_per_gib: +(cpu_s / units).toFixed(2) }
              : { cpu_us_per_call: Math.round((cpu_s / units) * 1e6) },
          ]),
        ),
      ]),
    )
    console.log(
      JSON.stringify(
        {
          machine,
          load_at_end: os.loadavg(),
          transfers: TRANSFERS,
          transfer_mib: TRANSFER_MIB,
          calls: CALLS,
          rounds: ROUNDS,
          totals,
          per_unit: perUnit,
        },
        null,
        2,
      ),
    )
  } finally {
    for (const stack of stacks) await stack.stop()
    s3.stdin!.end()
    await cleanRedisPrefix(REDIS_PREFIX)
    await admin(`drop database if exists ${DATABASE} with (force)`)
  }
}

await main()
