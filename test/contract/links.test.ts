import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bearer, fileForm, startTestApp, unlimitedAccount, uploadFile, type TestApp } from '../helpers/test-app.js'

/** Links as resources (../shared/spec/links.md), on both stacks. */

const PUBLIC_URL = 'http://files.example.test'
const TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/

interface Link {
  link_id: number
  file_id: number
  url: string
  default: boolean
  label: string | null
  expires_at: string | null
  max_downloads: number | null
  download_count: number
  password_protected: boolean
  status: 'active' | 'expired' | 'exhausted' | 'revoked'
  created_at: string
}

interface ErrorBody {
  success: false
  error: { code: string; message: string }
}

describe('links: the resource, its policies and the bot-proof download', () => {
  let t: TestApp
  beforeAll(async () => {
    // Many downloads from one address: the per-address download limit is not what is tested here.
    t = await startTestApp({ FILESHARE_DOWNLOADS_PER_MINUTE: '100000' })
  })
  afterAll(async () => {
    await t.close()
  })

  const account = () => unlimitedAccount(t)

  /** An account with one uploaded file. */
  async function withFile(content = 'the content of a shared file') {
    const { apiKey, accountId } = await account()
    const { body } = await uploadFile(t, apiKey, content, 'shared.txt')
    return { apiKey, accountId, fileId: body.file_id, publicLink: body.public_link, content }
  }

  function call(apiKey: string, method: string, path: string, body?: unknown) {
    return fetch(`${t.api}${path}`, {
      method,
      headers: { ...bearer(apiKey), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
  }

  async function createLink(apiKey: string, fileId: number, fields: Record<string, unknown> = {}): Promise<Link> {
    const response = await call(apiKey, 'POST', `/files/${fileId}/links`, fields)
    expect(response.status, JSON.stringify(fields)).toBe(201)
    const { link } = (await response.json()) as { link: Link }
    expect(response.headers.get('location')).toBe(`/api/v1/links/${link.link_id}`)
    return link
  }

  async function expectError(response: Response, status: number, code: string, message?: RegExp): Promise<ErrorBody> {
    const body = (await response.json()) as ErrorBody
    expect({ status: response.status, code: body.error?.code }).toEqual({ status, code })
    if (message) expect(body.error.message).toMatch(message)
    return body
  }

  /** The local path of a link's URL (its host is the public URL's). */
  const local = (url: string) => `${t.url}${new URL(url).pathname}`

  /** POSTs to a link as a client that takes the grant path; the redirect is not followed. */
  function grantPost(url: string, password?: string, headers: Record<string, string> = {}) {
    return fetch(local(url), {
      method: 'POST',
      redirect: 'manual',
      headers: password === undefined ? headers : { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
      body: password === undefined ? undefined : new URLSearchParams({ password }).toString(),
    })
  }

  async function grantUrl(url: string, password?: string): Promise<string> {
    const response = await grantPost(url, password)
    expect(response.status).toBe(303)
    const body = (await response.json()) as { download_url: string; expires_at: string }
    expect(response.headers.get('location')).toBe(body.download_url)
    expect(body.expires_at).toMatch(TIME)
    return body.download_url
  }

  describe('the resource', () => {
    it('creates a link with every field, lists the default link first then newest first, reads, changes and clears it', async () => {
      const { apiKey, fileId, publicLink } = await withFile()
      const first = await createLink(apiKey, fileId)
      expect(first).toEqual({
        link_id: expect.any(Number),
        file_id: fileId,
        url: expect.stringMatching(new RegExp(`^${PUBLIC_URL}/download/[A-Za-z0-9_-]{32}$`)),
        default: false,
        label: null,
        expires_at: null,
        max_downloads: null,
        download_count: 0,
        password_protected: false,
        status: 'active',
        created_at: expect.stringMatching(TIME),
      })
      const second = await createLink(apiKey, fileId, {
        label: 'for the auditors',
        expires_in: 3600,
        max_downloads: 3,
        password: 'correct horse',
      })
      expect(second).toMatchObject({ label: 'for the auditors', max_downloads: 3, password_protected: true, status: 'active' })
      expect(second.expires_at).toMatch(TIME)
      expect(JSON.stringify(second)).not.toContain('correct horse')

      const listed = (await (await call(apiKey, 'GET', `/files/${fileId}/links`)).json()) as { links: Link[] }
      expect(listed.links.map((link) => [link.link_id, link.default])).toEqual([
        [expect.any(Number), true],
        [second.link_id, false],
        [first.link_id, false],
      ])
      expect(listed.links[0]!.url).toBe(publicLink)

      expect(((await (await call(apiKey, 'GET', `/links/${second.link_id}`)).json()) as { link: Link }).link).toEqual(second)

      const patched = await call(apiKey, 'PATCH', `/links/${second.link_id}`, {
        label: null,
        expires_at: null,
        max_downloads: null,
        password: null,
      })
      expect(patched.status).toBe(200)
      expect(((await patched.json()) as { link: Link }).link).toMatchObject({
        label: null,
        expires_at: null,
        max_downloads: null,
        password_protected: false,
      })
      const set = await call(apiKey, 'PATCH', `/links/${first.link_id}`, { expires_at: '2031-01-02 03:04:05', label: 'renamed' })
      expect(((await set.json()) as { link: Link }).link).toMatchObject({ expires_at: '2031-01-02 03:04:05', label: 'renamed' })
      // An empty change changes nothing.
      expect(((await (await call(apiKey, 'PATCH', `/links/${first.link_id}`, {})).json()) as { link: Link }).link.label).toBe('renamed')
      // A create with no body at all is a link without a policy.
      const bare = await fetch(`${t.api}/files/${fileId}/links`, { method: 'POST', headers: bearer(apiKey) })
      expect(bare.status).toBe(201)
    })

    it('DELETE revokes: the URL answers 404 at once, the link is listed as revoked; the default link cannot go (409)', async () => {
      const { apiKey, fileId, publicLink } = await withFile()
      const link = await createLink(apiKey, fileId)
      expect((await fetch(local(link.url))).status).toBe(200)
      const deleted = await call(apiKey, 'DELETE', `/links/${link.link_id}`)
      expect(await deleted.json()).toEqual({ success: true, message: expect.any(String) })
      await expectError(await fetch(local(link.url)), 404, 'not_found')
      expect(((await (await call(apiKey, 'GET', `/links/${link.link_id}`)).json()) as { link: Link }).link.status).toBe('revoked')
      await expectError(await call(apiKey, 'DELETE', `/links/${link.link_id}`), 404, 'not_found')
      await expectError(await call(apiKey, 'PATCH', `/links/${link.link_id}`, { label: 'x' }), 404, 'not_found')

      const listed = (await (await call(apiKey, 'GET', `/files/${fileId}/links`)).json()) as { links: Link[] }
      const defaultLink = listed.links.find((item) => item.default)!
      await expectError(await call(apiKey, 'DELETE', `/links/${defaultLink.link_id}`), 409, 'default_link_required')
      expect((await fetch(local(publicLink))).status).toBe(200)
    })

    it("rotate gives a new URL and kills the old one at once, keeping counts; rotating the default link changes the file's public_link", async () => {
      const { apiKey, fileId, publicLink, content } = await withFile()
      expect(await (await fetch(local(publicLink))).text()).toBe(content)
      const { links } = (await (await call(apiKey, 'GET', `/files/${fileId}/links`)).json()) as { links: Link[] }
      const rotated = await call(apiKey, 'POST', `/links/${links[0]!.link_id}/rotate`)
      const { link } = (await rotated.json()) as { link: Link }
      expect(link).toMatchObject({ link_id: links[0]!.link_id, default: true, download_count: 1 })
      expect(link.url).not.toBe(publicLink)
      await expectError(await fetch(local(publicLink)), 404, 'not_found')
      expect(await (await fetch(local(link.url))).text()).toBe(content)
      const file = (await (await call(apiKey, 'GET', `/files/${fileId}`)).json()) as {
        file: { public_link: string; download_count: number }
      }
      expect(file.file).toMatchObject({ public_link: link.url, download_count: 2 })
    })

    it("another account's file or link is a 404 on every endpoint", async () => {
      const owner = await withFile()
      const link = await createLink(owner.apiKey, owner.fileId)
      const { apiKey } = await account()
      for (const [method, path, body] of [
        ['POST', `/files/${owner.fileId}/links`, {}],
        ['GET', `/files/${owner.fileId}/links`],
        ['PATCH', `/files/${owner.fileId}`, { filename: 'x' }],
        ['GET', `/links/${link.link_id}`],
        ['PATCH', `/links/${link.link_id}`, { label: 'x' }],
        ['DELETE', `/links/${link.link_id}`],
        ['POST', `/links/${link.link_id}/rotate`],
      ] as const) {
        await expectError(await call(apiKey, method, path, body), 404, 'not_found')
      }
      expect(((await (await call(owner.apiKey, 'GET', `/links/${link.link_id}`)).json()) as { link: Link }).link).toEqual(link)
    })

    it('every field rule is 400 invalid_parameter naming the field; unknown fields too; a body that is not a JSON object is invalid_request', async () => {
      const { apiKey, fileId } = await withFile()
      const cases: Array<[Record<string, unknown>, RegExp]> = [
        [{ expires_in: 0 }, /expires_in/],
        [{ expires_in: 315_360_001 }, /expires_in/],
        [{ expires_in: 1.5 }, /expires_in/],
        [{ expires_in: '60' }, /expires_in/],
        [{ expires_at: '2020-01-01 00:00:00' }, /expires_at must be in the future/],
        [{ expires_at: '2099-02-30 00:00:00' }, /expires_at must be a UTC time/],
        [{ expires_at: '2099-01-01T00:00:00Z' }, /expires_at must be a UTC time/],
        [{ expires_in: 60, expires_at: '2099-01-01 00:00:00' }, /expires_in and expires_at/],
        [{ max_downloads: 0 }, /max_downloads/],
        [{ max_downloads: 1_000_001 }, /max_downloads/],
        [{ max_downloads: '3' }, /max_downloads/],
        [{ password: 'short12' }, /password/],
        [{ password: 'x'.repeat(1025) }, /password/],
        [{ label: 'x'.repeat(101) }, /label/],
        [{ label: 'two\nlines' }, /label/],
        [{ colour: 'blue' }, /colour is not a known field/],
      ]
      for (const [fields, message] of cases) {
        await expectError(await call(apiKey, 'POST', `/files/${fileId}/links`, fields), 400, 'invalid_parameter', message)
      }
      const link = await createLink(apiKey, fileId, { max_downloads: 5 })
      for (const [fields, message] of cases) {
        await expectError(await call(apiKey, 'PATCH', `/links/${link.link_id}`, fields), 400, 'invalid_parameter', message)
      }
      for (const body of ['{"label":', '[1]', '"text"', 'null']) {
        const response = await fetch(`${t.api}/files/${fileId}/links`, {
          method: 'POST',
          headers: { ...bearer(apiKey), 'content-type': 'application/json' },
          body,
        })
        await expectError(response, 400, 'invalid_request')
      }
      // Nothing was created by any refusal.
      const { links } = (await (await call(apiKey, 'GET', `/files/${fileId}/links`)).json()) as { links: Link[] }
      expect(links).toHaveLength(2)
      expect(links[1]).toEqual(link)
    })

    it('max_downloads cannot go below the downloads already counted', async () => {
      const { apiKey, fileId } = await withFile()
      const link = await createLink(apiKey, fileId, { max_downloads: 5 })
      for (let i = 0; i < 3; i++) await grantUrl(link.url)
      await expectError(
        await call(apiKey, 'PATCH', `/links/${link.link_id}`, { max_downloads: 2 }),
        400,
        'invalid_parameter',
        /download_count \(3\)/,
      )
      expect((await call(apiKey, 'PATCH', `/links/${link.link_id}`, { max_downloads: 3 })).status).toBe(200)
      expect(((await (await call(apiKey, 'GET', `/links/${link.link_id}`)).json()) as { link: Link }).link.status).toBe('exhausted')
    })

    it('at most 100 links that are not revoked per file, the default included: the next is 403 link_limit_exceeded', async () => {
      const { apiKey, accountId, fileId } = await withFile()
      for (let i = 0; i < 98; i++) await t.app.services.links.create(accountId, fileId, {})
      const last = await createLink(apiKey, fileId)
      await expectError(await call(apiKey, 'POST', `/files/${fileId}/links`, {}), 403, 'link_limit_exceeded')
      await call(apiKey, 'DELETE', `/links/${last.link_id}`)
      await createLink(apiKey, fileId)
    })
  })

  describe('downloading through a link with a policy', () => {
    const BOTS: Array<Record<string, string>> = [
      { 'user-agent': 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)', accept: '*/*' },
      { 'user-agent': 'Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)' },
      { 'user-agent': 'TelegramBot (like TwitterBot)', accept: 'text/html' },
      { 'user-agent': 'Mozilla/5.0 Chrome/131', accept: 'text/html,application/xhtml+xml', purpose: 'prefetch', 'sec-purpose': 'prefetch' },
      { 'user-agent': 'Microsoft Office Protocol Discovery', accept: 'application/octet-stream' },
    ]

    it('GET and HEAD, from bots, previews and prefetching browsers, stream nothing and count nothing', async () => {
      const { apiKey, fileId, content } = await withFile()
      const link = await createLink(apiKey, fileId, { max_downloads: 1, expires_in: 86_400 })
      for (const headers of BOTS) {
        for (const method of ['GET', 'HEAD']) {
          const response = await fetch(local(link.url), { method, headers })
          expect(response.status).toBe(200)
          const text = await response.text()
          expect(text).not.toContain(content)
        }
      }
      const json = await fetch(local(link.url))
      expect(await json.json()).toEqual({
        success: true,
        download: {
          filename: 'shared.txt',
          size: content.length,
          content_type: 'text/plain',
          password_required: false,
          expires_at: link.expires_at,
          downloads_left: 1,
        },
      })
      const page = await fetch(local(link.url), { headers: { accept: 'text/html' } })
      expect(page.headers.get('content-type')).toMatch(/^text\/html/)
      expect(page.headers.get('content-security-policy')).toContain("form-action 'self'")
      const html = await page.text()
      expect(html).toContain('shared.txt')
      expect(html).toContain('<form method="post">')
      expect(html).toContain('Downloads left</dt><dd>1')
      expect(((await (await call(apiKey, 'GET', `/links/${link.link_id}`)).json()) as { link: Link }).link.download_count).toBe(0)

      // The one download left is still there for the person it was meant for.
      const grant = await grantUrl(link.url)
      expect(await (await fetch(local(grant))).text()).toBe(content)
    })

    it('a grant streams with ranges, validators and HEAD, counts nothing more, and outlives the exhausted link for its hour', async () => {
      const { apiKey, fileId, content } = await withFile('0123456789abcdef')
      const link = await createLink(apiKey, fileId, { max_downloads: 1 })
      const grant = await grantUrl(link.url)
      const whole = await fetch(local(grant))
      expect(whole.status).toBe(200)
      expect(whole.headers.get('content-disposition')).toMatch(/^attachment/)
      const etag = whole.headers.get('etag')!
      expect(await whole.text()).toBe(content)
      const part = await fetch(local(grant), { headers: { range: 'bytes=4-7', 'if-range': etag } })
      expect(part.status).toBe(206)
      expect(await part.text()).toBe('4567')
      expect((await fetch(local(grant), { headers: { 'if-none-match': etag } })).status).toBe(304)
      const head = await fetch(local(grant), { method: 'HEAD' })
      expect(head.headers.get('content-length')).toBe(String(content.length))
      for (let i = 0; i < 3; i++) expect(await (await fetch(local(grant))).text()).toBe(content)

      expect(((await (await call(apiKey, 'GET', `/links/${link.link_id}`)).json()) as { link: Link }).link).toMatchObject({
        download_count: 1,
        status: 'exhausted',
      })
      // Exhausted: the link is dead to newcomers, the grant keeps working until its hour is up.
      await expectError(await grantPost(link.url), 404, 'not_found')
      await expectError(await fetch(local(link.url)), 404, 'not_found')
      expect(await (await fetch(local(grant))).text()).toBe(content)
      t.advanceClock(3_600_000)
      await expectError(await fetch(local(grant)), 404, 'not_found')
    })

    it('a grant dies with its link when the link is revoked or rotated, or the file is deleted', async () => {
      const { apiKey, fileId } = await withFile()
      const [revoked, rotated] = [
        await createLink(apiKey, fileId, { max_downloads: 5 }),
        await createLink(apiKey, fileId, { max_downloads: 5 }),
      ]
      const grants = [await grantUrl(revoked.url), await grantUrl(rotated.url)]
      const other = await grantUrl((await createLink(apiKey, fileId)).url)
      await call(apiKey, 'DELETE', `/links/${revoked.link_id}`)
      await call(apiKey, 'POST', `/links/${rotated.link_id}/rotate`)
      for (const grant of grants) await expectError(await fetch(local(grant)), 404, 'not_found')
      expect((await fetch(local(other))).status).toBe(200)
      await call(apiKey, 'DELETE', `/files/${fileId}`)
      await expectError(await fetch(local(other)), 404, 'not_found')
    })

    it('passwords: missing or wrong is 401 invalid_password; the right one (form or JSON) gives a grant; never echoed', async () => {
      const { apiKey, fileId, content } = await withFile()
      const link = await createLink(apiKey, fileId, { password: 'open sesame' })
      expect(
        ((await (await fetch(local(link.url))).json()) as { download: { password_required: boolean } }).download.password_required,
      ).toBe(true)
      const page = await (await fetch(local(link.url), { headers: { accept: 'text/html' } })).text()
      expect(page).toMatch(/<label for="password">Password<\/label>\s*<input id="password" name="password" type="password"/)
      await expectError(await grantPost(link.url), 401, 'invalid_password')
      const wrong = await expectError(await grantPost(link.url, 'open sesam'), 401, 'invalid_password')
      expect(JSON.stringify(wrong)).not.toContain('sesam')
      const json = await fetch(local(link.url), {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ password: 'open sesame' }),
      })
      expect(json.status).toBe(303)
      expect(await (await fetch(local(await grantUrl(link.url, 'open sesame')))).text()).toBe(content)
      // A browser that sent a wrong password gets the page again, saying so, with the same status.
      const again = await fetch(local(link.url), {
        method: 'POST',
        headers: { accept: 'text/html', 'content-type': 'application/x-www-form-urlencoded' },
        body: 'password=nope-nope',
      })
      expect(again.status).toBe(401)
      expect(await again.text()).toContain('That password is wrong')
    })

    it('after ten wrong passwords from one address on one link within 15 minutes, even the right one is 429 with Retry-After', async () => {
      const { apiKey, fileId } = await withFile()
      const link = await createLink(apiKey, fileId, { password: 'the right one' })
      const other = await createLink(apiKey, fileId, { password: 'the right one' })
      const wrong = await Promise.all(Array.from({ length: 10 }, (_, i) => grantPost(link.url, `wrong ${i} guess`)))
      expect(wrong.map((response) => response.status)).toEqual(Array(10).fill(401))
      const limited = await grantPost(link.url, 'the right one')
      await expectError(limited, 429, 'rate_limited')
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0)
      expect(Number(limited.headers.get('retry-after'))).toBeLessThanOrEqual(900)
      // Another link from the same address is not affected.
      expect((await grantPost(other.url, 'the right one')).status).toBe(303)
    })

    it('guesses sent at once cannot slip past the limit: of 25 concurrent wrong passwords, exactly 10 are tried', async () => {
      const { apiKey, fileId } = await withFile()
      const link = await createLink(apiKey, fileId, { password: 'the right one' })
      const answers = await Promise.all(Array.from({ length: 25 }, (_, i) => grantPost(link.url, `guess number ${i}`)))
      const statuses = answers.map((response) => response.status).sort()
      expect(statuses).toEqual([...Array(10).fill(401), ...Array(15).fill(429)])
    })

    it('a POST counts on every link, with or without a policy, and a GET of a link without one counts once from byte 0', async () => {
      const { apiKey, fileId, publicLink, content } = await withFile()
      expect(await (await fetch(local(await grantUrl(publicLink)))).text()).toBe(content)
      expect((await fetch(local(publicLink), { headers: { range: 'bytes=3-' } })).status).toBe(206)
      expect((await fetch(local(publicLink), { method: 'HEAD' })).status).toBe(200)
      expect(await (await fetch(local(publicLink))).text()).toBe(content)
      const { file } = (await (await call(apiKey, 'GET', `/files/${fileId}`)).json()) as { file: { download_count: number } }
      expect(file.download_count).toBe(2)
      const stats = (await (await call(apiKey, 'GET', '/stats')).json()) as { stats: { total_downloads: number } }
      expect(stats.stats.total_downloads).toBe(2)
    })

    it('of 50 concurrent POSTs on a link with 7 downloads left, exactly 7 get a grant', async () => {
      const { apiKey, fileId } = await withFile()
      const link = await createLink(apiKey, fileId, { max_downloads: 10 })
      for (let i = 0; i < 3; i++) await grantUrl(link.url)
      const responses = await Promise.all(Array.from({ length: 50 }, () => grantPost(link.url)))
      const statuses = responses.map((response) => response.status)
      expect(statuses.filter((status) => status === 303)).toHaveLength(7)
      expect(statuses.filter((status) => status === 404)).toHaveLength(43)
      await Promise.all(responses.map((response) => response.arrayBuffer()))
      const { link: after } = (await (await call(apiKey, 'GET', `/links/${link.link_id}`)).json()) as { link: Link }
      expect(after).toMatchObject({ download_count: 10, status: 'exhausted' })
      const { file } = (await (await call(apiKey, 'GET', `/files/${fileId}`)).json()) as { file: { download_count: number } }
      expect(file.download_count).toBe(10)
    })

    it('a dead link is indistinguishable from an unknown token: same status, body and page', async () => {
      const { apiKey, fileId } = await withFile()
      const exhausted = await createLink(apiKey, fileId, { max_downloads: 1 })
      await grantUrl(exhausted.url)
      const revoked = await createLink(apiKey, fileId)
      await call(apiKey, 'DELETE', `/links/${revoked.link_id}`)
      const rotatedAway = await createLink(apiKey, fileId, { password: 'password1' })
      await call(apiKey, 'POST', `/links/${rotatedAway.link_id}/rotate`)
      const expired = await createLink(apiKey, fileId, { expires_in: 1 })
      t.advanceClock(1_000)
      const unknown = `${PUBLIC_URL}/download/${'A'.repeat(32)}`
      const answers = async (url: string) => {
        const json = await fetch(local(url))
        const page = await fetch(local(url), { headers: { accept: 'text/html' } })
        const post = await grantPost(url, 'password1')
        return [json.status, await json.text(), page.status, await page.text(), post.status, await post.text()]
      }
      const expected = await answers(unknown)
      expect(expected[0]).toBe(404)
      for (const link of [exhausted, revoked, rotatedAway, expired]) expect(await answers(link.url), link.url).toEqual(expected)
    })
  })

  describe('file expiry', () => {
    it('Fileshare-Expires-In on upload: exact to the second at the API and the link, stats drop the file, the collector takes the bytes', async () => {
      const { apiKey } = await account()
      const keptUpload = await uploadFile(t, apiKey, 'kept', 'kept.txt')
      const response = await fetch(`${t.api}/files/upload`, {
        method: 'POST',
        headers: { ...bearer(apiKey), 'fileshare-expires-in': '60' },
        body: fileForm('short-lived', 'brief.txt'),
      })
      expect(response.status).toBe(201)
      const uploaded = (await response.json()) as { file_id: number; public_link: string; expires_at: string; upload_date: string }
      expect(Date.parse(`${uploaded.expires_at}Z`) - Date.parse(`${uploaded.upload_date}Z`)).toBe(60_000)
      const link = await createLink(apiKey, uploaded.file_id, { expires_in: 3600 })
      const stats = async () =>
        ((await (await call(apiKey, 'GET', '/stats')).json()) as { stats: { total_files: number; total_size: number } }).stats
      expect(await stats()).toMatchObject({ total_files: 2, total_size: 4 + 11 })

      t.advanceClock(59_000)
      expect((await fetch(local(uploaded.public_link))).status).toBe(200)
      t.advanceClock(1_000)
      await expectError(await fetch(local(uploaded.public_link)), 404, 'not_found')
      await expectError(await fetch(local(link.url)), 404, 'not_found')
      await expectError(await call(apiKey, 'GET', `/files/${uploaded.file_id}`), 404, 'not_found')
      await expectError(await call(apiKey, 'GET', `/files/${uploaded.file_id}/links`), 404, 'not_found')
      await expectError(await call(apiKey, 'GET', `/links/${link.link_id}`), 404, 'not_found')
      await expectError(await call(apiKey, 'PATCH', `/files/${uploaded.file_id}`, { expires_at: null }), 404, 'not_found')
      await expectError(await call(apiKey, 'DELETE', `/files/${uploaded.file_id}`), 404, 'not_found')
      const list = (await (await call(apiKey, 'GET', '/files')).json()) as {
        files: Array<{ file_id: number }>
        pagination: { total: number }
      }
      expect(list.files.map((file) => file.file_id)).toEqual([keptUpload.body.file_id])
      expect(list.pagination.total).toBe(1)
      expect(await stats()).toMatchObject({ total_files: 1, total_size: 4 })

      // The bytes go with the next sweep; the figures stay exact.
      const blobsBefore = (await t.storedBlobs()).length
      const report = await t.app.services.garbageCollector.collect({ graceMs: 0 })
      expect(report.filesExpired).toBeGreaterThanOrEqual(1)
      expect((await t.storedBlobs()).length).toBeLessThan(blobsBefore)
      expect(await stats()).toMatchObject({ total_files: 1, total_size: 4 })
    })

    it('a resumable upload takes the lifetime from Fileshare-Expires-In or its expires_in metadata, counted from completion', async () => {
      const { apiKey } = await account()
      const b64 = (text: string) => Buffer.from(text).toString('base64')
      const tus = { ...bearer(apiKey), 'tus-resumable': '1.0.0' }
      for (const [extra, seconds] of [
        [{ 'fileshare-expires-in': '300', 'upload-metadata': `filename ${b64('a.txt')}` }, 300],
        [{ 'upload-metadata': `filename ${b64('b.txt')},expires_in ${b64('7200')}` }, 7200],
      ] as const) {
        const created = await fetch(`${t.api}/uploads`, { method: 'POST', headers: { ...tus, 'upload-length': '5', ...extra } })
        expect(created.status).toBe(201)
        const location = created.headers.get('location')!
        t.advanceClock(10_000)
        const patched = await fetch(new URL(location, t.url), {
          method: 'PATCH',
          headers: { ...tus, 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' },
          body: 'hello',
        })
        expect(patched.status).toBe(204)
        const status = (await (await fetch(new URL(location, t.url), { headers: bearer(apiKey) })).json()) as {
          upload: { file: { upload_date: string; expires_at: string } }
        }
        const { upload_date, expires_at } = status.upload.file
        expect(Date.parse(`${expires_at}Z`) - Date.parse(`${upload_date}Z`)).toBe(seconds * 1000)
      }
      const both = await fetch(`${t.api}/uploads`, {
        method: 'POST',
        headers: { ...tus, 'upload-length': '5', 'fileshare-expires-in': '60', 'upload-metadata': `expires_in ${b64('60')}` },
      })
      await expectError(both, 400, 'invalid_parameter', /not both/)
      const bad = await fetch(`${t.api}/uploads`, {
        method: 'POST',
        headers: { ...tus, 'upload-length': '5', 'upload-metadata': `expires_in ${b64('forever')}` },
      })
      await expectError(bad, 400, 'invalid_parameter', /expires_in/)
    })

    it('PATCH /files sets, moves and removes the expiry and renames; every field rule is invalid_parameter', async () => {
      const { apiKey, fileId, publicLink } = await withFile()
      const patch = (body: unknown) => call(apiKey, 'PATCH', `/files/${fileId}`, body)
      const set = (await (await patch({ expires_in: 120, filename: '../report final.txt' })).json()) as {
        file: { expires_at: string; filename: string }
      }
      expect(set.file.filename).toBe('report final.txt')
      expect(set.file.expires_at).toMatch(TIME)
      const removed = (await (await patch({ expires_at: null })).json()) as { file: { expires_at: null } }
      expect(removed.file.expires_at).toBeNull()
      t.advanceClock(121_000)
      expect((await fetch(local(publicLink))).status).toBe(200)
      for (const [body, message] of [
        [{ expires_in: 0 }, /expires_in/],
        [{ expires_at: '2001-01-01 00:00:00' }, /expires_at/],
        [{ expires_in: 5, expires_at: '2099-01-01 00:00:00' }, /expires_in and expires_at/],
        [{ filename: '' }, /filename/],
        [{ owner: 2 }, /owner is not a known field/],
      ] as const) {
        await expectError(await patch(body), 400, 'invalid_parameter', message)
      }
      for (const header of ['0', '-5', '1e3', '315360001', 'soon']) {
        const response = await fetch(`${t.api}/files/upload`, {
          method: 'POST',
          headers: { ...bearer(apiKey), 'fileshare-expires-in': header },
          body: fileForm('x'),
        })
        await expectError(response, 400, 'invalid_parameter', /Fileshare-Expires-In/)
      }
    })
  })
})
