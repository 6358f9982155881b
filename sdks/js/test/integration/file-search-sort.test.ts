// files.list() and files.iterate() with q, sort and order against the real server, on an account of
// its own (so that the listing holds only these five files): the search (any case), each sort in
// both directions with its ties, iterate() across pages with the same query on each request (by
// before_id in upload order, by page number otherwise), and the server's 400s for what it refuses.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  BadRequestError,
  FILE_SORTS,
  SORT_ORDERS,
  type FileRecord,
  type FileSort,
  type Fileshare,
  type SortOrder,
} from '../../src/index.js'
import { newAccount, recordingFetch, tempDir } from '../helpers/env.js'

const tmp = tempDir()
afterAll(() => tmp.remove())

// In upload order, with their sizes and how many times each is downloaded.
const FILES = [
  { name: 'Beta-report.txt', size: 30, downloads: 0 },
  { name: 'alpha.TXT', size: 10, downloads: 1 },
  { name: 'gamma_report.csv', size: 50, downloads: 0 },
  { name: 'delta.txt', size: 20, downloads: 2 },
  { name: 'REPORT-epsilon.pdf', size: 40, downloads: 0 },
]

let fs: Fileshare
/** Every URL the client asked for (its fetch records them). */
const asked: URL[] = []
const names = (files: readonly FileRecord[]) => files.map((f) => f.filename)

beforeAll(async () => {
  const account = await newAccount('search-sort', { fetch: recordingFetch(asked) })
  fs = account.client
  for (const { name, size, downloads } of FILES) {
    const file = await fs.files.upload(new Uint8Array(size).fill(1), { filename: name })
    for (let i = 0; i < downloads; i++) await fs.download(file, tmp.file(`${name}-${i}`))
  }
})

describe('files.list() with q, sort and order', () => {
  it('q: the files whose name contains it in any case, newest first, counted in pagination.total', async () => {
    const list = await fs.files.list({ q: 'rEpOrT' })
    expect(names(list.files)).toEqual(['REPORT-epsilon.pdf', 'gamma_report.csv', 'Beta-report.txt'])
    expect(list.pagination).toMatchObject({ page: 1, total: 3, pages: 1, next_before_id: null })
    expect((await fs.files.list({ q: '.txt' })).pagination.total).toBe(3)
    expect((await fs.files.list({ q: 'nothing like it' })).files).toEqual([])
    expect((await fs.files.list({ q: '' })).pagination.total).toBe(5) // an empty q filters nothing
  })

  it('each sort in both directions, ties by file_id in the same direction', async () => {
    const byName = ['alpha.TXT', 'Beta-report.txt', 'delta.txt', 'gamma_report.csv', 'REPORT-epsilon.pdf']
    expect(names((await fs.files.list({ sort: 'filename', order: 'asc' })).files)).toEqual(byName)
    expect(names((await fs.files.list({ sort: 'filename' })).files)).toEqual([...byName].reverse())
    const bySize = ['gamma_report.csv', 'REPORT-epsilon.pdf', 'Beta-report.txt', 'delta.txt', 'alpha.TXT']
    expect(names((await fs.files.list({ sort: 'size', order: 'desc' })).files)).toEqual(bySize)
    expect(names((await fs.files.list({ sort: 'size', order: 'asc' })).files)).toEqual([...bySize].reverse())
    const byDownloads = await fs.files.list({ sort: 'download_count' })
    expect(names(byDownloads.files)).toEqual(['delta.txt', 'alpha.TXT', 'REPORT-epsilon.pdf', 'gamma_report.csv', 'Beta-report.txt'])
    expect(byDownloads.files.map((f) => f.download_count)).toEqual([2, 1, 0, 0, 0])
    expect(names((await fs.files.list({ sort: 'upload_date', order: 'asc' })).files)).toEqual(FILES.map((f) => f.name))
  })

  it('a sort with q and a page: page 2 of the matches', async () => {
    const list = await fs.files.list({ q: 'REPORT', sort: 'size', order: 'asc', limit: 2, page: 2 })
    expect(names(list.files)).toEqual(['gamma_report.csv'])
    expect(list.pagination).toMatchObject({ page: 2, limit: 2, total: 3, pages: 2, next_before_id: null })
  })

  it('before_id in upload order, either direction, with q', async () => {
    const all = (await fs.files.list({ order: 'asc' })).files
    const after = await fs.files.list({ order: 'asc', before_id: all[1]!.file_id, q: 'report' })
    expect(names(after.files)).toEqual(['gamma_report.csv', 'REPORT-epsilon.pdf'])
    expect(after.pagination.page).toBeNull()
    const before = await fs.files.list({ before_id: all[4]!.file_id, q: 'report', limit: 1 })
    expect(names(before.files)).toEqual(['gamma_report.csv'])
    expect(before.pagination.next_before_id).toBe(all[2]!.file_id)
  })

  it('the server refuses an unknown sort or order, and before_id with another sort: BadRequestError invalid_parameter', async () => {
    const refused = async (options: object) => (await fs.files.list(options).catch((e: unknown) => e)) as BadRequestError
    const sort = await refused({ sort: 'name' })
    expect(sort).toBeInstanceOf(BadRequestError)
    expect(sort).toMatchObject({ status: 400, code: 'invalid_parameter' })
    expect(sort.message).toMatch(/sort must be one of upload_date, filename, size, download_count/)
    expect(await refused({ order: 'up' })).toMatchObject({ code: 'invalid_parameter' })
    expect(await refused({ sort: 'size', before_id: 5 })).toMatchObject({ code: 'invalid_parameter' })
  })
})

describe('files.iterate() with q, sort and order', () => {
  const orders = FILE_SORTS.flatMap((sort) => SORT_ORDERS.map((order) => [sort, order] as [FileSort, SortOrder]))

  it.each(orders)('sort=%s order=%s: the same files as one page, in the same order, 2 a request', async (sort, order) => {
    const whole = await fs.files.list({ q: 'T', sort, order, limit: 100 })
    expect(whole.files).toHaveLength(5)
    asked.length = 0
    const files: FileRecord[] = []
    for await (const file of fs.files.iterate({ q: 'T', sort, order, limit: 2 })) files.push(file)
    expect(files.map((f) => f.file_id)).toEqual(whole.files.map((f) => f.file_id))
    expect(asked).toHaveLength(3)
    for (const url of asked) {
      expect(url.pathname).toMatch(/\/files$/)
      expect([url.searchParams.get('q'), url.searchParams.get('sort'), url.searchParams.get('order')]).toEqual(['T', sort, order])
    }
    const paging = asked
      .slice(1)
      .map((url) => (url.searchParams.has('before_id') ? 'before_id' : url.searchParams.has('page') ? 'page' : '?'))
    expect(paging).toEqual(sort === 'upload_date' ? ['before_id', 'before_id'] : ['page', 'page'])
  })

  it('oldest first, deleting each file it yields: none skipped', async () => {
    const account = await newAccount('search-sort-delete')
    const uploaded: number[] = []
    for (let i = 0; i < 7; i++) uploaded.push((await account.client.files.upload(new Uint8Array([i]), { filename: `x-${i}.bin` })).file_id)
    const seen: number[] = []
    for await (const file of account.client.files.iterate({ order: 'asc', q: 'X-', limit: 3 })) {
      seen.push(file.file_id)
      await account.client.files.delete(file.file_id)
    }
    expect(seen).toEqual(uploaded)
  })
})
