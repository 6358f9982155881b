import { createHash, randomBytes } from 'node:crypto'
import fs from 'node:fs/promises'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp, type App } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import {
  cleanRedisPrefix,
  createPgSchema,
  dropPgSchema,
  isPostgresReachable,
  isRedisReachable,
  newRedisPrefix,
  S3RVER_CREDENTIALS,
  scaleOutEnv,
  startS3rver,
  type TestS3rver,
} from '../helpers/scale-out-env.js'
import { bearer, makeTempDir, TEST_PASSWORD_HASH_COST } from '../helpers/test-app.js'

/**
 * Resumable uploads (tus) on several instances sharing PostgreSQL, S3 (s3rver) and Redis, as behind
 * a load balancer: any instance takes the next chunk, and two chunks sent at once to one upload on
 * two instances never interleave (one is refused or hands over; the stored bytes are one chunk's).
 */

const MiB = 1024 * 1024
const BUCKET = 'fileshare-resumable'
const PUBLIC_URL = 'http://files.example.test'
/** Short leases, so that hand-overs happen within the test's time. */
const TIMING = { leaseMs: 1_500, heartbeatMs: 100, takeoverWaitMs: 1_500 }

const [postgresReachable, redisReachable] = await Promise.all([isPostgresReachable(), isRedisReachable()])
const backendsReachable = postgresReachable && redisReachable
if (!backendsReachable) console.warn('SKIPPING test/scale-out/resumable-uploads.test.ts: PostgreSQL or Redis does not answer.')

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex')
const TUS = { 'tus-resumable': '1.0.0' }

interface Instance {
  name: string
  app: App
  url: string
  api: string
}

interface Answer {
  status: number
  headers: http.IncomingHttpHeaders
  body: string
}

/**
 * A PATCH whose body goes out in `piece`-sized writes `delayMs` apart, over node:http so that an
 * answer the server sends before the body is through (a hand-over, a refusal) is still read.
 */
function slowPatch(url: string, apiKey: string, offset: number, body: Buffer, piece: number, delayMs: number): Promise<Answer> {
  return new Promise((resolve, reject) => {
    let answered = false
    const request = http.request(url, {
      method: 'PATCH',
      headers: {
        ...TUS,
        ...bearer(apiKey),
        'content-type': 'application/offset+octet-stream',
        'upload-offset': String(offset),
        'content-length': String(body.length),
      },
    })
    request.on('response', (response) => {
      answered = true
      let text = ''
      response.setEncoding('utf8')
      response.on('data', (data: string) => (text += data))
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body: text }))
      response.on('error', reject)
    })
    request.on('error', (error) => {
      if (!answered) reject(error)
    })
    void (async () => {
      for (let at = 0; at < body.length && !answered && !request.destroyed; at += piece) {
        const more = request.write(body.subarray(at, at + piece))
        if (!more) await new Promise((drained) => request.once('drain', drained))
        await sleep(delayMs)
      }
      // Answered early: the rest of the body is not wanted (the server closes the connection).
      if (answered) request.destroy()
      else request.end()
    })().catch(reject)
  })
}

describe.skipIf(!backendsReachable)('resumable uploads on two instances sharing PostgreSQL, S3 and Redis', () => {
  let schema: string
  let s3: TestS3rver
  let redisPrefix: string
  const dataDirs: string[] = []
  const instances: Instance[] = []
  let a: Instance
  let b: Instance
  let apiKey: string

  async function startInstance(name: string): Promise<Instance> {
    const dataDir = await makeTempDir(`fileshare-resumable-${name}-`)
    dataDirs.push(dataDir)
    const config = loadConfig({
      FILESHARE_DATA_DIR: dataDir,
      FILESHARE_LOG_LEVEL: 'silent',
      FILESHARE_PUBLIC_URL: PUBLIC_URL,
      FILESHARE_CACHE_TTL_MS: '0',
      FILESHARE_GC_INTERVAL_MS: '0',
      ...scaleOutEnv({ schema, bucket: BUCKET, s3Endpoint: s3.endpoint, redisPrefix }),
    })
    const app = await buildApp(config, { resumableTiming: TIMING, passwordHashCost: TEST_PASSWORD_HASH_COST })
    await app.listen({ port: 0, host: '127.0.0.1' })
    const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
    const instance = { name, app, url, api: `${url}/api/v1` }
    instances.push(instance)
    return instance
  }

  beforeAll(async () => {
    process.env.AWS_ACCESS_KEY_ID ??= S3RVER_CREDENTIALS.accessKeyId
    process.env.AWS_SECRET_ACCESS_KEY ??= S3RVER_CREDENTIALS.secretAccessKey
    ;[schema, s3] = await Promise.all([createPgSchema(), startS3rver(BUCKET)])
    redisPrefix = newRedisPrefix('resumable')
    // One after the other: the first migrates the schema.
    a = await startInstance('a')
    b = await startInstance('b')
    ;({ apiKey } = await a.app.services.accounts.create('resumable@example.test', 'pro'))
  })

  afterAll(async () => {
    for (const instance of instances) instance.app.server.closeAllConnections()
    await Promise.allSettled(instances.map((instance) => instance.app.close()))
    await Promise.allSettled([
      schema && dropPgSchema(schema),
      s3?.close(),
      redisPrefix && cleanRedisPrefix(redisPrefix),
      ...dataDirs.map((dir) => fs.rm(dir, { recursive: true, force: true })),
    ])
  })

  async function create(instance: Instance, length: number): Promise<string> {
    const response = await fetch(`${instance.api}/uploads`, {
      method: 'POST',
      headers: { ...TUS, ...bearer(apiKey), 'upload-length': String(length), 'upload-metadata': `filename ${btoa('data.bin')}` },
    })
    expect(response.status).toBe(201)
    return new URL(response.headers.get('location')!, instance.url).pathname.split('/').at(-1)!
  }

  async function head(instance: Instance, id: string): Promise<number> {
    const response = await fetch(`${instance.api}/uploads/${id}`, { method: 'HEAD', headers: { ...TUS, ...bearer(apiKey) } })
    expect(response.status).toBe(200)
    return Number(response.headers.get('upload-offset'))
  }

  function patch(instance: Instance, id: string, offset: number, bytes: Uint8Array) {
    return fetch(`${instance.api}/uploads/${id}`, {
      method: 'PATCH',
      headers: { ...TUS, ...bearer(apiKey), 'content-type': 'application/offset+octet-stream', 'upload-offset': String(offset) },
      body: bytes,
    })
  }

  /** The completed upload's file, seen from `instance`: its record and the bytes its public link serves there. */
  async function fileOf(instance: Instance, fileId: string) {
    const details = await fetch(`${instance.api}/files/${fileId}`, { headers: bearer(apiKey) })
    expect(details.status).toBe(200)
    const { file } = (await details.json()) as { file: { size: number; sha256: string; public_link: string } }
    const download = await fetch(`${instance.url}${new URL(file.public_link).pathname}`)
    expect(download.status).toBe(200)
    return { file, bytes: Buffer.from(await download.arrayBuffer()) }
  }

  it('an upload created on A takes its chunks on B and A in turn, across S3 part boundaries, and completes right', async () => {
    // Chunk sizes that do not line up with the 5 MiB parts: tails are carried from one instance to the other.
    const sizes = [3 * MiB, 4 * MiB + 17, 6 * MiB, 1, 2 * MiB - 1, 3 * MiB + 5]
    const content = randomBytes(sizes.reduce((sum, size) => sum + size, 0))
    const id = await create(a, content.length)
    let offset = 0
    let fileId: string | null = null
    for (const [index, size] of sizes.entries()) {
      const writer = index % 2 === 0 ? b : a
      const reader = writer === a ? b : a
      const response = await patch(writer, id, offset, content.subarray(offset, offset + size))
      expect(response.status, `chunk ${index} on ${writer.name}`).toBe(204)
      offset += size
      expect(Number(response.headers.get('upload-offset'))).toBe(offset)
      fileId = response.headers.get('fileshare-file-id')
      // The other instance sees the same offset at once.
      expect(await head(reader, id), `offset on ${reader.name} after chunk ${index}`).toBe(offset)
    }
    expect(fileId).toMatch(/^[0-9]+$/)
    for (const instance of [a, b]) {
      const { file, bytes } = await fileOf(instance, fileId!)
      expect(file).toMatchObject({ size: content.length, sha256: sha256(content) })
      expect(bytes.equals(content), `bytes served by ${instance.name}`).toBe(true)
    }
    expect(await s3.multipartUploadsInProgress()).toEqual([])
  })

  it(
    'two PATCHes at once to one upload on two instances never interleave: the stored bytes are one chunk’s',
    { timeout: 30_000 },
    async () => {
      const base = randomBytes(2 * MiB)
      // Two clients' versions of the next chunk, both over a part size: parts are uploaded during the race.
      const versions = [randomBytes(6 * MiB), randomBytes(6 * MiB)]
      const tail = randomBytes(MiB)
      const length = base.length + versions[0]!.length + tail.length
      const rounds = [
        { name: 'together', staggerMs: 0 },
        { name: 'B while A streams', staggerMs: 250 },
        // A has uploaded a part (5 MiB) by then: the hand-over keeps it and commits what follows as the tail.
        { name: 'B once A is past a part', staggerMs: 900 },
      ]
      for (const round of rounds) {
        const id = await create(a, length)
        expect((await patch(a, id, 0, base)).status).toBe(204)
        // Each version streams for about a second; the second starts while the first is under way.
        const first = slowPatch(`${a.api}/uploads/${id}`, apiKey, base.length, versions[0]!, 256 * 1024, 40)
        await sleep(round.staggerMs)
        const second = slowPatch(`${b.api}/uploads/${id}`, apiKey, base.length, versions[1]!, 256 * 1024, 40)
        const answers = await Promise.all([first, second])
        const statuses = answers.map((answer) => answer.status)
        for (const status of statuses) expect([204, 409, 423], `${round.name}: ${JSON.stringify(answers)}`).toContain(status)
        // Never both accepted.
        expect(statuses.filter((status) => status === 204).length, round.name).toBeLessThanOrEqual(1)

        // Where the upload stands, on either instance: a prefix of one version, which the client then completes.
        const offset = await head(b, id)
        expect(await head(a, id)).toBe(offset)
        expect(offset).toBeGreaterThanOrEqual(base.length)
        expect(offset).toBeLessThanOrEqual(base.length + versions[0]!.length)
        const accepted = statuses.indexOf(204)
        if (accepted >= 0)
          expect(offset, `${round.name}: the accepted chunk is stored whole`).toBe(base.length + versions[accepted]!.length)
        const rest = randomBytes(length - offset)
        const completing = await patch(b, id, offset, rest)
        expect(completing.status).toBe(204)
        const fileId = completing.headers.get('fileshare-file-id')!

        const { file, bytes } = await fileOf(a, fileId)
        expect(bytes.length).toBe(length)
        expect(file.sha256).toBe(sha256(bytes))
        const raced = bytes.subarray(base.length, offset)
        const from = versions.map((version) => raced.equals(version.subarray(0, raced.length)))
        // One consistent sequence: the base, a prefix of one version (the accepted one, if any), then the rest.
        expect(bytes.subarray(0, base.length).equals(base)).toBe(true)
        expect(from.includes(true), `${round.name}: the ${raced.length} raced bytes are a prefix of one version`).toBe(true)
        if (accepted >= 0 && raced.length > 0) expect(from[accepted], `${round.name}: they are the accepted version's`).toBe(true)
        expect(bytes.subarray(offset).equals(rest)).toBe(true)
        expect(file.sha256).toBe(sha256(Buffer.concat([base, raced, rest])))
      }
      expect(await s3.multipartUploadsInProgress()).toEqual([])
    },
  )
})
