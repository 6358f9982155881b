import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bearer, startTestApp, uploadFile, type TestApp } from '../helpers/test-app.js'
import { readZip } from '../helpers/zip-reader.js'

const PASSWORD = 'correct horse battery staple'

interface Session {
  id: string
  csrf: string
}

/**
 * The Files page's selection through the dashboard's own endpoints (issue 37): `POST
 * /dashboard/api/files/delete` and `POST /dashboard/api/files/archive` answer as the API's routes do,
 * need the session, its CSRF token and the same origin as every other state change there, touch
 * only the holder's files, and, as every dashboard call, count against none of the API's limits.
 */
describe('the dashboard deletes several files and downloads them as one ZIP', () => {
  let t: TestApp
  let holder: { accountId: number; apiKey: string; email: string }
  let session: Session
  let counter = 0

  async function newHolder() {
    const email = `selection-${++counter}-${Date.now()}@example.test`
    const { accountId, apiKey } = await t.createAccount('pro', email)
    await t.app.services.accountHolders.setPassword(accountId, PASSWORD)
    return { accountId, apiKey, email }
  }

  async function signIn(email: string): Promise<Session> {
    const response = await fetch(`${t.url}/dashboard/api/sign-in`, {
      method: 'POST',
      headers: { origin: t.url, 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: PASSWORD }),
    })
    expect(response.status).toBe(200)
    const cookie = response.headers.getSetCookie().find((header) => header.startsWith('fileshare_session='))!
    return {
      id: cookie.split(';')[0]!.slice('fileshare_session='.length),
      csrf: ((await response.json()) as { csrf_token: string }).csrf_token,
    }
  }

  /** A POST of `ids` as the page sends it; `headers` overrides the session's (origin, token). */
  function post(path: 'files/delete' | 'files/archive', ids: unknown, as: Session | undefined, headers: Record<string, string> = {}) {
    return fetch(`${t.url}/dashboard/api/${path}`, {
      method: 'POST',
      headers: {
        origin: t.url,
        'content-type': 'application/json',
        ...(as ? { cookie: `fileshare_session=${as.id}`, 'x-csrf-token': as.csrf } : {}),
        ...headers,
      },
      body: JSON.stringify({ ids }),
    })
  }

  async function upload(content: string, name: string): Promise<number> {
    const { body } = await uploadFile(t, holder.apiKey, content, name)
    return body.file_id as number
  }

  const listedIds = async () =>
    (
      (await (await fetch(`${t.api}/files?limit=100`, { headers: bearer(holder.apiKey) })).json()) as { files: { file_id: number }[] }
    ).files.map((file) => file.file_id)
  const requestsToday = async (as: Session) =>
    (
      (await (
        await fetch(`${t.url}/dashboard/api/usage`, { headers: { origin: t.url, cookie: `fileshare_session=${as.id}` } })
      ).json()) as {
        requests_today: number
      }
    ).requests_today

  async function expectError(response: Response, status: number, code: string) {
    expect(response.status).toBe(status)
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe(code)
  }

  beforeAll(async () => {
    t = await startTestApp()
    holder = await newHolder()
    session = await signIn(holder.email)
  })
  afterAll(async () => {
    await t?.close()
  })

  it('deletes the files given, says which were deleted and which were not found, another holder’s among them', async () => {
    const [a, b, c] = [await upload('a', 'a.txt'), await upload('b', 'b.txt'), await upload('c', 'c.txt')]
    const other = await newHolder()
    const { body: theirs } = await uploadFile(t, other.apiKey, 'theirs', 'theirs.txt')
    expect((await fetch(`${t.api}/files/${b}`, { method: 'DELETE', headers: bearer(holder.apiKey) })).status).toBe(200)

    const response = await post('files/delete', [c, b, theirs.file_id, a], session)
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({ success: true, deleted: [c, a], not_found: [b, theirs.file_id] })
    expect(await listedIds()).toEqual([])
    // The other holder's file is untouched.
    expect((await fetch(`${t.api}/files/${theirs.file_id}`, { headers: bearer(other.apiKey) })).status).toBe(200)
  })

  it('streams the files given as one ZIP, in their order, with the names made unique', async () => {
    const first = await upload('the first', 'notes.txt')
    const second = await upload('the second', 'NOTES.txt')
    const response = await post('files/archive', [second, first], session)
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('application/zip')
    expect(response.headers.get('content-disposition')).toMatch(/^attachment; filename="files-\d{8}-\d{6}\.zip"$/)
    const archive = Buffer.from(await response.arrayBuffer())
    expect(Number(response.headers.get('content-length'))).toBe(archive.length)
    const { entries } = await readZip(archive)
    expect(entries.map((entry) => [entry.name, entry.data.toString()])).toEqual([
      ['NOTES.txt', 'the second'],
      ['notes (2).txt', 'the first'],
    ])
    // One that is not the holder's refuses the whole archive, before any byte.
    const other = await newHolder()
    const { body: theirs } = await uploadFile(t, other.apiKey, 'theirs', 'theirs.txt')
    await expectError(await post('files/archive', [first, theirs.file_id], session), 404, 'not_found')
  })

  it('needs the session, its CSRF token and our own origin; a refused delete deletes nothing', async () => {
    const kept = await upload('kept', 'kept.txt')
    const forged = { ...session, csrf: 'x'.repeat(43) }
    for (const path of ['files/delete', 'files/archive'] as const) {
      await expectError(await post(path, [kept], undefined), 401, 'sign_in_required')
      await expectError(await post(path, [kept], forged), 403, 'csrf_failed')
      await expectError(await post(path, [kept], session, { 'x-csrf-token': '' }), 403, 'csrf_failed')
      await expectError(await post(path, [kept], session, { origin: 'https://evil.example' }), 403, 'csrf_failed')
    }
    expect(await listedIds()).toContain(kept)
    // A plain form (what another site could make a browser send) is refused too, for want of the token.
    const form = await fetch(`${t.url}/dashboard/api/files/delete`, {
      method: 'POST',
      headers: { origin: t.url, cookie: `fileshare_session=${session.id}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: `ids=${kept}`,
    })
    expect(form.status).toBe(403)
    expect(await listedIds()).toContain(kept)
  })

  it('checks the body as the API does: 1 to 100 distinct ids to delete', async () => {
    await expectError(await post('files/delete', [], session), 400, 'invalid_parameter')
    await expectError(await post('files/delete', [1, 1], session), 400, 'invalid_parameter')
    await expectError(
      await post(
        'files/delete',
        Array.from({ length: 101 }, (_, i) => i + 1),
        session,
      ),
      400,
      'invalid_parameter',
    )
    await expectError(await post('files/archive', ['1'], session), 400, 'invalid_parameter')
  })

  it("counts against none of the API's limits, as every dashboard call", async () => {
    const id = await upload('counted?', 'counted.txt')
    const before = await requestsToday(session)
    expect((await post('files/archive', [id], session)).status).toBe(200)
    expect((await post('files/delete', [id], session)).status).toBe(200)
    expect(await requestsToday(session)).toBe(before)
  })
})
