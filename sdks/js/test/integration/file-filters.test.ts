// files.list() and files.iterate() with type and state against the real server, on an account of
// its own holding one file of each kind: the media types (top-level, exact, any case, several as
// any of), each state (an expiry; a used-up link, and a revoked one that does not count; a guest's
// upload through an upload request), the filters with q and a sort, iterate() sending them on
// every page, and the server's 400s.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BadRequestError, type FileRecord, type Fileshare, type ListOptions } from '../../src/index.js'
import { newAccount, recordingFetch, tempDir } from '../helpers/env.js'
import { guestUpload } from '../helpers/guest-upload.js'

const tmp = tempDir()
afterAll(() => tmp.remove())

let fs: Fileshare
/** Every URL the client asked for (its fetch records them). */
const asked: URL[] = []
const names = async (options: ListOptions) => (await fs.files.list(options)).files.map((f: FileRecord) => f.filename)

beforeAll(async () => {
  const account = await newAccount('filters', { fetch: recordingFetch(asked) })
  fs = account.client
  const bytes = new TextEncoder().encode('filter me\n')
  await fs.files.upload(bytes, { filename: 'photo.png' }) // image/png, no state
  await fs.files.upload(bytes, { filename: 'scan.jpg', expires_in: 86_400 }) // image/jpeg, expiring
  const report = await fs.files.upload(bytes, { filename: 'report.pdf' }) // application/pdf
  const once = await fs.links.create(report.file_id, { max_downloads: 1 })
  await fs.download(once, tmp.file('report.pdf')) // its link is used up: expired_links
  const notes = await fs.files.upload(bytes, { filename: 'notes.txt' }) // text/plain
  const revoked = await fs.links.create(notes.file_id, { max_downloads: 1 })
  await fs.links.delete(revoked.link_id) // revoked on purpose: not an expired link
  const request = await fs.uploadRequests.create({ label: 'filters', expires_in: 86_400 })
  expect((await guestUpload(request.url, bytes, 'guest.csv')).status).toBe(201) // text/csv, from_upload_request
})

describe('files.list() with type and state', () => {
  it('type: a top-level type, an exact type/subtype, any case; several are any of', async () => {
    expect(await names({ type: 'image' })).toEqual(['scan.jpg', 'photo.png'])
    expect(await names({ type: 'IMAGE/PNG' })).toEqual(['photo.png'])
    expect(await names({ type: ['application/pdf', 'text'] })).toEqual(['guest.csv', 'notes.txt', 'report.pdf'])
    expect(await names({ type: ['text/csv', 'text/csv'] })).toEqual(['guest.csv']) // duplicates harmless
    expect(await names({ type: 'video' })).toEqual([])
  })

  it('state: each one, and several as any of', async () => {
    expect(await names({ state: 'expiring' })).toEqual(['scan.jpg'])
    expect(await names({ state: 'expired_links' })).toEqual(['report.pdf'])
    expect(await names({ state: 'from_upload_request' })).toEqual(['guest.csv'])
    expect(await names({ state: ['expiring', 'from_upload_request'] })).toEqual(['guest.csv', 'scan.jpg'])
    const list = await fs.files.list({ state: ['expiring', 'expired_links', 'from_upload_request'] })
    expect(list.pagination).toMatchObject({ total: 3, pages: 1 })
  })

  it('with each other, q, a sort, a page and before_id: all must hold', async () => {
    expect(await names({ type: 'text', state: 'from_upload_request' })).toEqual(['guest.csv'])
    expect(await names({ type: 'image', state: 'expired_links' })).toEqual([])
    expect(await names({ type: ['image', 'text'], q: 'O', sort: 'filename', order: 'asc' })).toEqual(['notes.txt', 'photo.png'])
    const second = await fs.files.list({ type: ['image', 'text'], sort: 'filename', limit: 2, page: 2 })
    expect(second.files.map((f) => f.filename)).toEqual(['notes.txt', 'guest.csv'])
    expect(second.pagination).toMatchObject({ page: 2, total: 4, pages: 2 })
    const all = (await fs.files.list({ order: 'asc' })).files
    const after = await fs.files.list({ order: 'asc', before_id: all[0]!.file_id, type: 'image', state: 'expiring' })
    expect(after.files.map((f) => f.filename)).toEqual(['scan.jpg'])
  })

  it('the server refuses a state or type it does not know: BadRequestError invalid_parameter with its message', async () => {
    const refused = async (options: object) => (await fs.files.list(options).catch((e: unknown) => e)) as BadRequestError
    const state = await refused({ state: ['expiring', 'expired'] })
    expect(state).toBeInstanceOf(BadRequestError)
    expect(state).toMatchObject({ status: 400, code: 'invalid_parameter' })
    expect(state.message).toContain('state must be one of expiring, expired_links, from_upload_request, got "expired".')
    const type = await refused({ type: 'image/*' })
    expect(type).toMatchObject({ status: 400, code: 'invalid_parameter' })
    expect(type.message).toContain('type must be a media type (image) or type/subtype (application/pdf), got "image/*".')
  })
})

describe('files.iterate() with type and state', () => {
  it.each([
    ['upload_date', 'before_id'],
    ['filename', 'page'],
  ] as const)('sort=%s: the same files as one page, 1 a request, the filters on every request (paging by %s)', async (sort, paging) => {
    const filters = { type: ['text', 'application/pdf'], state: ['expired_links', 'from_upload_request'] } as const
    const whole = await fs.files.list({ ...filters, sort })
    expect(whole.files.map((f) => f.filename).sort()).toEqual(['guest.csv', 'report.pdf'])
    asked.length = 0
    const files: FileRecord[] = []
    for await (const file of fs.files.iterate({ ...filters, sort, limit: 1 })) files.push(file)
    expect(files.map((f) => f.file_id)).toEqual(whole.files.map((f) => f.file_id))
    expect(asked.length).toBeGreaterThanOrEqual(2)
    for (const url of asked) {
      expect(url.searchParams.getAll('type')).toEqual(['text', 'application/pdf'])
      expect(url.searchParams.getAll('state')).toEqual(['expired_links', 'from_upload_request'])
    }
    expect(asked.slice(1).every((url) => url.searchParams.has(paging))).toBe(true)
  })
})
