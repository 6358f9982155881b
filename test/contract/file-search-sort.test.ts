import { Readable } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { signedInHolder } from '../helpers/dashboard-session.js'
import { bearer, startTestApp, unlimitedAccount, type TestApp } from '../helpers/test-app.js'

/**
 * GET /files's search (`q`), sorts (`sort`, `order`) and their paging (issue 37), on both stacks:
 * the same answers from SQLite and PostgreSQL, whatever the database's locale.
 */

interface Listed {
  file_id: number
  filename: string
  public_link: string
}
interface ListBody {
  files: Listed[]
  pagination: { page: number | null; limit: number; total: number; pages: number; next_before_id: number | null }
}

type Sort = 'upload_date' | 'filename' | 'size' | 'download_count'
const SORTS: Sort[] = ['upload_date', 'filename', 'size', 'download_count']

const T0 = Date.UTC(2025, 3, 1, 12)

/**
 * The account's files: name, upload time (ms after T0), size and downloads. Ties on purpose: two
 * names equal once A to Z fold, two uploads in one millisecond, equal sizes and download counts; an
 * upload time out of id order; names with %, _ and non-ASCII letters whose case only Unicode folds.
 */
const FIXTURE = [
  { name: 'report.txt', at: 0, size: 3, downloads: 1 },
  { name: 'Report.txt', at: 0, size: 2, downloads: 0 },
  { name: 'b.txt', at: 1_000, size: 3, downloads: 2 },
  { name: 'Ärger.pdf', at: 2_000, size: 1, downloads: 1 },
  { name: 'ärger.pdf', at: -5_000, size: 4, downloads: 0 },
  { name: '100%.txt', at: 3_000, size: 2, downloads: 0 },
  { name: '100x.txt', at: 3_000, size: 1, downloads: 3 },
  { name: 'a_b.txt', at: 4_000, size: 2, downloads: 0 },
  { name: 'axb.txt', at: 4_500, size: 5, downloads: 0 },
  { name: 'STRASSE.txt', at: 6_000, size: 2, downloads: 1 },
  { name: 'straße.txt', at: 7_000, size: 6, downloads: 0 },
  { name: 'É.md', at: 8_000, size: 1, downloads: 0 },
  { name: 'é.md', at: 9_000, size: 2, downloads: 2 },
  { name: 'Zeta', at: 9_000, size: 3, downloads: 0 },
]

const asciiLower = (text: string) => text.replace(/[A-Z]/g, (letter) => letter.toLowerCase())

interface Stored {
  id: number
  name: string
  at: number
  size: number
  downloads: number
}

/** The documented order: the key (names A to Z folded, then by code point), ties by file_id, both in `order`. */
function expectedOrder(files: Stored[], sort: Sort, order: 'asc' | 'desc'): number[] {
  const key = (file: Stored) => ({ upload_date: file.at, filename: 0, size: file.size, download_count: file.downloads })[sort]
  const sign = order === 'asc' ? 1 : -1
  return [...files]
    .sort((a, b) => {
      const byKey =
        sort === 'filename' ? Buffer.compare(Buffer.from(asciiLower(a.name)), Buffer.from(asciiLower(b.name))) : Math.sign(key(a) - key(b))
      return sign * (byKey || a.id - b.id)
    })
    .map((file) => file.id)
}

describe('GET /files: q, sort and order', () => {
  let t: TestApp
  let apiKey: string
  let accountId: number
  let stored: Stored[]

  async function insertFile(owner: number, name: string, createdAt: number, size: number, lifetimeSeconds?: number) {
    const limits = { maxFileSize: 1_000_000, dailyUploads: 1_000_000 }
    const staged = await t.app.services.files.stage({ accountId: owner, limits }, Readable.from([Buffer.alloc(size, 'x')]), name, createdAt)
    return t.app.services.files.commit(staged, { now: createdAt, lifetimeSeconds })
  }

  async function get(query: string, key = apiKey): Promise<Response> {
    return fetch(`${t.api}/files?${query}`, { headers: bearer(key) })
  }

  async function list(query: string, key = apiKey): Promise<ListBody> {
    const response = await get(query, key)
    expect(response.status, query).toBe(200)
    return (await response.json()) as ListBody
  }

  const ids = (body: ListBody) => body.files.map((file) => file.file_id)
  const idsOf = (names: string[]) => names.map((name) => stored.find((file) => file.name === name)!.id)

  beforeAll(async () => {
    t = await startTestApp()
    ;({ accountId, apiKey } = await unlimitedAccount(t))
    stored = []
    for (const file of FIXTURE) {
      const row = await insertFile(accountId, file.name, T0 + file.at, file.size)
      stored.push({ id: row.id, name: row.filename, at: file.at, size: file.size, downloads: file.downloads })
    }
    // Download counts come from real downloads of each file's link.
    const links = new Map((await list('limit=100')).files.map((file) => [file.file_id, new URL(file.public_link).pathname]))
    for (const file of stored) {
      for (let n = 0; n < file.downloads; n++) {
        const download = await fetch(`${t.url}${links.get(file.id)}`)
        expect(download.status).toBe(200)
        await download.arrayBuffer()
      }
    }
    // Neither another account's file nor an expired one is ever listed or counted.
    await insertFile((await unlimitedAccount(t)).accountId, 'report.txt', T0, 1)
    await insertFile(accountId, 'report-expired.txt', T0 - 10_000, 1, 1)
  })
  afterAll(async () => {
    await t.close()
  })

  it('the fixture is stored as named (NFC, nothing cut)', () => {
    expect(stored.map((file) => file.name)).toEqual(FIXTURE.map((file) => file.name))
  })

  it('sorts by each key in each order, ties by file_id in the same direction; the default is upload_date desc', async () => {
    for (const sort of SORTS) {
      for (const order of ['asc', 'desc'] as const) {
        const body = await list(`sort=${sort}&order=${order}&limit=100`)
        expect(ids(body), `${sort} ${order}`).toEqual(expectedOrder(stored, sort, order))
        expect(body.pagination).toEqual({ page: 1, limit: 100, total: FIXTURE.length, pages: 1, next_before_id: null })
      }
      // order alone defaults to desc
      expect(ids(await list(`sort=${sort}&limit=100`))).toEqual(expectedOrder(stored, sort, 'desc'))
    }
    expect(ids(await list('limit=100'))).toEqual(expectedOrder(stored, 'upload_date', 'desc'))
    expect(ids(await list('order=asc&limit=100'))).toEqual(expectedOrder(stored, 'upload_date', 'asc'))
  })

  it('sorts names with A to Z folded, other letters by code point, as both databases do', async () => {
    const names = (await list('sort=filename&order=asc&limit=100')).files.map((file) => file.filename)
    expect(names).toEqual([
      '100%.txt',
      '100x.txt',
      'a_b.txt',
      'axb.txt',
      'b.txt',
      'report.txt',
      'Report.txt',
      'STRASSE.txt',
      'straße.txt',
      'Zeta',
      'Ärger.pdf',
      'É.md',
      'ärger.pdf',
      'é.md',
    ])
  })

  it('pages every sort and order by page number, the deep pages (read from the other end) included', async () => {
    for (const sort of SORTS) {
      for (const order of ['asc', 'desc'] as const) {
        const walked: number[] = []
        for (let page = 1; page <= 5; page++) {
          const body = await list(`sort=${sort}&order=${order}&limit=3&page=${page}`)
          expect(body.pagination, `${sort} ${order} ${page}`).toMatchObject({ page, limit: 3, total: 14, pages: 5 })
          // next_before_id is given only where before_id can follow it: sort=upload_date
          const last = body.files.at(-1)?.file_id
          expect(body.pagination.next_before_id).toBe(sort === 'upload_date' && page < 5 ? last : null)
          walked.push(...ids(body))
        }
        expect(walked, `${sort} ${order}`).toEqual(expectedOrder(stored, sort, order))
      }
    }
  })

  it('pages by before_id with sort=upload_date in both orders: lower file_ids newest first, higher ones oldest first', async () => {
    // before_id pages by file_id: the order of upload times unless clocks disagreed (the fixture's ärger.pdf did).
    const byId = stored.map((file) => file.id).sort((a, b) => a - b)
    for (const middle of [byId[0]!, byId[4]!, byId[9]!, byId.at(-1)!]) {
      const below = await list(`sort=upload_date&order=desc&limit=100&before_id=${middle}`)
      expect(ids(below)).toEqual(byId.filter((id) => id < middle).reverse())
      expect(below.pagination).toEqual({ page: null, limit: 100, total: 14, pages: 1, next_before_id: null })
      expect(ids(await list(`order=asc&limit=100&before_id=${middle}`))).toEqual(byId.filter((id) => id > middle))
    }
    // A before_id the list does not hold (deleted, or past either end) still pages from its place.
    expect(ids(await list(`order=desc&limit=100&before_id=${byId.at(-1)! + 1000}`))).toEqual([...byId].reverse())

    // Where upload times follow the ids, the first page and the before_id pages after it walk every file once.
    const { accountId: other, apiKey: otherKey } = await unlimitedAccount(t)
    const made: number[] = []
    for (let n = 0; n < 10; n++) made.push((await insertFile(other, `walk-${n}.txt`, T0 + n * 1_000, 1)).id)
    for (const order of ['desc', 'asc'] as const) {
      const walked: number[] = []
      let body = await list(`order=${order}&limit=4`, otherKey)
      walked.push(...ids(body))
      while (body.pagination.next_before_id !== null) {
        body = await list(`sort=upload_date&order=${order}&limit=4&before_id=${body.pagination.next_before_id}`, otherKey)
        expect(body.pagination).toMatchObject({ page: null, limit: 4, total: 10, pages: 3 })
        walked.push(...ids(body))
      }
      expect(walked).toEqual(order === 'desc' ? [...made].reverse() : made)
    }
  })

  it('q matches a substring of the name, A to Z in either case, and counts only what it matches', async () => {
    for (const q of ['report', 'REPORT.TXT', 'rEpOrT']) {
      const body = await list(`q=${encodeURIComponent(q)}&sort=filename&order=asc`)
      expect(ids(body), q).toEqual(idsOf(['report.txt', 'Report.txt']))
      expect(body.pagination).toEqual({ page: 1, limit: 20, total: 2, pages: 1, next_before_id: null })
    }
    const none = await list('q=nothing-like-this')
    expect(none).toMatchObject({ files: [], pagination: { total: 0, pages: 0, next_before_id: null } })
  })

  it('q folds only A to Z: non-ASCII letters match only themselves, on SQLite and PostgreSQL alike', async () => {
    const cases: Array<[string, string[]]> = [
      ['ä', ['ärger.pdf']],
      ['Ä', ['Ärger.pdf']],
      ['ÄRGER', ['Ärger.pdf']],
      ['RGER', ['Ärger.pdf', 'ärger.pdf']],
      ['ss', ['STRASSE.txt']],
      ['ß', ['straße.txt']],
      ['é', ['é.md']],
      ['É', ['É.md']],
      // A decomposed é (e and U+0301) is searched as stored names are: NFC.
      ['e\u0301', ['é.md']],
    ]
    for (const [q, names] of cases) {
      expect(ids(await list(`q=${encodeURIComponent(q)}&sort=filename&order=asc`)), q).toEqual(
        expectedOrder(
          stored.filter((file) => names.includes(file.name)),
          'filename',
          'asc',
        ),
      )
    }
  })

  it('q takes %, _ and \\ literally, never as wildcards or escapes', async () => {
    const cases: Array<[string, string[]]> = [
      ['%', ['100%.txt']],
      ['100%', ['100%.txt']],
      ['_', ['a_b.txt']],
      ['a_b', ['a_b.txt']],
      // A backslash never survives in a stored name (it separates a path): nothing matches, nothing fails.
      ['\\', []],
      ['\\%', []],
      ['%_', []],
      ["'", []],
    ]
    for (const [q, names] of cases) {
      const body = await list(`q=${encodeURIComponent(q)}`)
      expect(body.files.map((file) => file.filename).sort(), q).toEqual([...names].sort())
      expect(body.pagination.total, q).toBe(names.length)
    }
  })

  it('an empty q lists every file; q up to 255 characters is taken', async () => {
    expect((await list('q=&limit=100')).pagination.total).toBe(14)
    expect(ids(await list('q=&limit=100'))).toEqual(ids(await list('limit=100')))
    expect(await list(`q=${'x'.repeat(255)}`)).toMatchObject({ files: [], pagination: { total: 0 } })
    expect(await list(`q=${encodeURIComponent('é'.repeat(255))}`)).toMatchObject({ files: [], pagination: { total: 0 } })
  })

  it('q combines with every sort and order, with page and with before_id, and total counts the matches', async () => {
    const txt = stored.filter((file) => file.name.toLowerCase().endsWith('.txt'))
    expect(txt).toHaveLength(9)
    for (const sort of SORTS) {
      for (const order of ['asc', 'desc'] as const) {
        const walked: number[] = []
        for (let page = 1; page <= 4; page++) {
          const body = await list(`q=.TXT&sort=${sort}&order=${order}&limit=2&page=${page}`)
          expect(body.pagination, `${sort} ${order} ${page}`).toMatchObject({ page, total: 9, pages: 5 })
          walked.push(...ids(body))
        }
        walked.push(...ids(await list(`q=.TXT&sort=${sort}&order=${order}&limit=2&page=5`)))
        expect(walked, `${sort} ${order}`).toEqual(expectedOrder(txt, sort, order))
      }
    }
    const walked: number[] = []
    let body = await list('q=.txt&limit=4')
    walked.push(...ids(body))
    while (body.pagination.next_before_id !== null) {
      body = await list(`q=.txt&limit=4&before_id=${body.pagination.next_before_id}`)
      expect(body.pagination).toMatchObject({ page: null, total: 9, pages: 3 })
      walked.push(...ids(body))
    }
    expect(walked).toEqual(txt.map((file) => file.id).sort((a, b) => b - a))
  })

  it('answers 400 invalid_parameter with the documented message to any bad q, sort, order or combination', async () => {
    const cases: Array<[string, string]> = [
      ['sort=name', 'sort must be one of upload_date, filename, size, download_count, got "name".'],
      ['sort=', 'sort must be one of upload_date, filename, size, download_count, got "".'],
      ['sort=Size', 'sort must be one of upload_date, filename, size, download_count, got "Size".'],
      ['sort=size&sort=filename', 'sort must be given once, got 2 values.'],
      ['order=up', 'order must be asc or desc, got "up".'],
      ['order=DESC', 'order must be asc or desc, got "DESC".'],
      ['order=', 'order must be asc or desc, got "".'],
      ['order=asc&order=asc', 'order must be given once, got 2 values.'],
      [`q=${'x'.repeat(256)}`, 'q must be at most 255 characters, got 256.'],
      [`q=${encodeURIComponent('é'.repeat(256))}`, 'q must be at most 255 characters, got 256.'],
      ['q=a%00b', 'q must not contain control characters.'],
      ['q=a%0Ab', 'q must not contain control characters.'],
      ['q=a&q=b', 'q must be given once, got 2 values.'],
      ['sort=size&before_id=5', 'before_id pages only with sort=upload_date (either order); with sort=size, page with page.'],
      [
        'sort=filename&order=asc&before_id=5',
        'before_id pages only with sort=upload_date (either order); with sort=filename, page with page.',
      ],
      [
        'sort=download_count&q=a&before_id=5',
        'before_id pages only with sort=upload_date (either order); with sort=download_count, page with page.',
      ],
      ['sort=upload_date&page=1&before_id=5', 'page and before_id cannot be given together; before_id pages on its own.'],
      ['sort=size&limit=0', 'limit must be an integer from 1 to 100, got "0".'],
    ]
    for (const [query, message] of cases) {
      const response = await get(query)
      expect(response.status, query).toBe(400)
      expect(await response.json(), query).toEqual({ success: false, error: { code: 'invalid_parameter', message } })
    }
  })

  it("the dashboard's file list takes the same q, sort and order", async () => {
    const holder = await signedInHolder(t, 'find')
    for (const [index, name] of ['Alpha.txt', 'beta.txt', 'ALPHABET.md', 'gamma.txt'].entries()) {
      await insertFile(holder.accountId, name, T0 + index, index + 1)
    }
    const dashboard = (query: string) => fetch(`${t.url}/dashboard/api/files?${query}`, { headers: { cookie: holder.cookie } })
    const found = await dashboard('q=alpha&sort=filename&order=asc')
    expect(found.status).toBe(200)
    const body = (await found.json()) as ListBody
    expect(body.files.map((file) => file.filename)).toEqual(['Alpha.txt', 'ALPHABET.md'])
    expect(body.pagination).toEqual({ page: 1, limit: 20, total: 2, pages: 1, next_before_id: null })
    const bySize = (await (await dashboard('sort=size&order=desc&limit=2&page=2')).json()) as ListBody
    expect(bySize.files.map((file) => file.filename)).toEqual(['beta.txt', 'Alpha.txt'])
    const refused = await dashboard('sort=name')
    expect(refused.status).toBe(400)
    expect(await refused.json()).toMatchObject({ error: { code: 'invalid_parameter' } })
  })
})
