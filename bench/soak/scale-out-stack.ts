import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { startNginx, type Nginx } from '../../test/helpers/nginx.js'
import { scaleOutEnv } from '../../test/helpers/scale-out-env.js'
import { freePort, runCli, spawnServer, stopServerProcess, waitForHealth, type SpawnedProcess } from '../../test/helpers/server-process.js'
import { serverArgs } from '../spawn-server.js'
import {
  startPrivatePostgres,
  startPrivateRedis,
  startPrivateS3,
  type PrivatePostgres,
  type PrivateRedis,
  type PrivateS3,
} from './private-backends.js'

/*
 * The scale-out stack of docs/scale-out.md on one machine: PostgreSQL, Redis and s3rver of the soak's
 * own, two server instances started as `npm start` starts them, and Debian's nginx in front with the
 * sample configuration the deployment ships (test/helpers/nginx.ts reads it from the docs; the
 * deployment's deploy/nginx/fileshare.conf is checked against the same sample).
 */

export const BACKEND_TIMEOUT_MS = 5_000

export interface Instance {
  name: string
  port: number
  url: string
  logFile: string
  process: SpawnedProcess
  pid: number
}

export interface ScaleOutStack {
  postgres: PrivatePostgres
  redis: PrivateRedis
  s3: PrivateS3
  nginx: Nginx
  instances: Instance[]
  /** Settings of the instances and of the CLI calls that prepare their data. */
  env: Record<string, string>
  workDir: string
  /** Starts (or restarts, on its port and data folder) the named instance and waits until it is ready. */
  startInstance(name: string): Promise<Instance>
  /** kill -9 of the named instance. */
  killInstance(name: string): Promise<void>
  /** SIGTERM to each instance; their exit codes. */
  stopInstances(): Promise<Array<number | null>>
  close(): Promise<void>
}

export async function startScaleOutStack(options: { plans: Record<string, unknown>; logLevel: string }): Promise<ScaleOutStack> {
  const workDir = await fs.mkdtemp(path.join(os.tmpdir(), 'fileshare-soak-scale-out-'))
  const opened: Array<() => Promise<void>> = []
  const closeAll = async () => {
    for (const close of opened.splice(0).reverse()) await close().catch(() => {})
  }
  try {
    const postgres = await startPrivatePostgres('soak_chaos')
    opened.push(() => postgres.stop())
    const redis = await startPrivateRedis()
    opened.push(() => redis.stop())
    const s3 = await startPrivateS3('fileshare-soak')
    opened.push(() => s3.stop())

    const ports = { a: await freePort(), b: await freePort() }
    const nginx = await startNginx([`127.0.0.1:${ports.a}`, `127.0.0.1:${ports.b}`])
    opened.push(() => nginx.stop())

    const env: Record<string, string> = {
      ...scaleOutEnv({
        schema: 'public',
        bucket: s3.bucket,
        s3Endpoint: s3.endpoint,
        databaseUrl: postgres.url,
        redisUrl: redis.url,
        redisPrefix: 'fileshare-soak:',
      }),
      HOST: '127.0.0.1',
      FILESHARE_PUBLIC_URL: nginx.url,
      FILESHARE_TRUST_PROXY: 'true',
      FILESHARE_LOG_LEVEL: options.logLevel,
      FILESHARE_BACKEND_TIMEOUT_MS: String(BACKEND_TIMEOUT_MS),
      // Rate limits are tested elsewhere; here they would only throttle the load.
      FILESHARE_PLANS: JSON.stringify(options.plans),
      FILESHARE_DOWNLOADS_PER_MINUTE: '1000000000',
    }
    const migrated = await runCli(['migrate'], { ...env, FILESHARE_DATA_DIR: path.join(workDir, 'cli') })
    if (migrated.code !== 0) throw new Error(`fileshare migrate exited with code ${migrated.code}: ${migrated.stderr}`)

    const instances = new Map<string, Instance>()
    const startInstance = async (name: string): Promise<Instance> => {
      const port = name === 'A' ? ports.a : ports.b
      const dataDir = path.join(workDir, `instance-${name}`)
      await fs.mkdir(dataDir, { recursive: true })
      const logFile = path.join(workDir, `instance-${name}.log`)
      const spawned = spawnServer({ ...env, PORT: String(port), FILESHARE_DATA_DIR: dataDir }, serverArgs(), { logFile })
      const url = `http://127.0.0.1:${port}`
      await waitForHealth(spawned, `${url}/readyz`, { timeoutMs: 30_000 })
      const instance = { name, port, url, logFile, process: spawned, pid: spawned.child.pid! }
      instances.set(name, instance)
      return instance
    }
    await Promise.all([startInstance('A'), startInstance('B')])
    opened.push(async () => {
      for (const instance of instances.values()) await stopServerProcess(instance.process)
    })

    return {
      postgres,
      redis,
      s3,
      nginx,
      get instances() {
        return [...instances.values()]
      },
      env,
      workDir,
      startInstance,
      async killInstance(name) {
        const instance = instances.get(name)!
        instance.process.child.kill('SIGKILL')
        await instance.process.exited
      },
      async stopInstances() {
        const exits = await Promise.all(
          [...instances.values()].map((instance) => stopServerProcess(instance.process, { signal: 'SIGTERM', timeoutMs: 45_000 })),
        )
        return exits.map((exit) => exit.code)
      },
      close: closeAll,
    }
  } catch (error) {
    await closeAll()
    throw error
  }
}
