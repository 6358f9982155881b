import fs from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import { buildApp, type App, type BuildOptions } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import {
  cleanRedisPrefix,
  createPgSchema,
  dropPgSchema,
  isPostgresReachable,
  isRedisReachable,
  newRedisPrefix,
  PG_URL,
  REDIS_URL,
  S3RVER_CREDENTIALS,
  scaleOutEnv,
  startS3rver,
  type TestS3rver,
} from './scale-out-env.js'
import { startTcpProxy, type TcpProxy } from './tcp-proxy.js'
import { makeTempDir } from './test-app.js'

/** A dependency of the scale-out stack that a test can put behind a TCP proxy, to cut or freeze it. */
export type ProxiedDependency = 'database' | 'storage' | 'redis'

/** Whether PostgreSQL and Redis answer; warns (naming `testFile`) when they do not, and its tests are skipped. */
export async function scaleOutReachable(testFile: string): Promise<boolean> {
  const [postgres, redis] = await Promise.all([isPostgresReachable(), isRedisReachable()])
  if (!postgres || !redis) console.warn(`SKIPPING ${testFile}: PostgreSQL or Redis does not answer.`)
  return postgres && redis
}

export interface ProxiedScaleOut<D extends ProxiedDependency> {
  app: App
  /** http://127.0.0.1:PORT/api/v1 */
  api: string
  /** The S3 server itself (not the proxy in front of it), for looking at the bucket directly. */
  s3: TestS3rver
  proxies: Record<D, TcpProxy>
  /** Closes the app, the proxies and the S3 server, and drops the schema, the Redis keys and the data folder. */
  close(): Promise<void>
}

/**
 * The real app on the scale-out stack (PostgreSQL in a schema of its own, a fresh S3 bucket, Redis
 * under a prefix of its own), with the dependencies in `proxied` reached through TCP proxies the
 * test can cut or freeze, listening on a loopback port. `env` adds FILESHARE_* variables. What was
 * started is closed again if a later step fails.
 */
export async function startProxiedScaleOut<D extends ProxiedDependency>(options: {
  /** Names the bucket and the Redis prefix. */
  name: string
  proxied: readonly D[]
  env: Record<string, string>
  logStream?: BuildOptions['logStream']
}): Promise<ProxiedScaleOut<D>> {
  const cleanups: Array<() => Promise<unknown>> = []
  const close = async () => {
    for (const cleanup of cleanups.reverse()) await cleanup()
  }
  try {
    process.env.AWS_ACCESS_KEY_ID ??= S3RVER_CREDENTIALS.accessKeyId
    process.env.AWS_SECRET_ACCESS_KEY ??= S3RVER_CREDENTIALS.secretAccessKey
    const [s3, schema] = await Promise.all([startS3rver(`fileshare-${options.name}`), createPgSchema()])
    const redisPrefix = newRedisPrefix(options.name)
    cleanups.push(() => Promise.all([s3.close(), dropPgSchema(schema), cleanRedisPrefix(redisPrefix)]))
    const dataDir = await makeTempDir()
    cleanups.push(() => fs.rm(dataDir, { recursive: true, force: true }))

    const targets: Record<ProxiedDependency, string> = { database: PG_URL, storage: s3.endpoint, redis: REDIS_URL }
    const proxies = {} as Record<D, TcpProxy>
    const through = { ...targets }
    for (const dependency of options.proxied) {
      const target = new URL(targets[dependency])
      const proxy = await startTcpProxy(Number(target.port))
      cleanups.push(() => proxy.close())
      proxies[dependency] = proxy
      target.port = String(proxy.port)
      through[dependency] = target.href
    }
    const config = loadConfig({
      FILESHARE_DATA_DIR: dataDir,
      ...scaleOutEnv({
        schema,
        bucket: s3.bucket,
        s3Endpoint: through.storage.replace(/\/$/, ''),
        databaseUrl: through.database,
        redisUrl: through.redis.replace(/\/$/, ''),
        redisPrefix,
      }),
      ...options.env,
    })
    const app = await buildApp(config, options.logStream ? { logStream: options.logStream } : {})
    cleanups.push(() => app.close())
    await app.listen({ port: 0, host: '127.0.0.1' })
    const api = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/api/v1`
    return { app, api, s3, proxies, close }
  } catch (error) {
    await close()
    throw error
  }
}
