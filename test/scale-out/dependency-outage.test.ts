import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ERROR_REGISTRY } from '../../src/errors.js'
import type { App } from '../../src/app.js'
import { S3RVER_CREDENTIALS, type TestS3rver } from '../helpers/scale-out-env.js'
import { scaleOutReachable, startProxiedScaleOut, type ProxiedScaleOut } from '../helpers/proxied-scale-out.js'
import { bearer, fileForm } from '../helpers/test-app.js'

const reachable = await scaleOutReachable('test/scale-out/dependency-outage.test.ts')

type Dependency = 'database' | 'storage' | 'redis'
const BACKEND_TIMEOUT_MS = 1_000

/**
 * Each dependency of the scale-out stack sits behind a TCP proxy that the test cuts: requests that
 * need it get a clean 503, the rest keep working, and the service recovers on its own when the
 * dependency is back.
 */
describe.skipIf(!reachable)('scale-out: a dependency that goes away and comes back', () => {
  let stack: ProxiedScaleOut<Dependency>
  let s3: TestS3rver
  let proxies: ProxiedScaleOut<Dependency>['proxies']
  let app: App
  let api: string
  let apiKey: string
  const content = 'bytes that must survive every outage'
  let publicLink: string

  beforeAll(async () => {
    // Every dependency through a proxy that the test can cut.
    stack = await startProxiedScaleOut({
      name: 'outage',
      proxied: ['database', 'storage', 'redis'],
      env: {
        FILESHARE_LOG_LEVEL: 'silent',
        FILESHARE_CACHE_TTL_MS: '0',
        // A stalled dependency answers 503 after this long.
        FILESHARE_BACKEND_TIMEOUT_MS: String(BACKEND_TIMEOUT_MS),
      },
    })
    ;({ app, api, s3, proxies } = stack)
    ;({ apiKey } = await app.services.accounts.create('outage@example.test', 'pro'))
    const uploaded = await upload()
    expect(uploaded.status).toBe(201)
    publicLink = ((await uploaded.json()) as { public_link: string }).public_link
  })

  afterAll(async () => {
    await stack?.close()
  })

  const upload = () => fetch(`${api}/files/upload`, { method: 'POST', headers: bearer(apiKey), body: fileForm(content, 'kept.txt') })
  /** The public link on this server (links carry the configured public URL). */
  const download = () => fetch(`${api.replace('/api/v1', '')}${new URL(publicLink).pathname}`)
  const listFiles = () => fetch(`${api}/files`, { headers: bearer(apiKey) })
  const readyz = () => fetch(`${api.replace('/api/v1', '')}/readyz`)

  async function expectUnavailable(response: Response) {
    expect(response.status).toBe(503)
    expect(response.headers.get('retry-after')).toBe('5')
    expect(await response.json()).toEqual({
      success: false,
      error: { code: 'service_unavailable', message: ERROR_REGISTRY.service_unavailable.message, request_id: expect.any(String) },
    })
  }

  async function expectNotReady(down: Dependency) {
    const response = await readyz()
    expect(response.status).toBe(503)
    const body = (await response.json()) as { checks: Record<string, string> }
    expect(body.checks).toEqual({ database: 'ok', storage: 'ok', redis: 'ok', [down]: 'unavailable' })
  }

  /** Polls /readyz: the service must recover by itself, without a restart. */
  async function waitUntilReady() {
    for (let attempt = 0; attempt < 100; attempt++) {
      if ((await readyz()).status === 200) return
      await sleep(100)
    }
    throw new Error('the service did not recover within 10 s')
  }

  async function expectWorking() {
    await waitUntilReady()
    const listed = await listFiles()
    expect(listed.status).toBe(200)
    expect(((await listed.json()) as { pagination: { total: number } }).pagination.total).toBeGreaterThanOrEqual(1)
    const downloaded = await download()
    expect(downloaded.status).toBe(200)
    expect(await downloaded.text()).toBe(content)
  }

  async function storedObjectCount() {
    const { Contents = [] } = await listObjects()
    return Contents.length
  }
  async function listObjects() {
    const { ListObjectsV2Command, S3Client } = await import('@aws-sdk/client-s3')
    const client = new S3Client({ endpoint: s3.endpoint, forcePathStyle: true, region: 'us-east-1', credentials: S3RVER_CREDENTIALS })
    try {
      return await client.send(new ListObjectsV2Command({ Bucket: s3.bucket }))
    } finally {
      client.destroy()
    }
  }

  it('database: requests that need it answer 503, /readyz names it, and the service recovers', async () => {
    const objectsBefore = await storedObjectCount()
    await proxies.database.cut()
    await expectNotReady('database')
    await expectUnavailable(await listFiles())
    await expectUnavailable(await upload())
    await expectUnavailable(await download())
    expect((await fetch(`${api.replace('/api/v1', '')}/healthz`)).status).toBe(200)
    // The refused upload stored nothing.
    expect(await storedObjectCount()).toBe(objectsBefore)
    await proxies.database.restore()
    await expectWorking()
  })

  it('redis: requests that need a rate limit answer 503, and the service recovers', async () => {
    await proxies.redis.cut()
    await expectNotReady('redis')
    await expectUnavailable(await listFiles())
    await expectUnavailable(await download())
    await proxies.redis.restore()
    await expectWorking()
  })

  it('a database that stalls instead of refusing: requests that need it answer 503 within the backend timeout, and the service recovers', async () => {
    const objectsBefore = await storedObjectCount()
    proxies.database.freeze()
    try {
      await expectNotReady('database')
      for (const request of [listFiles, upload, download]) {
        const started = Date.now()
        await expectUnavailable(await request())
        // A query on a pooled connection, or a new connection, each waits at most the timeout.
        expect(Date.now() - started).toBeLessThan(3 * BACKEND_TIMEOUT_MS)
      }
    } finally {
      proxies.database.thaw()
    }
    await expectWorking()
    expect(await storedObjectCount()).toBe(objectsBefore)
  })

  it('a Redis that stalls instead of refusing: requests that need a rate limit answer 503 within the backend timeout, and the service recovers', async () => {
    proxies.redis.freeze()
    try {
      await expectNotReady('redis')
      for (const request of [listFiles, download]) {
        const started = Date.now()
        await expectUnavailable(await request())
        expect(Date.now() - started).toBeLessThan(3 * BACKEND_TIMEOUT_MS)
      }
    } finally {
      proxies.redis.thaw()
    }
    await expectWorking()
  })

  it('storage: uploads and downloads answer 503, metadata keeps working, nothing is counted, and the service recovers', async () => {
    const statsBefore = await (await fetch(`${api}/stats`, { headers: bearer(apiKey) })).json()
    await proxies.storage.cut()
    await expectNotReady('storage')
    await expectUnavailable(await upload())
    await expectUnavailable(await download())
    // Listing and statistics need only the database.
    expect((await listFiles()).status).toBe(200)
    const statsDuring = await fetch(`${api}/stats`, { headers: bearer(apiKey) })
    expect(statsDuring.status).toBe(200)
    // The failed upload took no daily slot and added no file.
    expect(await statsDuring.json()).toEqual(statsBefore)
    await proxies.storage.restore()
    await expectWorking()
    expect((await upload()).status).toBe(201)
  })
})
