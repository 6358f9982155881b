import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { Redis } from 'ioredis'
import pg from 'pg'
import { eventually, freePort } from '../../test/helpers/server-process.js'
import { tsScriptArgs } from '../child-process.js'

/*
 * The chaos soak's own PostgreSQL, Redis and s3rver, each a process (group) of its own on a free
 * port, so that freezing one (SIGSTOP) touches nothing else on the machine: the machine's shared
 * PostgreSQL and Redis serve other people's tests.
 */

/** A backend the soak can freeze and thaw: every process of it stops at once, connections stay open. */
export interface PrivateBackend {
  name: string
  /** The process group of the server (PostgreSQL: the postmaster, whose backends are sessions of their own). */
  pgid: number
  freeze(): void
  thaw(): void
  stop(): Promise<void>
}

function groupSignals(child: ChildProcess): Pick<PrivateBackend, 'freeze' | 'thaw'> & { kill(signal: NodeJS.Signals): void } {
  const kill = (signal: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, signal)
    } catch {
      // already gone
    }
  }
  return { freeze: () => kill('SIGSTOP'), thaw: () => kill('SIGCONT'), kill }
}

async function stopGroup(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = once(child, 'exit')
  const { kill } = groupSignals(child)
  kill('SIGCONT')
  kill(signal)
  const quit = await Promise.race([exited.then(() => true), sleep(10_000, false, { ref: false })])
  if (!quit) {
    kill('SIGKILL')
    await exited
  }
}

/** Binaries of the newest PostgreSQL installed under /usr/lib/postgresql. */
async function postgresBinDir(): Promise<string> {
  const versions = (await fs.readdir('/usr/lib/postgresql')).filter((name) => /^[0-9]+$/.test(name)).sort((a, b) => Number(b) - Number(a))
  if (versions.length === 0) throw new Error('no PostgreSQL under /usr/lib/postgresql')
  return path.join('/usr/lib/postgresql', versions[0]!, 'bin')
}

/** The uid and gid of `name` in /etc/passwd: PostgreSQL refuses to run as root. */
async function userIds(name: string): Promise<{ uid: number; gid: number } | undefined> {
  const line = (await fs.readFile('/etc/passwd', 'utf8')).split('\n').find((entry) => entry.startsWith(`${name}:`))
  if (!line) return undefined
  const [, , uid, gid] = line.split(':')
  return { uid: Number(uid), gid: Number(gid) }
}

export interface PrivatePostgres extends PrivateBackend {
  port: number
  /** postgres://postgres@127.0.0.1:<port>/<database> */
  url: string
  /** Client connections to the soak's database, the asking one left out (pg_stat_activity). */
  connections(): Promise<number>
}

/**
 * A throw-away PostgreSQL cluster (initdb into a temp folder, trust authentication, loopback only)
 * with `database` created in it. As root it runs as the user postgres.
 */
export async function startPrivatePostgres(database: string): Promise<PrivatePostgres> {
  const bin = await postgresBinDir()
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fileshare-soak-pg-'))
  const as = process.getuid?.() === 0 ? await userIds('postgres') : undefined
  if (process.getuid?.() === 0 && !as) throw new Error('running as root, and there is no user postgres to run PostgreSQL as')
  if (as) await fs.chown(dir, as.uid, as.gid)
  const dataDir = path.join(dir, 'data')
  const initdb = spawn(path.join(bin, 'initdb'), ['-D', dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync'], {
    ...as,
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let initdbErrors = ''
  initdb.stderr!.on('data', (text: Buffer) => (initdbErrors += text.toString()))
  const [code] = (await once(initdb, 'exit')) as [number | null]
  if (code !== 0) throw new Error(`initdb exited with code ${code}: ${initdbErrors}`)
  const port = await freePort()
  const child = spawn(
    path.join(bin, 'postgres'),
    ['-D', dataDir, '-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=100'],
    // A process group of its own: SIGSTOP to the group freezes the postmaster and every backend.
    { ...as, detached: true, stdio: ['ignore', 'ignore', 'ignore'] },
  )
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`
  await eventually(
    `PostgreSQL on port ${port}`,
    async () => {
      const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1_000 })
      client.on('error', () => {})
      try {
        await client.connect()
        await client.query('select 1')
        return true
      } catch {
        return undefined
      } finally {
        await client.end().catch(() => {})
      }
    },
    30_000,
    200,
  )
  await query(url, `create database ${database}`)
  const databaseUrl = `postgres://postgres@127.0.0.1:${port}/${database}`
  // Each backend of PostgreSQL is a session of its own (setsid), outside the postmaster's process
  // group: the postmaster is stopped first (no new backend then), then every child it has.
  const postmaster = child.pid!
  const signalAll = (signal: NodeJS.Signals) => {
    const pids = [postmaster, ...childrenOf(postmaster)]
    for (const pid of pids) {
      try {
        process.kill(pid, signal)
      } catch {
        // gone meanwhile
      }
    }
  }
  return {
    name: 'PostgreSQL',
    pgid: postmaster,
    port,
    url: databaseUrl,
    freeze: () => signalAll('SIGSTOP'),
    thaw: () => signalAll('SIGCONT'),
    async connections() {
      const rows = await query<{ count: number }>(
        databaseUrl,
        `select count(*)::int as count from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`,
      )
      return rows[0]!.count
    },
    async stop() {
      // SIGINT: PostgreSQL's fast shutdown, once every backend runs again to take its part.
      signalAll('SIGCONT')
      await stopGroup(child, 'SIGINT')
      await fs.rm(dir, { recursive: true, force: true })
    },
  }
}

/** The pids of a process's children (Linux: /proc/PID/task/PID/children). */
function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number)
  } catch {
    return []
  }
}

async function query<T>(url: string, text: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 })
  client.on('error', () => {})
  await client.connect()
  try {
    return (await client.query(text)).rows as T[]
  } finally {
    await client.end()
  }
}

export interface PrivateRedis extends PrivateBackend {
  url: string
  /** Client connections, the asking one left out (CLIENT LIST). */
  connections(): Promise<number>
}

/** redis-server on a free loopback port, nothing written to disk. */
export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort()
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fileshare-soak-redis-'))
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--daemonize', 'no'],
    { detached: true, stdio: ['ignore', 'ignore', 'ignore'] },
  )
  const url = `redis://127.0.0.1:${port}`
  const withClient = async <T>(run: (redis: Redis) => Promise<T>): Promise<T> => {
    const redis = new Redis(url, { lazyConnect: true, connectTimeout: 2_000, maxRetriesPerRequest: 0, retryStrategy: () => null })
    redis.on('error', () => {})
    try {
      await redis.connect()
      return await run(redis)
    } finally {
      redis.disconnect()
    }
  }
  await eventually(`Redis on port ${port}`, () => withClient((redis) => redis.ping()).catch(() => undefined), 15_000, 100)
  const signals = groupSignals(child)
  return {
    name: 'Redis',
    pgid: child.pid!,
    url,
    freeze: signals.freeze,
    thaw: signals.thaw,
    async connections() {
      const list = await withClient((redis) => redis.client('LIST') as Promise<string>)
      return (
        list
          .trim()
          .split('\n')
          .filter((line) => line.includes('addr=')).length - 1
      )
    },
    async stop() {
      await stopGroup(child, 'SIGTERM')
      await fs.rm(dir, { recursive: true, force: true })
    },
  }
}

export interface PrivateS3 extends PrivateBackend {
  endpoint: string
  bucket: string
}

/** s3rver (with the test suite's fixes) in a process of its own: bench/s3rver-process.ts. */
export async function startPrivateS3(bucket: string): Promise<PrivateS3> {
  const child = spawn(process.execPath, tsScriptArgs('s3rver-process.ts').concat(bucket), {
    detached: true,
    stdio: ['pipe', 'pipe', 'inherit'],
  })
  let output = ''
  child.stdout!.setEncoding('utf8')
  const { endpoint } = await new Promise<{ endpoint: string }>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`s3rver exited with code ${code} before it listened`)))
    child.stdout!.on('data', (text: string) => {
      output += text
      const line = output.split('\n').find((candidate) => candidate.startsWith('{'))
      if (line && output.includes('\n')) resolve(JSON.parse(line) as { endpoint: string })
    })
  })
  const signals = groupSignals(child)
  return {
    name: 'S3 (s3rver)',
    pgid: child.pid!,
    endpoint,
    bucket,
    freeze: signals.freeze,
    thaw: signals.thaw,
    async stop() {
      // SIGTERM: it closes and removes its folder.
      await stopGroup(child, 'SIGTERM')
    },
  }
}
