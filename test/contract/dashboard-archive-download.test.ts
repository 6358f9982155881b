import type { RouteOptions } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MAX_ARCHIVE_FILES } from '../../src/services/archives.js'
import { signedInHolder } from '../helpers/dashboard-session.js'
import { startTestApp, uploadFile, type TestApp } from '../helpers/test-app.js'
import { readZip } from '../helpers/zip-reader.js'

/** A signed-in holder as the page knows it: the session's cookie and its CSRF token (from GET session, as the page takes it). */
interface Session {
  cookie: string
  csrf: string
}

/**
 * `POST /dashboard/api/files/archive-download`: the Files page's "Download as ZIP" as a plain form
 * post (fields `csrf_token` and `ids`), so that the browser streams the ZIP to its downloads. The
 * same ZIP and the same refusals as the JSON route, with the session's CSRF token taken from the
 * form field (checked before anything else of the body), our own Origin, and no API limit counted.
 */
describe('the dashboard downloads the chosen files as one ZIP through a plain form', () => {
  let t: TestApp
  let holder: { accountId: number; apiKey: string }
  let session: Session
  const formCsrfRoutes: string[] = []

  async function newHolder(): Promise<{ accountId: number; apiKey: string; session: Session }> {
    const { cookie, ...signedIn } = await signedInHolder(t, 'archive-form')
    const { csrf_token: csrf } = (await (await fetch(`${t.url}/dashboard/api/session`, { headers: { cookie } })).json()) as {
      csrf_token: string
    }
    return { ...signedIn, session: { cookie, csrf } }
  }

  /** The form as the page posts it; `fields` and `headers` override the session's token, origin and cookie. */
  function postForm(ids: string, as: Session | undefined, fields: Record<string, string> = {}, headers: Record<string, string> = {}) {
    const form = new URLSearchParams({ ...(as ? { csrf_token: as.csrf } : {}), ids, ...fields })
    return fetch(`${t.url}/dashboard/api/files/archive-download`, {
      method: 'POST',
      headers: {
        origin: t.url,
        'content-type': 'application/x-www-form-urlencoded',
        ...(as ? { cookie: as.cookie } : {}),
        ...headers,
      },
      body: form.toString(),
    })
  }

  async function upload(content: string, name: string): Promise<number> {
    const { body } = await uploadFile(t, holder.apiKey, content, name)
    return body.file_id as number
  }

  const requestsToday = async (as: Session) =>
    ((await (await fetch(`${t.url}/dashboard/api/usage`, { headers: { cookie: as.cookie } })).json()) as { requests_today: number })
      .requests_today

  async function expectError(response: Response, status: number, code: string) {
    expect(response.status).toBe(status)
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe(code)
  }

  beforeAll(async () => {
    t = await startTestApp(
      {},
      {
        onRoute: (route: RouteOptions) => {
          if (route.config?.csrf === 'form') formCsrfRoutes.push(`${[route.method].flat().join(',')} ${route.url}`)
        },
      },
    )
    ;({ session, ...holder } = await newHolder())
  })
  afterAll(async () => {
    await t?.close()
  })

  it('streams the files given as one ZIP attachment, in their order, and counts against no API limit', async () => {
    const first = await upload('the first', 'notes.txt')
    const second = await upload('the second', 'NOTES.txt')
    const before = await requestsToday(session)
    const response = await postForm(`${second},${first}`, session)
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('application/zip')
    expect(response.headers.get('content-disposition')).toMatch(/^attachment; filename="files-\d{8}-\d{6}\.zip"$/)
    expect(response.headers.get('cache-control')).toBe('no-store')
    const archive = Buffer.from(await response.arrayBuffer())
    expect(Number(response.headers.get('content-length'))).toBe(archive.length)
    const { entries } = await readZip(archive)
    expect(entries.map((entry) => [entry.name, entry.data.toString()])).toEqual([
      ['NOTES.txt', 'the second'],
      ['notes (2).txt', 'the first'],
    ])
    expect(await requestsToday(session)).toBe(before)
  })

  it('refuses the whole archive for a file that is not the holder’s: 404 naming it', async () => {
    const mine = await upload('mine', 'mine.txt')
    const other = await newHolder()
    const { body: theirs } = await uploadFile(t, other.apiKey, 'theirs', 'theirs.txt')
    const response = await postForm(`${mine},${theirs.file_id}`, session)
    expect(response.status).toBe(404)
    const { error } = (await response.json()) as { error: { code: string; message: string } }
    expect(error.code).toBe('not_found')
    expect(error.message).toContain(String(theirs.file_id))
  })

  it('needs the session, its CSRF token in the form field, and our own origin', async () => {
    const id = await upload('kept', 'kept.txt')
    await expectError(await postForm(String(id), undefined), 401, 'sign_in_required')
    const without = new URLSearchParams({ ids: String(id) }).toString()
    const noToken = await fetch(`${t.url}/dashboard/api/files/archive-download`, {
      method: 'POST',
      headers: { origin: t.url, 'content-type': 'application/x-www-form-urlencoded', cookie: session.cookie },
      body: without,
    })
    await expectError(noToken, 403, 'csrf_failed')
    await expectError(await postForm(String(id), session, { csrf_token: 'x'.repeat(43) }), 403, 'csrf_failed')
    await expectError(await postForm(String(id), session, { csrf_token: '' }), 403, 'csrf_failed')
    // Another holder's token is no token for this session.
    const { session: other } = await newHolder()
    await expectError(await postForm(String(id), session, { csrf_token: other.csrf }), 403, 'csrf_failed')
    // The token in the header, as the JSON routes take it, is not looked at here.
    await expectError(await postForm(String(id), session, { csrf_token: '' }, { 'x-csrf-token': session.csrf }), 403, 'csrf_failed')
    await expectError(await postForm(String(id), session, {}, { origin: 'https://evil.example' }), 403, 'csrf_failed')
    // The token is checked before the ids: bad ids without it are refused as a forgery, not described.
    await expectError(await postForm('nonsense', session, { csrf_token: 'x' }), 403, 'csrf_failed')
  })

  it('checks the ids as the JSON route does: 1 to the most, distinct, positive integers', async () => {
    const id = await upload('one', 'one.txt')
    for (const ids of ['', ',', `${id},${id}`, '0', '-1', '1.5', 'abc', ` ${id}`, `${id},`, '1e3']) {
      await expectError(await postForm(ids, session), 400, 'invalid_parameter')
    }
    const tooMany = Array.from({ length: MAX_ARCHIVE_FILES + 1 }, (_, i) => i + 1).join(',')
    await expectError(await postForm(tooMany, session), 400, 'invalid_parameter')
  })

  it('is the one route whose CSRF token comes in a form field, and, as the dashboard, not in the OpenAPI document', async () => {
    expect(formCsrfRoutes).toEqual(['POST /dashboard/api/files/archive-download'])
    const { paths } = (await (await fetch(`${t.api}/openapi.json`)).json()) as { paths: Record<string, unknown> }
    expect(Object.keys(paths).filter((path) => path.includes('archive'))).toEqual(['/api/v1/files/archive'])
  })
})
