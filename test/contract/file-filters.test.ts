import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { signedInHolder } from '../helpers/dashboard-session.js'
import { bearer, fileForm, startTestApp, unlimitedAccount, type TestApp } from '../helpers/test-app.js'

/**
 * GET /files's filters `type` and `state` (issue 37), on both stacks: every value, a repeated
 * parameter as "any of", together with q, sort, order, page and before_id, the totals, and the
 * 400s with their messages.
 */

interface Listed {
  file_id: number
  filename: string
  size: number
  content_type: string
  public_link: string
}
interface ListBody {
  files: Listed[]
  pagination: { page: number | null; limit: number; total: number; pages: number; next_before_id: number | null }
}
interface Link {
  link_id: number
  url: string
  default: boolean
  status: string
}

const DAY_SECONDS = 86_400

describe('GET /files: type and state', () => {
  let t: TestApp
  let apiKey: string
  /** Each fixture file's id by its name. */
  const id = new Map<string, number>()

  function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
    return fetch(`${t.api}${path}`, {
      method,
      headers: { ...bearer(apiKey), ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
  }

  async function upload(filename: string, size: number, headers: Record<string, string> = {}, key = apiKey): Promise<number> {
    const response = await fetch(`${t.api}/files/upload`, {
      method: 'POST',
      headers: { ...bearer(key), ...headers },
      body: fileForm(new Uint8Array(size).fill(120), filename),
    })
    expect(response.status, filename).toBe(201)
    const fileId = ((await response.json()) as { file_id: number }).file_id
    id.set(filename, fileId)
    return fileId
  }

  async function createLink(fileId: number, fields: Record<string, unknown>): Promise<Link> {
    const response = await call('POST', `/files/${fileId}/links`, fields)
    expect(response.status).toBe(201)
    return ((await response.json()) as { link: Link }).link
  }

  async function list(query: string): Promise<ListBody> {
    const response = await call('GET', `/files?${query}`)
    expect(response.status, `${query}: ${await response.clone().text()}`).toBe(200)
    return (await response.json()) as ListBody
  }

  /** The names a query lists, in its order. */
  async function names(query: string): Promise<string[]> {
    return (await list(`limit=100&${query}`)).files.map((file) => file.filename)
  }

  /** The fixture's names, newest upload first (the default order: each was uploaded after the one before). */
  const newestFirst = (...listed: string[]) => [...listed].sort((a, b) => id.get(b)! - id.get(a)!)

  async function expectInvalid(query: string, message: string) {
    const response = await call('GET', `/files?${query}`)
    expect(response.status, query).toBe(400)
    expect(await response.json(), query).toEqual({ success: false, error: { code: 'invalid_parameter', message } })
  }

  beforeAll(async () => {
    t = await startTestApp()
    ;({ apiKey } = await unlimitedAccount(t))
    // Content types come from the names' extensions (mime-types), stored lower case without parameters.
    await upload('photo.png', 5)
    await upload('holiday.JPG', 9)
    await upload('manual.pdf', 3)
    await upload('notes.txt', 7)
    await upload('readme.md', 2)
    await upload('data.json', 4)
    await upload('clip.mp4', 8)
    await upload('blob', 1)
    await upload('font.woff2', 6)
    await upload('report.pdf', 10, { 'fileshare-expires-in': String(10 * DAY_SECONDS) })
    await upload('photo-expiring.png', 11, { 'fileshare-expires-in': String(20 * DAY_SECONDS) })

    // A file through an upload request (a guest's tus upload).
    const request = await call('POST', '/upload-requests', { label: 'Scans', expires_in: DAY_SECONDS })
    expect(request.status).toBe(201)
    const token = ((await request.json()) as { upload_request: { url: string } }).upload_request.url.split('/').pop()!
    const guest = await fetch(`${t.api}/uploads`, {
      method: 'POST',
      headers: {
        'tus-resumable': '1.0.0',
        authorization: `UploadRequest ${token}`,
        'upload-length': '12',
        'upload-metadata': `filename ${Buffer.from('scan.pdf').toString('base64')}`,
        'content-type': 'application/offset+octet-stream',
      },
      body: new Uint8Array(12),
    })
    expect(guest.status).toBe(201)
    id.set('scan.pdf', Number(guest.headers.get('fileshare-file-id')))

    // Links: notes.txt's will expire by time (the clock moves in the test that needs it); readme.md's
    // default link is used up by its downloads; data.json's expired link was revoked; clip.mp4's and
    // font.woff2's links still work.
    await createLink(id.get('notes.txt')!, { expires_in: 60 })
    const { links } = (await (await call('GET', `/files/${id.get('readme.md')}/links`)).json()) as { links: Link[] }
    const download = await fetch(`${t.url}${new URL(links[0]!.url).pathname}`)
    expect(download.status).toBe(200)
    await download.arrayBuffer()
    expect((await call('PATCH', `/links/${links[0]!.link_id}`, { max_downloads: 1 })).status).toBe(200)
    const revoked = await createLink(id.get('data.json')!, { max_downloads: 1, expires_in: 60 })
    expect((await call('DELETE', `/links/${revoked.link_id}`)).status).toBe(200)
    await createLink(id.get('clip.mp4')!, { expires_in: 10 * DAY_SECONDS })
    await createLink(id.get('font.woff2')!, { max_downloads: 5 })

    // Neither another account's files nor an expired one are listed or counted.
    const other = await unlimitedAccount(t)
    await upload('other.png', 1, { 'fileshare-expires-in': '3600' }, other.apiKey)
    await upload('gone.png', 1, { 'fileshare-expires-in': '30' })
    t.advanceClock(31_000)
  })
  afterAll(async () => {
    await t.close()
  })

  it('stores the content types the filters match (from the extension, lower case, no parameters)', async () => {
    const types = Object.fromEntries((await list('limit=100')).files.map((file) => [file.filename, file.content_type]))
    expect(types).toEqual({
      'photo.png': 'image/png',
      'holiday.JPG': 'image/jpeg',
      'manual.pdf': 'application/pdf',
      'notes.txt': 'text/plain',
      'readme.md': 'text/markdown',
      'data.json': 'application/json',
      'clip.mp4': 'video/mp4',
      blob: 'application/octet-stream',
      'font.woff2': 'font/woff2',
      'report.pdf': 'application/pdf',
      'photo-expiring.png': 'image/png',
      'scan.pdf': 'application/pdf',
    })
  })

  it('type: a top-level type matches all its subtypes, a type/subtype exactly; A to Z in either case', async () => {
    const images = newestFirst('photo.png', 'holiday.JPG', 'photo-expiring.png')
    expect(await names('type=image')).toEqual(images)
    expect(await names('type=IMAGE')).toEqual(images)
    expect(await names('type=iMaGe')).toEqual(images)
    expect(await names('type=image/png')).toEqual(newestFirst('photo.png', 'photo-expiring.png'))
    expect(await names('type=Image/PNG')).toEqual(newestFirst('photo.png', 'photo-expiring.png'))
    expect(await names('type=application/pdf')).toEqual(newestFirst('manual.pdf', 'report.pdf', 'scan.pdf'))
    expect(await names('type=application')).toEqual(newestFirst('manual.pdf', 'data.json', 'blob', 'report.pdf', 'scan.pdf'))
    expect(await names('type=text')).toEqual(newestFirst('notes.txt', 'readme.md'))
    expect(await names('type=video')).toEqual(['clip.mp4'])
    expect(await names('type=font')).toEqual(['font.woff2'])
    // A prefix of a type is not the type; a subtype alone is no type.
    expect(await names('type=imag')).toEqual([])
    expect(await names('type=pdf')).toEqual([])
    expect(await names('type=image/pn')).toEqual([])
    const none = await list('type=model')
    expect(none).toEqual({ success: true, files: [], pagination: { page: 1, limit: 20, total: 0, pages: 0, next_before_id: null } })
  })

  it('type repeated: any of its values, each counted once', async () => {
    expect(await names('type=application/pdf&type=text')).toEqual(
      newestFirst('manual.pdf', 'report.pdf', 'scan.pdf', 'notes.txt', 'readme.md'),
    )
    expect(await names('type=image&type=image/png&type=IMAGE')).toEqual(newestFirst('photo.png', 'holiday.JPG', 'photo-expiring.png'))
    const body = await list('type=video&type=font&type=audio&limit=1')
    expect(body.pagination).toMatchObject({ total: 2, pages: 2 })
  })

  it('state=expiring: every live file with an expiry; state=from_upload_request: the guest uploads', async () => {
    expect(await names('state=expiring')).toEqual(newestFirst('report.pdf', 'photo-expiring.png'))
    expect(await names('state=expiring&sort=upload_date&order=asc')).toEqual(newestFirst('report.pdf', 'photo-expiring.png').reverse())
    expect(await names('state=from_upload_request')).toEqual(['scan.pdf'])
    expect(await names('state=expiring&state=from_upload_request')).toEqual(newestFirst('report.pdf', 'photo-expiring.png', 'scan.pdf'))
  })

  it('state=expired_links: a link exhausted by its downloads or past its expiry, a revoked one not', async () => {
    // Before notes.txt's link expires: readme.md's used-up default link only.
    expect(await names('state=expired_links')).toEqual(['readme.md'])
    expect((await list('state=expired_links')).pagination.total).toBe(1)
    t.advanceClock(60_000)
    expect(await names('state=expired_links')).toEqual(newestFirst('notes.txt', 'readme.md'))
    const { links } = (await (await call('GET', `/files/${id.get('notes.txt')}/links`)).json()) as { links: Link[] }
    expect(links.map((link) => link.status)).toEqual(['active', 'expired'])
    // Every filter given must hold, a repeated one any of its values.
    expect(await names('state=expired_links&type=text/plain')).toEqual(['notes.txt'])
    expect(await names('state=expired_links&state=expiring&type=text&type=application/pdf')).toEqual(
      newestFirst('notes.txt', 'readme.md', 'report.pdf'),
    )
    expect(await names('state=expired_links&q=READ')).toEqual(['readme.md'])
  })

  it('combines with q, every sort and order, page and before_id; totals count the filtered files', async () => {
    expect(await names('type=application&q=.pdf&sort=size&order=asc')).toEqual(['manual.pdf', 'report.pdf', 'scan.pdf'])
    expect(await names('type=application&sort=filename&order=desc')).toEqual(['scan.pdf', 'report.pdf', 'manual.pdf', 'data.json', 'blob'])
    expect(await names('type=image&sort=size&order=desc')).toEqual(['photo-expiring.png', 'holiday.JPG', 'photo.png'])
    expect(await names('type=image&sort=download_count&order=asc')).toEqual(
      newestFirst('photo.png', 'holiday.JPG', 'photo-expiring.png').reverse(),
    )
    expect(await names('type=image&q=photo&state=expiring')).toEqual(['photo-expiring.png'])

    const application = newestFirst('manual.pdf', 'data.json', 'blob', 'report.pdf', 'scan.pdf')
    // page by page, the last page read from the other end
    const walked: string[] = []
    for (let page = 1; page <= 3; page++) {
      const body = await list(`type=application&limit=2&page=${page}`)
      expect(body.pagination).toMatchObject({ page, limit: 2, total: 5, pages: 3 })
      expect(body.pagination.next_before_id).toBe(page < 3 ? body.files.at(-1)!.file_id : null)
      walked.push(...body.files.map((file) => file.filename))
    }
    expect(walked).toEqual(application)
    // before_id, both orders
    for (const order of ['desc', 'asc'] as const) {
      const stable: string[] = []
      let body = await list(`type=application&order=${order}&limit=2`)
      stable.push(...body.files.map((file) => file.filename))
      while (body.pagination.next_before_id !== null) {
        body = await list(`type=application&order=${order}&limit=2&before_id=${body.pagination.next_before_id}`)
        expect(body.pagination).toMatchObject({ page: null, limit: 2, total: 5, pages: 3 })
        stable.push(...body.files.map((file) => file.filename))
      }
      expect(stable).toEqual(order === 'desc' ? application : [...application].reverse())
    }
    expect(await names(`state=from_upload_request&before_id=${id.get('scan.pdf')}`)).toEqual([])
    expect(await names(`state=expiring&order=asc&before_id=${id.get('report.pdf')}`)).toEqual(['photo-expiring.png'])
    // The other rules still hold with filters.
    await expectInvalid(
      'type=image&sort=size&before_id=5',
      'before_id pages only with sort=upload_date (either order); with sort=size, page with page.',
    )
  })

  it('the dashboard list (a session, the same route) filters alike', async () => {
    const holder = await signedInHolder(t, 'filters')
    await upload('mine.png', 2, { 'fileshare-expires-in': '3600' }, holder.apiKey)
    await upload('mine.txt', 2, {}, holder.apiKey)
    const dashboard = (query: string) => fetch(`${t.url}/dashboard/api/files?${query}`, { headers: { cookie: holder.cookie } })
    const found = (await (await dashboard('type=IMAGE&state=expiring')).json()) as ListBody
    expect(found.files.map((file) => file.filename)).toEqual(['mine.png'])
    expect(found.pagination).toEqual({ page: 1, limit: 20, total: 1, pages: 1, next_before_id: null })
    const refused = await dashboard('state=old')
    expect(refused.status).toBe(400)
    expect(await refused.json()).toEqual({
      success: false,
      error: { code: 'invalid_parameter', message: 'state must be one of expiring, expired_links, from_upload_request, got "old".' },
    })
  })

  it('refuses anything else with 400 invalid_parameter and an exact message', async () => {
    const typeMessage = (given: string) => `type must be a media type (image) or type/subtype (application/pdf), got ${given}.`
    await expectInvalid('type=', typeMessage('""'))
    await expectInvalid('type=image/', typeMessage('"image/"'))
    await expectInvalid('type=/png', typeMessage('"/png"'))
    await expectInvalid('type=image/*', typeMessage('"image/*"'))
    await expectInvalid('type=*', typeMessage('"*"'))
    await expectInvalid('type=a/b/c', typeMessage('"a/b/c"'))
    await expectInvalid('type=-image', typeMessage('"-image"'))
    await expectInvalid('type=text/plain;charset=utf-8', typeMessage('"text/plain;charset=utf-8"'))
    await expectInvalid('type=text/plain%20', typeMessage('"text/plain "'))
    // Only A to Z fold: the dotless ı is no letter of a token, not "i".
    await expectInvalid('type=%C4%B1mage', typeMessage('"ımage"'))
    await expectInvalid(`type=${'a'.repeat(128)}`, typeMessage(`"${'a'.repeat(40)}…"`))
    expect(await names(`type=${'a'.repeat(127)}`)).toEqual([])
    await expectInvalid('type=image&type=video%3F', typeMessage('"video?"'))

    const stateMessage = (given: string) => `state must be one of expiring, expired_links, from_upload_request, got ${given}.`
    await expectInvalid('state=', stateMessage('""'))
    await expectInvalid('state=expired', stateMessage('"expired"'))
    await expectInvalid('state=EXPIRING', stateMessage('"EXPIRING"'))
    await expectInvalid('state=expiring&state=revoked', stateMessage('"revoked"'))

    await expectInvalid(Array.from({ length: 21 }, () => 'type=image').join('&'), 'type must be given at most 20 times, got 21.')
    await expectInvalid(Array.from({ length: 21 }, () => 'state=expiring').join('&'), 'state must be given at most 20 times, got 21.')
    expect((await list(Array.from({ length: 20 }, () => 'type=image').join('&'))).pagination.total).toBe(3)
  })
})
