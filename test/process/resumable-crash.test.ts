import { createHash, randomBytes } from 'node:crypto'
import fs from 'node:fs/promises'
import http from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, it, type ExpectStatic } from 'vitest'
import { runCommand } from '../helpers/cli.js'
import {
  cleanRedisPrefix,
  createPgSchema,
  dropPgSchema,
  isPostgresReachable,
  isRedisReachable,
  newRedisPrefix,
  scaleOutEnv,
  startS3rver,
} from '../helpers/scale-out-env.js'
import { eventually, SERVER, startServerProcess, stopServerProcess, type ServerProcess } from '../helpers/server-process.js'
import { makeTempDir } from '../helpers/test-app.js'

/**
 * kill -9 of a real server process in the middle of a resumable upload's PATCH, then a restart on
 * the same data: HEAD answers a committed offset (no more than was sent, no less than was committed
 * before the kill), the client resumes from it and completes, and the file is the whole file,
 * byte for byte, with the sha256 of the whole file. On both stacks: SQLite + folder, and
 * PostgreSQL + S3 (s3rver) + Redis when they answer.
 *
 * The server that is killed runs test/process/fixtures/short-lease-server.mjs: the compiled app
 * with a writer's lease of 1.5 s instead of production's 15 s, which the dead process's lease
 * would otherwise make the resumed PATCH wait out (production has no setting for it). The server
 * that takes over is the production entry point, dist/server.js, with its default timing.
 */

const MiB = 1024 * 1024
const FIXTURE = fileURLToPath(new URL('./fixtures/short-lease-server.mjs', import.meta.url))
const SHORT_LEASE = JSON.stringify({ leaseMs: 1_500, heartbeatMs: 300 })
const BASE_ENV = { FILESHARE_LOG_LEVEL: 'warn', FILESHARE_PUBLIC_URL: 'http://files.example.test', FILESHARE_GC_INTERVAL_MS: '0' }

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex')
const TUS = { 'tus-resumable': '1.0.0' }

const [postgresReachable, redisReachable] = await Promise.all([isPostgresReachable(), isRedisReachable()])
if (!postgresReachable || !redisReachable)
  console.warn('test/process/resumable-crash.test.ts: no PostgreSQL or Redis, the scale-out case is SKIPPED.')

const cleanups: Array<() => Promise<unknown>> = []
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {})
})

interface Stack {
  env: Record<string, string>
  /** Bytes one PATCH takes before the store's first commit inside it: folder 64 MiB, S3 one part (5 MiB). */
  commitEvery: number
}

/**
 * Runs the whole scenario on `stack`: upload created, a PATCH that streams fast past the first
 * commit point then trickles, kill -9 once HEAD shows that commit, restart, HEAD, resume, complete.
 */
async function crashAndResume(expect: ExpectStatic, stack: Stack): Promise<{ resumedAfterMs: number; locked: number }> {
  const length = stack.commitEvery + 4 * MiB
  const content = randomBytes(length)
  const dataDir = await makeTempDir('fileshare-resumable-crash-')
  cleanups.push(() => fs.rm(dataDir, { recursive: true, force: true }))
  const env = { ...BASE_ENV, ...stack.env }

  expect(await runCommand(['migrate'], { FILESHARE_DATA_DIR: dataDir, ...env })).toMatchObject({ code: 0 })
  // Enterprise: HEAD polls every 50 ms until the first commit, which a loaded machine takes seconds
  // to reach; pro's 50 requests a minute answered 429 there.
  const created = await runCommand(['account', 'create', '--email', 'crash@example.test', '--plan', 'enterprise', '--json'], {
    FILESHARE_DATA_DIR: dataDir,
    ...env,
  })
  expect(created, 'fileshare account create').toMatchObject({ code: 0, stderr: '' })
  const auth = { authorization: `Bearer ${(JSON.parse(created.stdout) as { api_key: string }).api_key}` }

  const start = async (command?: string[], extra: Record<string, string> = {}) => {
    const server = await startServerProcess({ dataDir, env: { ...env, ...extra }, ...(command ? { command } : {}) })
    cleanups.push(() => stopServerProcess(server))
    return server
  }
  const head = async (server: ServerProcess, id: string) => {
    const response = await fetch(`${server.api}/uploads/${id}`, { method: 'HEAD', headers: { ...TUS, ...auth } })
    expect(response.status).toBe(200)
    return Number(response.headers.get('upload-offset'))
  }

  // The first life: the server that will be killed.
  const doomed = await start([FIXTURE], { TEST_RESUMABLE_TIMING: SHORT_LEASE })
  const creation = await fetch(`${doomed.api}/uploads`, {
    method: 'POST',
    headers: { ...TUS, ...auth, 'upload-length': String(length), 'upload-metadata': `filename ${btoa('crash.bin')}` },
  })
  expect(creation.status).toBe(201)
  const id = creation.headers.get('location')!.split('/').at(-1)!

  // One PATCH for the whole file: the first commit point goes out fast, then the rest trickles.
  let sent = 0
  let killed = false
  const request = http.request(`${doomed.api}/uploads/${id}`, {
    method: 'PATCH',
    headers: { ...TUS, ...auth, 'content-type': 'application/offset+octet-stream', 'upload-offset': '0', 'content-length': String(length) },
  })
  const outcome = new Promise<string>((resolve) => {
    request.on('response', (response) => resolve(`answered ${response.statusCode}`))
    request.on('error', (error) => resolve(`cut: ${error.message}`))
  })
  const write = async (bytes: Buffer) => {
    if (killed || request.destroyed) return
    sent += bytes.length
    if (!request.write(bytes)) await Promise.race([new Promise((drained) => request.once('drain', drained)), outcome])
  }
  const feeding = (async () => {
    const fast = stack.commitEvery + MiB
    for (let at = 0; at < fast; at += MiB) await write(content.subarray(at, at + MiB))
    for (let at = fast; at < length && !killed; at += 64 * 1024) {
      await write(content.subarray(at, at + 64 * 1024))
      await sleep(50)
    }
  })()
  // The kill comes once the server has committed inside this PATCH (HEAD reads the committed offset).
  const committedBeforeKill = await eventually(
    'a commit inside the PATCH',
    async () => {
      const offset = await head(doomed, id)
      return offset > 0 ? offset : undefined
    },
    10_000,
    50,
  )
  await sleep(200) // some uncommitted bytes on the way too
  killed = true
  expect(await stopServerProcess(doomed)).toEqual({ code: null, signal: 'SIGKILL' })
  await feeding
  expect(await outcome).toMatch(/^cut: /)
  const sentBeforeKill = sent
  expect(committedBeforeKill).toBeGreaterThanOrEqual(stack.commitEvery)
  expect(sentBeforeKill).toBeLessThan(length)

  // The second life: the production entry point on the same data.
  const server = await start()
  const offset = await head(server, id)
  expect(offset, 'a committed offset, not one that went back').toBeGreaterThanOrEqual(committedBeforeKill)
  expect(offset, 'no more than the client sent').toBeLessThanOrEqual(sentBeforeKill)

  // Resume as a tus client does: PATCH from the offset; on 423 (the dead process's lease is still
  // in the row) or 409, ask HEAD again and retry.
  const resumedAt = Date.now()
  let locked = 0
  let from = offset
  let completing: Response
  for (let attempt = 1; ; attempt++) {
    completing = await fetch(`${server.api}/uploads/${id}`, {
      method: 'PATCH',
      headers: { ...TUS, ...auth, 'content-type': 'application/offset+octet-stream', 'upload-offset': String(from) },
      body: content.subarray(from),
    })
    if (completing.status === 204 || attempt === 20 || ![409, 423].includes(completing.status)) break
    if (completing.status === 423) locked++
    await completing.arrayBuffer()
    await sleep(250)
    from = await head(server, id)
  }
  expect(completing.status, await completing.clone().text()).toBe(204)
  const resumedAfterMs = Date.now() - resumedAt
  expect(Number(completing.headers.get('upload-offset'))).toBe(length)
  const fileId = completing.headers.get('fileshare-file-id')

  // The file: the whole file's sha256, and its public link serves it byte for byte.
  const details = await fetch(`${server.api}/files/${fileId}`, { headers: auth })
  expect(details.status).toBe(200)
  const { file } = (await details.json()) as { file: { size: number; sha256: string; public_link: string } }
  expect(file).toMatchObject({ size: length, sha256: sha256(content) })
  const download = await fetch(`${server.url}${new URL(file.public_link).pathname}`)
  expect(download.status).toBe(200)
  expect(Buffer.from(await download.arrayBuffer()).equals(content)).toBe(true)
  await stopServerProcess(server, { signal: 'SIGTERM' })
  return { resumedAfterMs, locked }
}

// The two stacks run at the same time: most of each is waiting for a process to start.
describe.concurrent('kill -9 in the middle of a resumable upload, then restart on the same data', () => {
  it('embedded stack (SQLite + folder): HEAD answers a committed offset and the upload resumes to the whole file', async ({ expect }) => {
    await fs.access(SERVER).catch(() => {
      throw new Error(`${SERVER} is missing: run \`npm run build\` first (npm test does).`)
    })
    // The folder store commits every 64 MiB within a PATCH (and at its end, or when the client is cut).
    const { resumedAfterMs } = await crashAndResume(expect, { env: {}, commitEvery: 64 * MiB })
    // The dead process's lease (1.5 s here) is all the resumed PATCH waited for.
    expect(resumedAfterMs).toBeLessThan(8_000)
  })

  it.skipIf(!postgresReachable || !redisReachable)(
    'scale-out stack (PostgreSQL + S3 + Redis): the same, across a part committed before the kill',
    async ({ expect }) => {
      const [schema, s3] = await Promise.all([createPgSchema(), startS3rver('fileshare-resumable-crash')])
      const redisPrefix = newRedisPrefix('resumable-crash')
      cleanups.push(() => Promise.all([dropPgSchema(schema), s3.close(), cleanRedisPrefix(redisPrefix)]))
      const env = scaleOutEnv({ schema, bucket: s3.bucket, s3Endpoint: s3.endpoint, redisPrefix })
      // S3 commits every part (FILESHARE_S3_PART_SIZE, 5 MiB here).
      const { resumedAfterMs } = await crashAndResume(expect, { env, commitEvery: 5 * MiB })
      expect(resumedAfterMs).toBeLessThan(8_000)
      expect(await s3.multipartUploadsInProgress()).toEqual([])
    },
  )
})
