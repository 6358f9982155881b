// client.links and files.update against the fake fetch: paths, methods, JSON bodies (an explicit
// null kept, undefined left out, a Date as the API's time), records, and which calls are retried.
import { describe, expect, it } from 'vitest'
import { APIConnectionError, BadRequestError, ConfigurationError, LimitExceededError } from '../../src/index.js'
import { FILE, LINK, apiError, connectionFailure, fakeClient, json, type Recorded } from '../helpers/fake-fetch.js'

const linkAnswer = () => json(200, { success: true, link: LINK })
const linkCreated = () => json(201, { success: true, link: LINK })
const call = (r: Recorded) => `${r.method} ${r.url.replace('http://fake.test/api/v1', '')}`
const bodyOf = (r: Recorded) => (r.body ? (JSON.parse(new TextDecoder().decode(r.body)) as unknown) : undefined)

describe('client.links', () => {
  it('create: POST /files/{id}/links with the options as JSON, and a Link record', async () => {
    const { client, requests } = fakeClient([() => linkCreated()])
    const link = await client.links.create(7, {
      label: 'for the auditors',
      expires_at: new Date(Date.UTC(2026, 11, 1, 0, 0, 0, 500)),
      max_downloads: 3,
      password: 'correct horse',
    })
    expect(requests.map(call)).toEqual(['POST /files/7/links'])
    expect(requests[0]!.headers.get('content-type')).toBe('application/json')
    expect(bodyOf(requests[0]!)).toEqual({
      label: 'for the auditors',
      expires_at: '2026-12-01 00:00:00',
      max_downloads: 3,
      password: 'correct horse',
    })
    expect(link).toMatchObject(LINK)
    expect(link.created.toISOString()).toBe('2026-11-27T10:00:00.000Z')
    expect(link.expiry?.toISOString()).toBe('2026-12-01T00:00:00.000Z')
    expect(link.downloads_left).toBe(2)
    // The extras are not enumerable: the record is the API's object.
    expect(JSON.parse(JSON.stringify(link))).toEqual(LINK)
  })

  it('create without options sends an empty object; a link without limit has downloads_left null', async () => {
    const plain = { ...LINK, max_downloads: null, expires_at: null, password_protected: false, label: null }
    const { client, requests } = fakeClient([() => json(201, { success: true, link: plain })])
    const link = await client.links.create('7')
    expect(bodyOf(requests[0]!)).toEqual({})
    expect(link.downloads_left).toBeNull()
    expect(link.expiry).toBeNull()
  })

  it('update: PATCH /links/{id}; null is sent (it clears), undefined is not, the signal is not', async () => {
    const { client, requests } = fakeClient([linkAnswer])
    await client.links.update(12, {
      max_downloads: null,
      password: null,
      expires_at: null,
      label: undefined,
      signal: new AbortController().signal,
    })
    expect(requests.map(call)).toEqual(['PATCH /links/12'])
    expect(bodyOf(requests[0]!)).toEqual({ max_downloads: null, password: null, expires_at: null })
  })

  it('a misspelt field reaches the server, which refuses it, rather than being dropped', async () => {
    const { client, requests } = fakeClient([() => apiError(400, 'invalid_parameter')])
    const error = await client.links.update(12, { max_download: 2 } as never).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(BadRequestError)
    expect(bodyOf(requests[0]!)).toEqual({ max_download: 2 })
  })

  it('list, get, delete, rotate', async () => {
    const { client, requests } = fakeClient([
      () => json(200, { success: true, links: [{ ...LINK, default: true }, LINK] }),
      linkAnswer,
      () => json(200, { success: true, message: 'Link revoked.' }),
      () => json(200, { success: true, link: { ...LINK, url: 'http://fake.test/download/new' } }),
    ])
    const links = await client.links.list(7)
    expect(links.map((l) => l.default)).toEqual([true, false])
    expect(links[1]!.downloads_left).toBe(2)
    expect((await client.links.get(12)).link_id).toBe(12)
    await expect(client.links.delete(12)).resolves.toBeUndefined()
    expect((await client.links.rotate(12)).url).toBe('http://fake.test/download/new')
    expect(requests.map(call)).toEqual(['GET /files/7/links', 'GET /links/12', 'DELETE /links/12', 'POST /links/12/rotate'])
    expect(requests[3]!.body).toBeUndefined()
  })

  it('checks ids before sending', async () => {
    const { client, requests } = fakeClient([linkAnswer])
    await expect(client.links.get(0)).rejects.toThrow(/a link id is a positive integer/)
    await expect(client.links.create('x')).rejects.toThrow(/a file id is a positive integer/)
    await expect(client.links.rotate(-1)).rejects.toBeInstanceOf(ConfigurationError)
    expect(requests).toHaveLength(0)
  })

  it('create carries one Idempotency-Key per call and is retried with it, also after a lost connection', async () => {
    const retried = fakeClient([() => connectionFailure(), () => apiError(500, 'internal_error'), () => linkCreated()])
    await retried.client.links.create(7, { max_downloads: 1 })
    expect(retried.requests.map(call)).toEqual(['POST /files/7/links', 'POST /files/7/links', 'POST /files/7/links'])
    const keys = retried.requests.map((r) => r.headers.get('idempotency-key'))
    expect(keys[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(new Set(keys).size).toBe(1)
    expect(bodyOf(retried.requests[0]!)).toEqual({ max_downloads: 1 })

    const own = fakeClient([() => linkCreated(), () => linkCreated()])
    await own.client.links.create(7, { label: 'a', idempotencyKey: 'my-link-key' })
    await own.client.links.create(7, { label: 'a' })
    expect(own.requests.map((r) => r.headers.get('idempotency-key'))).toEqual(['my-link-key', expect.not.stringMatching(/^my-link-key$/)])
    expect(bodyOf(own.requests[0]!)).toEqual({ label: 'a' })
  })

  it('rotate (no idempotency key) is retried after 429 and 503, never after a lost connection or another 5xx', async () => {
    const retried = fakeClient([() => apiError(503, 'service_unavailable'), () => apiError(429, 'rate_limited'), linkAnswer])
    await retried.client.links.rotate(12)
    expect(retried.requests.map(call)).toEqual(Array(3).fill('POST /links/12/rotate'))
    expect(retried.requests[0]!.headers.get('idempotency-key')).toBeNull()

    for (const failure of [() => connectionFailure(), () => apiError(500, 'internal_error'), () => apiError(502, 'bad_gateway')]) {
      const once = fakeClient([failure, linkAnswer])
      await expect(once.client.links.rotate(12)).rejects.toBeInstanceOf(Error)
      expect(once.requests).toHaveLength(1)
    }
    await expect(fakeClient([() => connectionFailure()]).client.links.rotate(12)).rejects.toBeInstanceOf(APIConnectionError)
    // Reading and changing a link is retried as any GET or PATCH.
    const read = fakeClient([() => connectionFailure(), linkAnswer])
    await read.client.links.get(12)
    expect(read.requests).toHaveLength(2)
  })

  it('the errors of links: link_limit_exceeded, default_link_required', async () => {
    const { client } = fakeClient([() => apiError(403, 'link_limit_exceeded'), () => apiError(409, 'default_link_required')])
    await expect(client.links.create(7)).rejects.toBeInstanceOf(LimitExceededError)
    await expect(client.links.delete(1)).rejects.toMatchObject({ name: 'BadRequestError', status: 409, code: 'default_link_required' })
  })
})

describe('files: expiry', () => {
  it('update: PATCH /files/{id} with the changes; the record gives expires_at and expiry', async () => {
    const expiring = { ...FILE, expires_at: '2026-11-28 09:30:00' }
    const { client, requests } = fakeClient([
      () => json(200, { success: true, file: expiring }),
      () => json(200, { success: true, file: { ...FILE, expires_at: null } }),
    ])
    const file = await client.files.update(7, { expires_in: 86_400, filename: 'b.txt' })
    expect(requests.map(call)).toEqual(['PATCH /files/7'])
    expect(bodyOf(requests[0]!)).toEqual({ expires_in: 86_400, filename: 'b.txt' })
    expect(file.expires_at).toBe('2026-11-28 09:30:00')
    expect(file.expiry?.toISOString()).toBe('2026-11-28T09:30:00.000Z')
    expect(JSON.parse(JSON.stringify(file))).toEqual(expiring)
    const kept = await client.files.update('7', { expires_at: null })
    expect(bodyOf(requests[1]!)).toEqual({ expires_at: null })
    expect(kept.expiry).toBeNull()
  })

  it('upload: expires_in goes as Fileshare-Expires-In; without it, no such header', async () => {
    const { client, requests } = fakeClient([() => json(201, { success: true, ...FILE })], { resumableThreshold: 1e12 })
    await client.files.upload(new TextEncoder().encode('hello'), { filename: 'a.txt', expires_in: 3600 })
    await client.files.upload(new TextEncoder().encode('hello'), { filename: 'a.txt' })
    expect(requests.map((r) => r.headers.get('fileshare-expires-in'))).toEqual(['3600', null])
  })

  it('an invalid Date is refused before sending', async () => {
    const { client, requests } = fakeClient([linkAnswer])
    await expect(client.links.create(7, { expires_at: new Date(Number.NaN) })).rejects.toBeInstanceOf(ConfigurationError)
    expect(requests).toHaveLength(0)
  })
})
