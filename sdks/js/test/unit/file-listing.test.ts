// files.list() and files.iterate() with a search, filters and an order (q, type, state, sort, order), against a scripted
// fetch that lists as the server does: the query each request carries, and how iterate() pages
// (by before_id in upload order, either direction; by page number in the other orders).
import { describe, expect, it } from 'vitest'
import {
  FILE_SORTS,
  FILE_STATES,
  FileshareError,
  SORT_ORDERS,
  type FileRecord,
  type FileSort,
  type IterateOptions,
  type ListOptions,
} from '../../src/index.js'
import { FILE, apiError, fakeClient, json, type Recorded } from '../helpers/fake-fetch.js'

const paths = (requests: Recorded[]) => requests.map((r) => `${r.method} ${r.url.replace('http://fake.test/api/v1', '')}`)

type Stored = Pick<FileRecord, 'file_id' | 'filename' | 'size' | 'download_count'>

/** Files 1..n, uploaded in id order, with names, sizes and download counts in other orders. */
function stored(n: number): Stored[] {
  return Array.from({ length: n }, (_, i) => ({
    file_id: i + 1,
    filename: `${String.fromCharCode(97 + ((i * 7) % 26))}-${i % 2 === 0 ? 'Report' : 'photo'}.txt`,
    size: ((i * 5) % n) * 10,
    download_count: (i * 3) % 4,
  }))
}

const KEYS: Record<FileSort, (f: Stored) => number | string> = {
  upload_date: (f) => f.file_id,
  filename: (f) => f.filename.toLowerCase(),
  size: (f) => f.size,
  download_count: (f) => f.download_count,
}

/**
 * `GET /files` over `files` as the server answers it: q (any case), sort, order (ties by id in the
 * same direction), page or before_id; before_id (the files past it in id order) only when sorted
 * by upload date, else 400 invalid_parameter.
 */
function fileServer(files: Stored[]) {
  return (request: Recorded): Response => {
    const params = new URL(request.url).searchParams
    const limit = Number(params.get('limit') ?? 20)
    const sort = (params.get('sort') ?? 'upload_date') as FileSort
    const descending = (params.get('order') ?? 'desc') === 'desc'
    const q = params.get('q')?.toLowerCase()
    const before = params.get('before_id')
    if (before !== null && sort !== 'upload_date') return apiError(400, 'invalid_parameter')
    const key = KEYS[sort]
    const sign = descending ? -1 : 1
    let listed = files
      .filter((f) => q === undefined || f.filename.toLowerCase().includes(q))
      .sort((a, b) => sign * (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : a.file_id - b.file_id))
    const total = listed.length
    let page: number | null = null
    if (before !== null) listed = listed.filter((f) => (descending ? f.file_id < Number(before) : f.file_id > Number(before)))
    else {
      page = Number(params.get('page') ?? 1)
      listed = listed.slice((page - 1) * limit)
    }
    const shown = listed.slice(0, limit)
    return json(200, {
      success: true,
      files: shown.map((f) => ({ ...FILE, ...f })),
      pagination: {
        page,
        limit,
        total,
        pages: Math.ceil(total / limit),
        next_before_id: listed.length > limit ? shown.at(-1)!.file_id : null,
      },
    })
  }
}

async function collect(iterable: AsyncIterable<FileRecord>): Promise<number[]> {
  const ids: number[] = []
  for await (const file of iterable) ids.push(file.file_id)
  return ids
}

describe('files.list() with q, sort and order', () => {
  it('sends q, sort and order with page and limit; without them no query at all', async () => {
    const { client, requests } = fakeClient([fileServer(stored(5))])
    await client.files.list()
    const list = await client.files.list({ page: 2, limit: 2, q: 'Report', sort: 'size', order: 'asc' })
    expect(paths(requests)).toEqual(['GET /files', 'GET /files?page=2&limit=2&q=Report&sort=size&order=asc'])
    expect(list.pagination).toMatchObject({ page: 2, limit: 2, total: 3 })
  })

  it('sends q as it is (encoded), an empty one included', async () => {
    const { client, requests } = fakeClient([fileServer(stored(1))])
    await client.files.list({ q: '50% off & more' })
    await client.files.list({ q: '' })
    expect(paths(requests)).toEqual(['GET /files?q=50%25+off+%26+more', 'GET /files?q='])
  })

  it('sends before_id with the upload order in either direction', async () => {
    const { client, requests } = fakeClient([fileServer(stored(5))])
    const list = await client.files.list({ before_id: 2, order: 'asc', limit: 2 })
    expect(list.files.map((f) => f.file_id)).toEqual([3, 4])
    expect(paths(requests)).toEqual(['GET /files?limit=2&before_id=2&order=asc'])
  })

  it('names the sorts and orders the API takes', () => {
    expect(FILE_SORTS).toEqual(['upload_date', 'filename', 'size', 'download_count'])
    expect(SORT_ORDERS).toEqual(['asc', 'desc'])
    // @ts-expect-error: a sort the API does not take is a type error
    const wrong: ListOptions = { sort: 'name' }
    expect(wrong.sort).toBe('name')
  })
})

describe('files.iterate() with q, sort and order', () => {
  const files = stored(23)

  for (const sort of FILE_SORTS) {
    for (const order of SORT_ORDERS) {
      it(`yields every match once in the order of sort=${sort} order=${order}, the query on every page`, async () => {
        const { client, requests } = fakeClient([fileServer(files)])
        const ids = await collect(client.files.iterate({ q: 'REPORT', sort, order, limit: 5 }))
        const expected = fileServer(files)({
          method: 'GET',
          url: `http://fake.test/api/v1/files?limit=100&q=REPORT&sort=${sort}&order=${order}`,
          headers: new Headers(),
          body: undefined,
        })
        const all = ((await expected.json()) as { files: Stored[] }).files.map((f) => f.file_id)
        expect(all).toHaveLength(12)
        expect(ids).toEqual(all)
        const sent = paths(requests)
        expect(sent).toHaveLength(3)
        for (const path of sent) expect(path).toContain(`q=REPORT&sort=${sort}&order=${order}`)
        if (sort === 'upload_date') {
          // Upload order pages by before_id, in either direction.
          expect(sent.slice(1).every((path) => /[?&]before_id=\d+/.test(path) && !path.includes('page='))).toBe(true)
        } else {
          expect(sent.slice(1)).toEqual([
            `GET /files?page=2&limit=5&q=REPORT&sort=${sort}&order=${order}`,
            `GET /files?page=3&limit=5&q=REPORT&sort=${sort}&order=${order}`,
          ])
        }
      })
    }
  }

  it('pages oldest first by before_id going up', async () => {
    const { client, requests } = fakeClient([fileServer(stored(5))])
    expect(await collect(client.files.iterate({ order: 'asc', limit: 2 }))).toEqual([1, 2, 3, 4, 5])
    expect(paths(requests)).toEqual([
      'GET /files?limit=2&order=asc',
      'GET /files?limit=2&before_id=2&order=asc',
      'GET /files?limit=2&before_id=4&order=asc',
    ])
  })

  it('oldest first: a next_before_id that does not go up stops the iteration, no file twice', async () => {
    const page = (ids: number[], next: number | null) => () =>
      json(200, {
        success: true,
        files: ids.map((file_id) => ({ ...FILE, file_id })),
        pagination: { page: null, limit: 2, total: 9, pages: 5, next_before_id: next },
      })
    const { client } = fakeClient([page([1, 2], 2), page([2, 3], 3), page([4, 5], 3)])
    const seen: number[] = []
    const error = await (async () => {
      for await (const file of client.files.iterate({ order: 'asc', limit: 2 })) seen.push(file.file_id)
    })().catch((e: unknown) => e)
    expect(seen).toEqual([1, 2, 3, 4, 5])
    expect(error).toBeInstanceOf(FileshareError)
    expect((error as Error).message).toMatch(/next_before_id 3 does not move past 3/)
  })

  it('by page number, a file shifted onto the next page is not yielded twice', async () => {
    const page = (ids: number[], n: number) => () =>
      json(200, {
        success: true,
        files: ids.map((file_id) => ({ ...FILE, file_id })),
        pagination: { page: n, limit: 2, total: 5, pages: 3, next_before_id: null },
      })
    const { client } = fakeClient([page([4, 2], 1), page([2, 5], 2), page([1], 3)])
    expect(await collect(client.files.iterate({ sort: 'filename', limit: 2 }))).toEqual([4, 2, 5, 1])
  })

  it('a search with no match yields nothing after one request', async () => {
    const { client, requests } = fakeClient([fileServer(stored(5))])
    expect(await collect(client.files.iterate({ q: 'nothing like it', sort: 'size' }))).toEqual([])
    expect(paths(requests)).toEqual(['GET /files?limit=100&q=nothing+like+it&sort=size'])
  })
})

describe('files.list() and files.iterate() with type and state', () => {
  it('sends one value as one parameter and several as the parameter repeated, in the order given', async () => {
    const { client, requests } = fakeClient([fileServer(stored(3))])
    await client.files.list({ type: 'image' })
    await client.files.list({ state: 'expiring' })
    await client.files.list({ type: ['application/pdf', 'text'], state: ['expired_links', 'from_upload_request'] })
    await client.files.list({ type: [], state: [] }) // an empty list sends nothing
    expect(paths(requests)).toEqual([
      'GET /files?type=image',
      'GET /files?state=expiring',
      'GET /files?type=application%2Fpdf&type=text&state=expired_links&state=from_upload_request',
      'GET /files',
    ])
  })

  it('with q, sort, order, page, limit and before_id', async () => {
    const { client, requests } = fakeClient([fileServer(stored(5))])
    await client.files.list({ page: 2, limit: 2, q: 'Report', sort: 'size', order: 'asc', type: 'text/plain', state: 'expiring' })
    await client.files.list({ before_id: 4, limit: 2, type: ['image', 'video'], state: ['expiring', 'expired_links'], q: 'a' })
    expect(paths(requests)).toEqual([
      'GET /files?page=2&limit=2&q=Report&sort=size&order=asc&type=text%2Fplain&state=expiring',
      'GET /files?limit=2&before_id=4&q=a&type=image&type=video&state=expiring&state=expired_links',
    ])
  })

  it('iterate keeps them on every page: by before_id in upload order, by page number otherwise', async () => {
    const filters: IterateOptions = { limit: 2, q: 'o', type: ['image', 'application/pdf'], state: ['expiring', 'from_upload_request'] }
    const kept = 'q=o&type=image&type=application%2Fpdf&state=expiring&state=from_upload_request'
    const upload = fakeClient([fileServer(stored(5))])
    expect(await collect(upload.client.files.iterate({ ...filters, order: 'asc' }))).toEqual([1, 2, 3, 4, 5])
    expect(paths(upload.requests)).toEqual([
      `GET /files?limit=2&q=o&order=asc&type=image&type=application%2Fpdf&state=expiring&state=from_upload_request`,
      `GET /files?limit=2&before_id=2&q=o&order=asc&type=image&type=application%2Fpdf&state=expiring&state=from_upload_request`,
      `GET /files?limit=2&before_id=4&q=o&order=asc&type=image&type=application%2Fpdf&state=expiring&state=from_upload_request`,
    ])
    const bySize = fakeClient([fileServer(stored(5))])
    expect(await collect(bySize.client.files.iterate({ ...filters, sort: 'size' }))).toHaveLength(5)
    expect(paths(bySize.requests)).toEqual([
      `GET /files?limit=2&${kept.replace('&type', '&sort=size&type')}`,
      `GET /files?page=2&limit=2&${kept.replace('&type', '&sort=size&type')}`,
      `GET /files?page=3&limit=2&${kept.replace('&type', '&sort=size&type')}`,
    ])
  })

  it('names the states the API takes; another is a type error', () => {
    expect(FILE_STATES).toEqual(['expiring', 'expired_links', 'from_upload_request'])
    // @ts-expect-error: a state the API does not take is a type error
    const wrong: ListOptions = { state: ['expiring', 'expired'] }
    expect(wrong.state).toEqual(['expiring', 'expired'])
  })
})
