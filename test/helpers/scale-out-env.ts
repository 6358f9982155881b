import { randomBytes } from 'node:crypto'
import { createReadStream } from 'node:fs'
import fs from 'node:fs/promises'
import { createRequire } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import { Redis } from 'ioredis'
import pg from 'pg'

/** The scale-out backends of the test machine (see README, Development): PostgreSQL with trust auth, and Redis. */
export const PG_URL = 'postgres://postgres@127.0.0.1:5432/test'
export const REDIS_URL = 'redis://127.0.0.1:6379'

/** Credentials s3rver accepts; the AWS SDK reads them like any others. */
export const S3RVER_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' }

const SCHEMA_PATTERN = /^t_[a-f0-9]{12}$/

async function withPgClient<T>(run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 3_000 })
  // A server that goes away mid-test must fail the query, not crash the worker.
  client.on('error', () => {})
  await client.connect()
  try {
    return await run(client)
  } finally {
    await client.end()
  }
}

let postgresReachable: Promise<boolean> | undefined
let redisReachable: Promise<boolean> | undefined

/** Whether PostgreSQL answers at PG_URL (asked once per test file). */
export function isPostgresReachable(): Promise<boolean> {
  postgresReachable ??= withPgClient((client) => client.query('select 1')).then(
    () => true,
    () => false,
  )
  return postgresReachable
}

/** Whether Redis answers at REDIS_URL (asked once per test file). */
export function isRedisReachable(): Promise<boolean> {
  redisReachable ??= (async () => {
    const redis = new Redis(REDIS_URL, { lazyConnect: true, connectTimeout: 3_000, maxRetriesPerRequest: 0, retryStrategy: () => null })
    redis.on('error', () => {})
    try {
      await redis.connect()
      return (await redis.ping()) === 'PONG'
    } catch {
      return false
    } finally {
      redis.disconnect()
    }
  })()
  return redisReachable
}

/** Creates an empty schema of its own (t_<random>) in the test database and returns its name. */
export async function createPgSchema(): Promise<string> {
  const name = `t_${randomBytes(6).toString('hex')}`
  await withPgClient((client) => client.query(`create schema ${name}`))
  return name
}

/** Drops a schema made by createPgSchema, with everything in it. */
export async function dropPgSchema(name: string): Promise<void> {
  // Only names createPgSchema hands out: a typo must never drop someone else's schema.
  if (!SCHEMA_PATTERN.test(name)) throw new Error(`not a test schema: ${name}`)
  await withPgClient((client) => client.query(`drop schema if exists ${name} cascade`))
}

/** Deletes every Redis key that starts with `prefix` (SCAN + DEL, never KEYS or FLUSHDB). */
export async function cleanRedisPrefix(prefix: string): Promise<void> {
  if (prefix.length < 8) throw new Error(`refusing to clean a prefix this short: "${prefix}"`)
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 })
  redis.on('error', () => {})
  await redis.connect()
  try {
    // SCAN MATCH treats * ? [ ] \ as patterns: escape them so the prefix is matched literally.
    const match = `${prefix.replace(/[*?[\]\\]/g, '\\$&')}*`
    let cursor = '0'
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', match, 'COUNT', 500)
      if (keys.length > 0) await redis.del(...keys)
      cursor = next
    } while (cursor !== '0')
  } finally {
    redis.disconnect()
  }
}

/** A fresh, unique Redis key prefix for one test. */
export function newRedisPrefix(label = 'test'): string {
  return `fileshare-${label}-${randomBytes(6).toString('hex')}:`
}

interface KoaContext {
  method: string
  path: string
  query: Record<string, string | string[] | undefined>
  status: number
  type: string
  body: unknown
}

interface S3rverObject {
  size: number
  content: NodeJS.ReadableStream & { destroy(): void }
  range?: { start: number; end: number }
}

interface S3rverStore {
  getResourcePath(bucket: string, key: string | undefined, resource: string): string
  getObject(bucket: string, key: string, options?: { start?: number; end?: number }): Promise<S3rverObject | null>
}

interface S3rverInstance {
  middleware: Array<(ctx: KoaContext, next: () => Promise<void>) => Promise<void>>
  store: S3rverStore
  httpServer?: { closeAllConnections(): void }
  run(): Promise<{ address: string; port: number }>
  close(callback: (error?: Error) => void): void
}

type S3rverConstructor = new (options: {
  port: number
  address: string
  silent: boolean
  directory: string
  configureBuckets: Array<{ name: string; configs: unknown[] }>
}) => S3rverInstance

// s3rver ships no types; the few members used here are typed above.
const S3rver = createRequire(import.meta.url)('s3rver') as S3rverConstructor

export interface TestS3rver {
  /** http://127.0.0.1:<port>; use path-style addressing. */
  endpoint: string
  bucket: string
  /** The folder s3rver keeps the bucket in. */
  directory: string
  /** Ids of the multipart uploads that were started and neither completed nor aborted. */
  multipartUploadsInProgress(): Promise<string[]>
  close(): Promise<void>
}

/**
 * Starts s3rver on a free loopback port with `bucket` created, in a temp folder of its own.
 *
 * s3rver 3.7 refuses AbortMultipartUpload (MethodNotAllowed) and ListMultipartUploads
 * (NotImplemented), so an aborted upload would stay in its folder forever. The server gets
 * AbortMultipartUpload here as S3 does it: the upload and its parts are gone (204), and an
 * unknown upload id is NoSuchUpload (404). multipartUploadsInProgress() reads the folder.
 *
 * s3rver 3.7 also reads `Range: bytes=0-0` as `bytes=0-` (an end of 0 counts as absent) and sends
 * the whole object; here it sends the first byte, as S3 does.
 */
export async function startS3rver(bucket: string): Promise<TestS3rver> {
  const directory = await fs.mkdtemp(path.join(os.tmpdir(), 'fileshare-s3rver-'))
  const server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory, configureBuckets: [{ name: bucket, configs: [] }] })
  const uploadsDir = server.store.getResourcePath(bucket, undefined, 'uploads')
  const { store } = server
  const getObject = store.getObject.bind(store)
  store.getObject = async (bucketName, key, options) => {
    const object = await getObject(bucketName, key, options)
    if (options?.end === 0 && object?.range && object.size > 0) {
      object.content.destroy()
      object.content = createReadStream(store.getResourcePath(bucketName, key, 'object'), { start: 0, end: 0 })
      object.range = { start: 0, end: 0 }
    }
    return object
  }
  server.middleware.unshift(async (ctx, next) => {
    const uploadId = ctx.query.uploadId
    if (ctx.method !== 'DELETE' || typeof uploadId !== 'string' || ctx.path.split('/')[1] !== bucket) return next()
    const folder = path.join(uploadsDir, uploadId)
    const known = /^[A-Za-z0-9_-]+$/.test(uploadId) && (await fs.stat(folder).then(() => true, () => false))
    if (!known) {
      ctx.status = 404
      ctx.type = 'application/xml'
      ctx.body =
        '<?xml version="1.0" encoding="UTF-8"?>\n' +
        '<Error><Code>NoSuchUpload</Code><Message>The specified upload does not exist.</Message></Error>'
      return
    }
    await fs.rm(folder, { recursive: true, force: true })
    ctx.status = 204
  })
  const { port } = await server.run()
  return {
    endpoint: `http://127.0.0.1:${port}`,
    bucket,
    directory,
    async multipartUploadsInProgress() {
      return fs.readdir(uploadsDir).catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return []
        throw error
      })
    },
    async close() {
      try {
        await new Promise<void>((resolve, reject) => {
          server.close((error) => (error ? reject(error) : resolve()))
          // Keep-alive sockets of clients that were not destroyed must not hold the close up.
          server.httpServer?.closeAllConnections()
        })
      } finally {
        await fs.rm(directory, { recursive: true, force: true })
      }
    },
  }
}
