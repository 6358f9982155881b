import { randomBytes } from 'node:crypto'
import { createReadStream } from 'node:fs'
import fs from 'node:fs/promises'
import { createRequire } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import { Redis } from 'ioredis'
import pg from 'pg'

/** The scale-out backends of the test machine (see docs/development.md): PostgreSQL with trust auth, and Redis. */
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
  /** The request's body stream (Node's IncomingMessage). */
  req: NodeJS.ReadableStream
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

// s3rver ships no types; the few members used here are typed above. Loaded on first use (a
// quarter of a second): most test files that import this module never start one.
const loadS3rver = () => createRequire(import.meta.url)('s3rver') as S3rverConstructor

export interface TestS3rver {
  /** http://127.0.0.1:<port>; use path-style addressing. */
  endpoint: string
  bucket: string
  /** The folder s3rver keeps the bucket in. */
  directory: string
  /** Ids of the multipart uploads that were started and neither completed nor aborted. */
  multipartUploadsInProgress(): Promise<string[]>
  /** Back-dates a multipart upload: its start (Initiated) and, if given, the time of its stored parts. */
  backdateMultipartUpload(uploadId: string, initiated: Date, partsWritten?: Date): Promise<void>
  close(): Promise<void>
}

const NO_SUCH_UPLOAD_XML =
  '<?xml version="1.0" encoding="UTF-8"?>\n' +
  '<Error><Code>NoSuchUpload</Code><Message>The specified upload does not exist.</Message></Error>'

const escapeXml = (text: string) => text.replace(/[<>&'"]/g, (c) => `&#${c.charCodeAt(0)};`)
const queryString = (value: string | string[] | undefined) => (typeof value === 'string' ? value : '')
const pageSize = (value: string | string[] | undefined) => Math.min(Number(queryString(value)) || 1000, 1000)

/** ListMultipartUploads over s3rver's uploads folder (one folder per upload, holding a `key` file). */
async function listMultipartUploadsXml(uploadsDir: string, bucket: string, query: KoaContext['query']): Promise<string> {
  const prefix = queryString(query.prefix)
  const keyMarker = queryString(query['key-marker'])
  const uploadIdMarker = queryString(query['upload-id-marker'])
  const uploads: Array<{ key: string; uploadId: string; initiated: Date }> = []
  for (const uploadId of await fs.readdir(uploadsDir).catch(() => [])) {
    const keyFile = path.join(uploadsDir, uploadId, 'key')
    // An upload completed or aborted meanwhile is simply not listed.
    const [key, stat] = await Promise.all([fs.readFile(keyFile, 'utf8'), fs.stat(keyFile)]).catch(() => [])
    if (key === undefined || stat === undefined || !key.startsWith(prefix)) continue
    if (key < keyMarker || (key === keyMarker && (!uploadIdMarker || uploadId <= uploadIdMarker))) continue
    uploads.push({ key, uploadId, initiated: stat.mtime })
  }
  uploads.sort((a, b) => (a.key === b.key ? (a.uploadId < b.uploadId ? -1 : 1) : a.key < b.key ? -1 : 1))
  const max = pageSize(query['max-uploads'])
  const page = uploads.slice(0, max)
  const truncated = uploads.length > max
  const last = page.at(-1)
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n<ListMultipartUploadsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">' +
    `<Bucket>${escapeXml(bucket)}</Bucket><KeyMarker>${escapeXml(keyMarker)}</KeyMarker>` +
    `<UploadIdMarker>${escapeXml(uploadIdMarker)}</UploadIdMarker><Prefix>${escapeXml(prefix)}</Prefix>` +
    (truncated && last
      ? `<NextKeyMarker>${escapeXml(last.key)}</NextKeyMarker><NextUploadIdMarker>${last.uploadId}</NextUploadIdMarker>`
      : '') +
    `<MaxUploads>${max}</MaxUploads><IsTruncated>${truncated}</IsTruncated>` +
    page
      .map(
        (upload) =>
          `<Upload><Key>${escapeXml(upload.key)}</Key><UploadId>${upload.uploadId}</UploadId>` +
          `<Initiated>${upload.initiated.toISOString()}</Initiated><StorageClass>STANDARD</StorageClass></Upload>`,
      )
      .join('') +
    '</ListMultipartUploadsResult>'
  )
}

/** ListParts over one upload's folder of s3rver (parts are files named by their number, with a `.md5`). */
async function listPartsXml(folder: string, bucket: string, key: string, uploadId: string, query: KoaContext['query']): Promise<string> {
  const marker = Number(queryString(query['part-number-marker'])) || 0
  const parts: Array<{ number: number; size: number; lastModified: Date; etag: string }> = []
  for (const name of await fs.readdir(folder)) {
    if (!/^[1-9][0-9]*$/.test(name) || Number(name) <= marker) continue
    const [stat, md5] = await Promise.all([fs.stat(path.join(folder, name)), fs.readFile(path.join(folder, `${name}.md5`), 'utf8')]).catch(
      () => [],
    )
    // A part still being written has no .md5 yet: S3 lists only stored parts.
    if (stat === undefined || md5 === undefined) continue
    parts.push({ number: Number(name), size: stat.size, lastModified: stat.mtime, etag: md5 })
  }
  parts.sort((a, b) => a.number - b.number)
  const max = pageSize(query['max-parts'])
  const page = parts.slice(0, max)
  const truncated = parts.length > max
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n<ListPartsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">' +
    `<Bucket>${escapeXml(bucket)}</Bucket><Key>${escapeXml(key)}</Key><UploadId>${uploadId}</UploadId>` +
    `<PartNumberMarker>${marker}</PartNumberMarker><NextPartNumberMarker>${page.at(-1)?.number ?? marker}</NextPartNumberMarker>` +
    `<MaxParts>${max}</MaxParts><IsTruncated>${truncated}</IsTruncated>` +
    page
      .map(
        (part) =>
          `<Part><PartNumber>${part.number}</PartNumber><LastModified>${part.lastModified.toISOString()}</LastModified>` +
          `<ETag>"${part.etag}"</ETag><Size>${part.size}</Size></Part>`,
      )
      .join('') +
    '</ListPartsResult>'
  )
}

/**
 * Starts s3rver on a free loopback port with `bucket` created, in a temp folder of its own.
 *
 * s3rver 3.7 refuses AbortMultipartUpload (MethodNotAllowed) and ListMultipartUploads
 * (NotImplemented), so an aborted upload would stay in its folder forever. The server gets
 * AbortMultipartUpload here as S3 does it: the upload and its parts are gone (204), and an
 * unknown upload id is NoSuchUpload (404). multipartUploadsInProgress() reads the folder.
 *
 * It also answers ListMultipartUploads (NotImplemented) and ListParts (MethodNotAllowed) from that
 * folder, as S3 does: an upload's Initiated is when it was created, a part's LastModified when it
 * was stored, and both honour the prefix, markers and page sizes.
 *
 * CompleteMultipartUpload of an upload id that is gone is NoSuchUpload (404), as on S3: s3rver
 * answers 500. (A completion whose answer was lost, and that s3rver carried out, is retried.) So is
 * UploadPart into it, which s3rver takes (making the upload's folder anew, which fails the completion).
 *
 * s3rver 3.7 also reads `Range: bytes=0-0` as `bytes=0-` (an end of 0 counts as absent) and sends
 * the whole object; here it sends the first byte, as S3 does.
 */
export async function startS3rver(bucket: string): Promise<TestS3rver> {
  const directory = await fs.mkdtemp(path.join(os.tmpdir(), 'fileshare-s3rver-'))
  const S3rver = loadS3rver()
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
    // The SDK asks for bucket operations on `/<bucket>/`.
    const [bucketName, ...keyPath] = ctx.path.split('/').filter((segment) => segment !== '')
    if (ctx.method !== 'GET' || bucketName !== bucket) return next()
    if (keyPath.length === 0 && ctx.query.uploads !== undefined) {
      ctx.type = 'application/xml'
      ctx.body = await listMultipartUploadsXml(uploadsDir, bucket, ctx.query)
      return
    }
    const uploadId = ctx.query.uploadId
    if (keyPath.length === 0 || typeof uploadId !== 'string') return next()
    const folder = path.join(uploadsDir, uploadId)
    if (
      !/^[A-Za-z0-9_-]+$/.test(uploadId) ||
      !(await fs.stat(folder).then(
        () => true,
        () => false,
      ))
    ) {
      ctx.status = 404
      ctx.type = 'application/xml'
      ctx.body = NO_SUCH_UPLOAD_XML
      return
    }
    ctx.type = 'application/xml'
    ctx.body = await listPartsXml(folder, bucket, decodeURIComponent(keyPath.join('/')), uploadId, ctx.query)
  })
  server.middleware.unshift(async (ctx, next) => {
    // CompleteMultipartUpload of an upload that is gone (completed already, or aborted): S3 answers
    // NoSuchUpload (404), s3rver fails reading its folder (500 InternalError).
    const uploadId = ctx.query.uploadId
    if (ctx.method !== 'POST' || typeof uploadId !== 'string' || ctx.path.split('/')[1] !== bucket) return next()
    const known =
      /^[A-Za-z0-9_-]+$/.test(uploadId) &&
      (await fs.stat(path.join(uploadsDir, uploadId)).then(
        () => true,
        () => false,
      ))
    if (known) return next()
    ctx.status = 404
    ctx.type = 'application/xml'
    ctx.body = NO_SUCH_UPLOAD_XML
  })
  server.middleware.unshift(async (ctx, next) => {
    // UploadPart into an upload that is gone (completed already, or aborted): S3 answers NoSuchUpload
    // (404); s3rver makes the upload's folder anew for the part, and the completion that follows
    // fails reading the upload's key there (500 InternalError), retry after retry. (The chaos soak: a
    // completion carried out after a freeze, its answer lost, retried with its tail still there.)
    const uploadId = ctx.query.uploadId
    if (ctx.method !== 'PUT' || typeof uploadId !== 'string' || ctx.path.split('/')[1] !== bucket) return next()
    const known =
      /^[A-Za-z0-9_-]+$/.test(uploadId) &&
      (await fs.stat(path.join(uploadsDir, uploadId, 'key')).then(
        () => true,
        () => false,
      ))
    if (known) return next()
    ctx.req.resume()
    ctx.status = 404
    ctx.type = 'application/xml'
    ctx.body = NO_SUCH_UPLOAD_XML
  })
  server.middleware.unshift(async (ctx, next) => {
    const uploadId = ctx.query.uploadId
    if (ctx.method !== 'DELETE' || typeof uploadId !== 'string' || ctx.path.split('/')[1] !== bucket) return next()
    const folder = path.join(uploadsDir, uploadId)
    const known =
      /^[A-Za-z0-9_-]+$/.test(uploadId) &&
      (await fs.stat(folder).then(
        () => true,
        () => false,
      ))
    if (!known) {
      ctx.status = 404
      ctx.type = 'application/xml'
      ctx.body = NO_SUCH_UPLOAD_XML
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
    async backdateMultipartUpload(uploadId, initiated, partsWritten) {
      const folder = path.join(uploadsDir, uploadId)
      await fs.utimes(path.join(folder, 'key'), initiated, initiated)
      if (!partsWritten) return
      for (const name of await fs.readdir(folder)) {
        if (/^[0-9]+$/.test(name)) await fs.utimes(path.join(folder, name), partsWritten, partsWritten)
      }
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

/**
 * The FILESHARE_* variables of the scale-out stack (PostgreSQL schema, s3rver bucket, Redis prefix),
 * plus the s3rver credentials for a child process. Endpoints may point through a proxy (outage tests).
 */
export function scaleOutEnv(options: {
  schema: string
  bucket: string
  s3Endpoint: string
  redisPrefix?: string
  databaseUrl?: string
  redisUrl?: string
}): Record<string, string> {
  return {
    FILESHARE_DATABASE_URL: options.databaseUrl ?? PG_URL,
    FILESHARE_DATABASE_SCHEMA: options.schema,
    FILESHARE_STORAGE: 's3',
    FILESHARE_S3_BUCKET: options.bucket,
    FILESHARE_S3_ENDPOINT: options.s3Endpoint,
    FILESHARE_S3_REGION: 'us-east-1',
    FILESHARE_S3_FORCE_PATH_STYLE: 'true',
    // The smallest part size, so that a 6 MiB upload goes up as a multipart upload.
    FILESHARE_S3_PART_SIZE: String(5 * 1024 * 1024),
    ...(options.redisPrefix === undefined
      ? {}
      : { FILESHARE_REDIS_URL: options.redisUrl ?? REDIS_URL, FILESHARE_REDIS_PREFIX: options.redisPrefix }),
    AWS_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey,
    // On Node 20 the AWS SDK warns on stderr that its 2027 releases need Node 22 (docs/scale-out.md).
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  }
}
