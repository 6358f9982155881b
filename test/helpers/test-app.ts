import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import type { AddressInfo } from 'node:net'
import { buildApp, type App, type BuildOptions } from '../../src/app.js'
import { loadConfig, type Config } from '../../src/config.js'
import {
  cleanRedisPrefix,
  createPgSchema,
  dropPgSchema,
  newRedisPrefix,
  S3RVER_CREDENTIALS,
  scaleOutEnv,
  startS3rver,
} from './scale-out-env.js'
import { startNginx } from './nginx.js'

/**
 * Which stack the HTTP suite runs against: `embedded` (SQLite + folder + in-memory limits) or
 * `scale-out` (PostgreSQL + S3 on s3rver + Redis), chosen by the vitest project (vitest.config.ts).
 */
export const TEST_STACK: 'embedded' | 'scale-out' = process.env.FILESHARE_TEST_STACK === 'scale-out' ? 'scale-out' : 'embedded'

/**
 * What the HTTP suite speaks to: the app itself, or (`nginx`, the vitest project `behind-nginx`)
 * Debian's nginx configured with the sample of docs/scale-out.md in front of it (test/helpers/nginx.ts).
 * Behind nginx the app trusts X-Forwarded-For (FILESHARE_TRUST_PROXY=true), as the sample says to.
 */
export const TEST_FRONT: 'none' | 'nginx' = process.env.FILESHARE_TEST_FRONT === 'nginx' ? 'nginx' : 'none'

export interface TestApp {
  app: App
  config: Config
  /** http://127.0.0.1:<port>: the app's, or nginx's in front of it (TEST_FRONT) */
  url: string
  api: string
  dataDir: string
  /** Keys of every blob in the store, whichever store the stack uses. */
  storedBlobs(): Promise<string[]>
  /** What an interrupted write could leave behind: temp files (folder) or open multipart uploads (S3). */
  unfinishedWrites(): Promise<string[]>
  /** Moves the services' clock forward (expiry of keys and invitations) instead of sleeping. */
  advanceClock(ms: number): void
  /** Creates an account on `plan` and returns its id and a fresh API key. */
  createAccount(plan?: string, email?: string): Promise<{ accountId: number; apiKey: string }>
  close(): Promise<void>
}

/**
 * scrypt at 1/32 of production's cost for the passwords tests set (a few ms instead of 0.4 s each).
 * Production's cost is tested by the unit tests of lib/passwords.ts and the CLI's real processes.
 */
export const TEST_PASSWORD_HASH_COST = { N: 2 ** 10, r: 8, p: 1 }

let accountCounter = 0

export async function makeTempDir(prefix = 'fileshare-test-'): Promise<string> {
  return fs.mkdtemp(path.join(os.tmpdir(), prefix))
}

/**
 * Builds the real app on a fresh data folder and listens on a random loopback port, so that tests
 * speak real HTTP (streams, concurrency). `env` adds or overrides FILESHARE_* variables.
 */
export async function startTestApp(
  env: Record<string, string> = {},
  options: Pick<BuildOptions, 'resumableTiming' | 'logStream' | 'onRoute' | 'webhookDispatch' | 'scanning'> = {},
): Promise<TestApp> {
  const dataDir = await makeTempDir()
  const stack = TEST_STACK === 'scale-out' ? await startScaleOutBackends() : undefined
  const config = loadConfig({
    FILESHARE_DATA_DIR: dataDir,
    FILESHARE_LOG_LEVEL: 'silent',
    FILESHARE_PUBLIC_URL: 'http://files.example.test',
    FILESHARE_CACHE_TTL_MS: '0',
    ...(TEST_FRONT === 'nginx' && { FILESHARE_TRUST_PROXY: 'true' }),
    ...stack?.env,
    ...env,
  })
  let clockOffset = 0
  const app = await buildApp(config, { ...options, passwordHashCost: TEST_PASSWORD_HASH_COST, now: () => Date.now() + clockOffset })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as AddressInfo
  const front = TEST_FRONT === 'nginx' ? await startNginx([`127.0.0.1:${port}`]) : undefined
  const url = front?.url ?? `http://127.0.0.1:${port}`
  const tmpDir = path.join(dataDir, 'blobs', 'tmp')
  return {
    app,
    config,
    url,
    api: `${url}/api/v1`,
    dataDir,
    async storedBlobs() {
      const keys: string[] = []
      for await (const entry of app.blobStore.list()) keys.push(entry.key)
      return keys.sort()
    },
    async unfinishedWrites() {
      if (stack) return stack.s3.multipartUploadsInProgress()
      return fs.readdir(tmpDir).catch(() => [])
    },
    advanceClock(ms) {
      clockOffset += ms
    },
    async createAccount(plan = 'pro', email = `user${++accountCounter}-${Date.now()}@example.test`) {
      const { account, apiKey } = await app.services.accounts.create(email, plan)
      return { accountId: account.id, apiKey }
    },
    async close() {
      await front?.stop()
      // A response a test left unread (a large asset it only took the status of) keeps its
      // connection busy, and Fastify would wait for it until the idle timeout: cut it, as the
      // client would once it went away.
      app.server.closeAllConnections()
      await app.close()
      await stack?.close()
      await fs.rm(dataDir, { recursive: true, force: true })
    },
  }
}

/** A PostgreSQL schema, an s3rver bucket and a Redis key prefix of this test app's own. */
async function startScaleOutBackends() {
  process.env.AWS_ACCESS_KEY_ID ??= S3RVER_CREDENTIALS.accessKeyId
  process.env.AWS_SECRET_ACCESS_KEY ??= S3RVER_CREDENTIALS.secretAccessKey
  const schema = await createPgSchema()
  const s3 = await startS3rver('fileshare-test')
  const redisPrefix = newRedisPrefix('app')
  return {
    s3,
    env: scaleOutEnv({ schema, bucket: s3.bucket, s3Endpoint: s3.endpoint, redisPrefix }),
    async close() {
      await Promise.all([dropPgSchema(schema), s3.close(), cleanRedisPrefix(redisPrefix)])
    },
  }
}

/** A pro account whose request rate limits never get in the way of a test. */
export async function unlimitedAccount(t: TestApp): Promise<{ accountId: number; apiKey: string }> {
  const created = await t.createAccount('pro')
  await t.app.services.accounts.setLimits(created.accountId, { requests_per_minute: 100_000, requests_per_day: 100_000 })
  return created
}

export function bearer(apiKey: string): Record<string, string> {
  return { authorization: `Bearer ${apiKey}` }
}

/** A multipart body with one file part named `field` (default `file`). */
export function fileForm(content: string | Uint8Array, filename = 'hello.txt', field = 'file'): FormData {
  const form = new FormData()
  form.append(field, new Blob([content]), filename)
  return form
}

export async function uploadFile(t: TestApp, apiKey: string, content: string | Uint8Array = 'hello', filename = 'hello.txt') {
  const response = await fetch(`${t.api}/files/upload`, { method: 'POST', headers: bearer(apiKey), body: fileForm(content, filename) })
  return { response, body: (await response.json()) as Record<string, unknown> & { file_id: number; public_link: string } }
}
