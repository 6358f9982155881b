import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DeleteResponse, DetailResponse, ListResponse, StatsResponse, UploadResponse } from '../../src/http/schemas.js'
import { bearer, startTestApp, type TestApp } from '../helpers/test-app.js'
import { expectDocumented, fromInject } from '../helpers/documented-responses.js'
import { sha256Hex as sha256 } from '../../src/lib/sha256-hex.js'

/**
 * Model-based: random accounts run random sequences of API operations, and after every step each
 * answer must agree with a model in which accounts share nothing. Any file id, from any account,
 * live or deleted, is a valid probe: another account's file must look exactly like one that does
 * not exist (404 not_found, never 403), must never appear in a list or count, and must never be
 * deleted by anyone but its owner.
 */

interface ModelFile {
  id: number
  owner: number
  content: Buffer
  link: string
}

type Target = { kind: 'any-known'; pick: number } | { kind: 'raw'; id: number }

type Op =
  | { type: 'upload'; who: number; key: number; content: Uint8Array }
  | { type: 'list'; who: number; key: number; page: number; limit: number }
  | { type: 'get'; who: number; key: number; target: Target }
  | { type: 'delete'; who: number; key: number; target: Target }
  | { type: 'download-seen-links'; who: number; key: number }
  | { type: 'stats'; who: number; key: number }

const target: fc.Arbitrary<Target> = fc.oneof(
  { weight: 4, arbitrary: fc.nat().map((pick) => ({ kind: 'any-known' as const, pick })) },
  fc.integer({ min: 1, max: 100_000 }).map((id) => ({ kind: 'raw' as const, id })),
)
const who = { who: fc.nat({ max: 3 }), key: fc.nat({ max: 1 }) }
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ type: fc.constant('upload' as const), ...who, content: fc.uint8Array({ maxLength: 64 }) }) },
  fc.record({ type: fc.constant('list' as const), ...who, page: fc.integer({ min: 1, max: 4 }), limit: fc.integer({ min: 1, max: 5 }) }),
  { weight: 2, arbitrary: fc.record({ type: fc.constant('get' as const), ...who, target }) },
  { weight: 2, arbitrary: fc.record({ type: fc.constant('delete' as const), ...who, target }) },
  fc.record({ type: fc.constant('download-seen-links' as const), ...who }),
  fc.record({ type: fc.constant('stats' as const), ...who }),
)

function uploadBody(content: Uint8Array): { payload: Buffer; headers: Record<string, string> } {
  const boundary = 'isolation-boundary-0f9e'
  const payload = Buffer.concat([
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="f.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
    ),
    Buffer.from(content),
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ])
  return { payload, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } }
}

describe('account isolation (model-based)', () => {
  let t: TestApp
  /** Every file ever created in this app, by any run and any account, live or deleted. */
  const everyFile: ModelFile[] = []

  beforeAll(async () => {
    t = await startTestApp({ FILESHARE_DOWNLOADS_PER_MINUTE: '100000000' })
  })
  afterAll(async () => {
    await t?.close()
  })

  const roomy = { requests_per_minute: 100_000_000, requests_per_day: 100_000_000, daily_uploads: 100_000_000 }

  it('no account can read, list, download, delete or count another account’s files', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 2, max: 4 }), fc.array(op, { minLength: 1, maxLength: 25 }), async (accountCount, ops) => {
        // Fresh accounts for each run, with two keys each; earlier runs' files stay as probes.
        const accounts: { accountId: number; keys: string[] }[] = []
        for (let i = 0; i < accountCount; i++) {
          const { accountId, apiKey } = await t.createAccount('pro')
          await t.app.services.accounts.setLimits(accountId, roomy)
          const second = await t.app.services.apiKeys.create(accountId, 'second')
          accounts.push({ accountId, keys: [apiKey, second.apiKey] })
        }
        /** The model: live files per account index. */
        const live = new Map<number, ModelFile[]>(accounts.map((_, index) => [index, []]))
        /** Public links each account has been shown through the API. */
        const seenLinks = new Map<number, Set<string>>(accounts.map((_, index) => [index, new Set()]))
        const ownerOf = (id: number) => [...live.entries()].find(([, files]) => files.some((file) => file.id === id))?.[0]
        const request = async (me: number, key: number, options: Record<string, unknown>) =>
          fromInject(await t.app.inject({ ...options, headers: { ...(options.headers as object), ...bearer(accounts[me]!.keys[key]!) } }))
        const resolve = (chosen: Target) =>
          chosen.kind === 'raw' ? chosen.id : everyFile.length === 0 ? 1 : everyFile[chosen.pick % everyFile.length]!.id

        for (const step of ops) {
          const me = step.who % accountCount
          const mine = live.get(me)!
          const what = `${JSON.stringify({ ...step, content: undefined })} as account #${me}`
          switch (step.type) {
            case 'upload': {
              const { payload, headers } = uploadBody(step.content)
              const response = await request(me, step.key, { method: 'POST', url: '/api/v1/files/upload', payload, headers })
              expect(response.status, what).toBe(201)
              const body = expectDocumented(response, what, { success: UploadResponse }).json as { file_id: number; public_link: string }
              const file = { id: body.file_id, owner: me, content: Buffer.from(step.content), link: body.public_link }
              mine.push(file)
              everyFile.push(file)
              seenLinks.get(me)!.add(body.public_link)
              break
            }
            case 'list': {
              const response = await request(me, step.key, { url: `/api/v1/files?page=${step.page}&limit=${step.limit}` })
              const body = expectDocumented(response, what, { success: ListResponse }).json as {
                files: { file_id: number; public_link: string }[]
                pagination: { total: number }
              }
              expect(body.pagination.total, what).toBe(mine.length)
              // Newest first: the model's files in reverse order of upload, this page of them.
              const expected = [...mine].reverse().slice((step.page - 1) * step.limit, step.page * step.limit)
              expect(
                body.files.map((file) => file.file_id),
                what,
              ).toEqual(expected.map((file) => file.id))
              for (const file of body.files) seenLinks.get(me)!.add(file.public_link)
              break
            }
            case 'get': {
              const id = resolve(step.target)
              const response = await request(me, step.key, { url: `/api/v1/files/${id}` })
              const { code, json } = expectDocumented(response, `${what} id ${id}`, { success: DetailResponse })
              const own = mine.find((file) => file.id === id)
              if (own) {
                expect(response.status, what).toBe(200)
                const file = (json as { file: { file_id: number; size: number; sha256: string; public_link: string } }).file
                expect(file, what).toMatchObject({
                  file_id: id,
                  size: own.content.length,
                  sha256: sha256(own.content),
                  public_link: own.link,
                })
                seenLinks.get(me)!.add(file.public_link)
              } else {
                expect(code, `${what} id ${id} (owner ${String(ownerOf(id))})`).toBe('not_found')
              }
              break
            }
            case 'delete': {
              const id = resolve(step.target)
              const response = await request(me, step.key, { method: 'DELETE', url: `/api/v1/files/${id}` })
              const { code } = expectDocumented(response, `${what} id ${id}`, { success: DeleteResponse })
              const index = mine.findIndex((file) => file.id === id)
              if (index >= 0) {
                expect(response.status, what).toBe(200)
                mine.splice(index, 1)
              } else {
                expect(code, `${what} id ${id} (owner ${String(ownerOf(id))})`).toBe('not_found')
              }
              break
            }
            case 'download-seen-links': {
              // Every link the API ever showed this account leads to one of its own files (or to a
              // 404 once it deleted that file): never to another account's bytes.
              for (const link of seenLinks.get(me)!) {
                const response = await t.app.inject({ url: new URL(link).pathname })
                const own = mine.find((file) => file.link === link)
                const everOwn = everyFile.find((file) => file.link === link)
                expect(everOwn?.owner, `${what}: link ${link} was shown to its owner only`).toBe(me)
                expect(everyFile.filter((file) => file.link === link).length).toBe(1)
                if (own) {
                  expect(response.statusCode, what).toBe(200)
                  expect(response.rawPayload.equals(own.content), what).toBe(true)
                } else {
                  expect(response.statusCode, what).toBe(404)
                }
              }
              break
            }
            case 'stats': {
              const response = await request(me, step.key, { url: '/api/v1/stats' })
              const body = expectDocumented(response, what, { success: StatsResponse }).json as {
                stats: { total_files: number; total_size: number }
              }
              expect(body.stats.total_files, what).toBe(mine.length)
              expect(body.stats.total_size, what).toBe(mine.reduce((sum, file) => sum + file.content.length, 0))
              break
            }
          }
        }

        // In the end every account, through either key, sees exactly its own live files.
        for (const [index, account] of accounts.entries()) {
          for (const key of account.keys) {
            const response = fromInject(await t.app.inject({ url: '/api/v1/files?limit=100', headers: bearer(key) }))
            const body = expectDocumented(response, `final list of #${index}`, { success: ListResponse }).json as {
              files: { file_id: number }[]
            }
            expect(body.files.map((file) => file.file_id).sort((a, b) => a - b)).toEqual(
              live
                .get(index)!
                .map((file) => file.id)
                .sort((a, b) => a - b),
            )
          }
        }
      }),
      { numRuns: 40 },
    )
  })
})
