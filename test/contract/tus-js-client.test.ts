import { createHash, randomBytes } from 'node:crypto'
import * as tus from 'tus-js-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bearer, startTestApp, type TestApp } from '../helpers/test-app.js'

/**
 * The official tus client (tus-js-client's Node build, over node:http) against /api/v1/uploads on
 * this stack: an upload in several chunks, aborted midway, resumed from its URL by a new client,
 * completed into a file whose public link serves the exact bytes.
 */

const MiB = 1024 * 1024
const SIZE = 64 * MiB
const CHUNK_SIZE = 8 * MiB
/** The first client is aborted once this much has gone out: past a few chunks, well before the end. */
const ABORT_AFTER = 20 * MiB

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex')

describe('tus-js-client uploads, aborts, resumes and completes', () => {
  let t: TestApp
  let apiKey: string

  beforeAll(async () => {
    t = await startTestApp({}, { resumableTiming: { leaseMs: 2_000, heartbeatMs: 200, takeoverWaitMs: 1_000 } })
    ;({ apiKey } = await t.createAccount('pro'))
  })
  afterAll(async () => {
    await t?.close()
  })

  it(
    '64 MiB in 8 MiB chunks: abort midway, resume from the URL, and the public link serves the exact bytes',
    { timeout: 60_000 },
    async () => {
      const content = randomBytes(SIZE)
      const localHash = sha256(content)
      const answers: string[] = []
      let fileId: string | undefined
      const options = {
        endpoint: `${t.api}/uploads`,
        chunkSize: CHUNK_SIZE,
        headers: { Authorization: `Bearer ${apiKey}` },
        metadata: { filename: 'random.bin', filetype: 'application/octet-stream' },
        // A 409 or 423 while the aborted chunk is still being committed on the server: ask again (HEAD, then PATCH).
        retryDelays: [0, 100, 300, 1_000, 2_000],
        // Every answer, so that a failure a retry papered over (a 500, then HEAD at the full offset) still shows.
        onAfterResponse: (request: tus.HttpRequest, response: tus.HttpResponse) => {
          answers.push(`${request.getMethod()} ${response.getStatus()}`)
          fileId = response.getHeader('Fileshare-File-Id') ?? fileId
        },
      }

      // The first client: created, some chunks acknowledged, then aborted in the middle of a chunk.
      const first = new tus.Upload(content, options)
      let sentBeforeAbort = 0
      let acknowledgedBeforeAbort = 0
      const aborted = new Promise<void>((resolve, reject) => {
        first.options.onChunkComplete = (_chunkSize, accepted) => void (acknowledgedBeforeAbort = accepted)
        first.options.onProgress = (sent) => {
          if (sent < ABORT_AFTER || sentBeforeAbort > 0) return
          sentBeforeAbort = sent
          first.abort().then(resolve, reject)
        }
        first.options.onSuccess = () => reject(new Error('the first client completed although it was aborted'))
        first.options.onError = reject
      })
      first.start()
      await aborted
      expect(first.url).toMatch(/\/api\/v1\/uploads\/[A-Za-z0-9_-]+$/)
      expect(acknowledgedBeforeAbort).toBeGreaterThanOrEqual(CHUNK_SIZE)
      expect(acknowledgedBeforeAbort).toBeLessThan(SIZE)

      // Where the server stands: a committed offset, at least what was acknowledged, short of the end.
      const uploadUrl = first.url!
      const status = await fetch(uploadUrl, { headers: bearer(apiKey) })
      expect(status.status).toBe(200)
      const { upload: standing } = (await status.json()) as { upload: { offset: number; length: number; file: unknown } }
      expect(standing).toMatchObject({ length: SIZE, file: null })
      expect(standing.offset).toBeGreaterThanOrEqual(acknowledgedBeforeAbort)
      expect(standing.offset).toBeLessThan(SIZE)

      // A new client resumes from the URL alone: HEAD for the offset, then the rest.
      let resumedFrom: number | undefined
      const answersBeforeResume = answers.length
      const second = new tus.Upload(content, { ...options, uploadUrl })
      await new Promise<void>((resolve, reject) => {
        second.options.onProgress = (sent) => void (resumedFrom ??= sent)
        second.options.onSuccess = () => resolve()
        second.options.onError = reject
        second.start()
      })
      expect(second.url).toBe(uploadUrl)
      // It did not start over: the first bytes it sent came after what the first client had stored.
      expect(resumedFrom).toBeGreaterThanOrEqual(standing.offset)
      expect(fileId).toMatch(/^[0-9]+$/)
      // No server error on the way, and the resumed client did not create a new upload.
      expect(answers.filter((answer) => !/ (2\d\d|409|423)$/.test(answer))).toEqual([])
      expect(answers.slice(answersBeforeResume).filter((answer) => answer.startsWith('POST'))).toEqual([])
      // The chunk that completed the upload was answered 204 with the file's id (not repaired by a later HEAD).
      expect(answers.at(-1)).toBe('PATCH 204')

      // The file: its sha256 is the local hash, and its public link serves the exact bytes.
      const details = await fetch(`${t.api}/files/${fileId}`, { headers: bearer(apiKey) })
      expect(details.status).toBe(200)
      const { file } = (await details.json()) as { file: { size: number; sha256: string; public_link: string } }
      expect(file).toMatchObject({ size: SIZE, sha256: localHash })
      const download = await fetch(`${t.url}${new URL(file.public_link).pathname}`)
      expect(download.status).toBe(200)
      const served = Buffer.from(await download.arrayBuffer())
      expect(served.length).toBe(SIZE)
      expect(sha256(served)).toBe(localHash)
      expect(served.equals(content)).toBe(true)

      // Nothing of the upload is left half-written in the store.
      expect(await t.unfinishedWrites()).toEqual([])
    },
  )
})
