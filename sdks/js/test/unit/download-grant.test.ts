// download() through the POST-and-grant flow, against the fake fetch: the POST (its body, its
// retries), the grant URL from the 303 (its JSON, else its Location), resuming through the same
// grant, and a grant URL given directly.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { APIConnectionError, AuthenticationError, NotFoundError, RateLimitError } from '../../src/index.js'
import { FILE, LINK, apiError, connectionFailure, fakeClient, type Recorded } from '../helpers/fake-fetch.js'
import { randomBytes, sha256Hex } from '../helpers/env.js'

const data = randomBytes(5000, 41)
const ETAG = `"${sha256Hex(data)}"`
const GRANT = `${LINK.url}/grant1`
const dir = mkdtempSync(path.join(tmpdir(), 'fileshare-grant-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

function granted(
  location = GRANT,
  body: string | null = JSON.stringify({ success: true, download_url: location, expires_at: '2026-11-27 13:00:00' }),
) {
  return new Response(body, { status: 303, headers: { location, 'content-type': 'application/json' } })
}

/** The grant's answer: the file, or from the Range's start; `cutAt` drops the connection after that many bytes. */
function file(request: Recorded, cutAt?: number): Response {
  const start = Number(/^bytes=(\d+)-$/.exec(request.headers.get('range') ?? '')?.[1] ?? 0)
  const part = data.subarray(start)
  let pulls = 0
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (pulls++ === 0) controller.enqueue(cutAt === undefined ? part : part.subarray(0, cutAt))
      else if (cutAt === undefined) controller.close()
      else controller.error(new TypeError('terminated', { cause: Object.assign(new Error('socket closed'), { code: 'ECONNRESET' }) }))
    },
  })
  const headers: Record<string, string> = { etag: ETAG, 'content-length': String(part.length) }
  if (start === 0) return new Response(body, { status: 200, headers })
  return new Response(body, { status: 206, headers: { ...headers, 'content-range': `bytes ${start}-${data.length - 1}/${data.length}` } })
}

const call = (r: Recorded) => `${r.method} ${r.url}${r.headers.get('range') ? ` ${r.headers.get('range')}` : ''}`
const sink = (chunks: Uint8Array[]) => new WritableStream<Uint8Array>({ write: (chunk) => void chunks.push(chunk) })

describe('download through a grant', () => {
  it('POSTs to the link without a body or the key, then GETs the grant URL from the JSON', async () => {
    const grants: [string, string | undefined][] = []
    const { client, requests } = fakeClient([() => granted(), (r) => file(r)])
    const chunks: Uint8Array[] = []
    const result = await client.download(LINK, sink(chunks), { onGrant: (url, expiresAt) => grants.push([url, expiresAt]) })
    expect(result).toEqual({ size: data.length, sha256: sha256Hex(data), resumedFrom: 0 })
    expect(sha256Hex(Buffer.concat(chunks))).toBe(sha256Hex(data))
    expect(requests.map(call)).toEqual([`POST ${LINK.url}`, `GET ${GRANT}`])
    const [post, get] = requests
    expect(post!.body).toBeUndefined()
    expect(post!.headers.get('content-type')).toBeNull()
    expect(post!.headers.get('authorization')).toBeNull()
    expect(get!.headers.get('authorization')).toBeNull()
    expect(grants).toEqual([[GRANT, '2026-11-27 13:00:00']])
  })

  it('sends the password as JSON in the POST body, never in a URL', async () => {
    const { client, requests } = fakeClient([() => granted(), (r) => file(r)])
    await client.download(FILE, sink([]), { password: 'correct horse' })
    expect(requests[0]!.url).toBe(FILE.public_link)
    expect(requests[0]!.headers.get('content-type')).toBe('application/json')
    expect(new TextDecoder().decode(requests[0]!.body)).toBe('{"password":"correct horse"}')
    expect(requests.every((r) => !r.url.includes('correct'))).toBe(true)
  })

  it('reads the grant from Location when the body says nothing, relative to the link', async () => {
    const { client, requests } = fakeClient([() => granted('/download/tok2/grant1', null), (r) => file(r)])
    await client.download(LINK.url, sink([]))
    expect(requests.map(call)).toEqual([`POST ${LINK.url}`, `GET ${GRANT}`])
  })

  it('a wrong password is an AuthenticationError with code invalid_password, not retried', async () => {
    const { client, requests } = fakeClient([() => apiError(401, 'invalid_password'), () => granted()])
    const error = await client.download(LINK, sink([]), { password: 'wrong password' }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(AuthenticationError)
    expect(error).toMatchObject({ status: 401, code: 'invalid_password' })
    expect(requests).toHaveLength(1)
  })

  it('a dead link is a NotFoundError', async () => {
    const { client } = fakeClient([() => apiError(404, 'not_found')])
    await expect(client.download(LINK, sink([]))).rejects.toBeInstanceOf(NotFoundError)
  })

  it('the POST is never sent again after a lost connection or a 5xx other than 503: it may have counted', async () => {
    const { client, requests } = fakeClient([() => connectionFailure(), () => granted(), (r) => file(r)])
    await expect(client.download(LINK, sink([]))).rejects.toBeInstanceOf(APIConnectionError)
    expect(requests).toHaveLength(1)
    for (const status of [500, 502, 504]) {
      const answered = fakeClient([() => apiError(status, 'internal_error'), () => granted(), (r) => file(r)])
      await expect(answered.client.download(LINK, sink([]))).rejects.toMatchObject({ status })
      expect(answered.requests).toHaveLength(1)
    }
  })

  it('the POST is sent again after 429 or 503: nothing was counted', async () => {
    const { client, requests, sleeps } = fakeClient([
      () => apiError(429, 'rate_limited', { 'retry-after': '2' }),
      () => apiError(503, 'service_unavailable'),
      () => granted(),
      (r) => file(r),
    ])
    await client.download(LINK, sink([]))
    expect(requests.map((r) => r.method)).toEqual(['POST', 'POST', 'POST', 'GET'])
    expect(sleeps[0]).toBe(2000)
  })

  it('too many wrong passwords: a RateLimitError at once, not a wait of minutes', async () => {
    const { client, requests, sleeps } = fakeClient([() => apiError(429, 'rate_limited', { 'retry-after': '899' }), () => granted()])
    const error = await client.download(LINK, sink([]), { password: 'another guess' }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(RateLimitError)
    expect(error).toMatchObject({ code: 'rate_limited', retryAfter: 899 })
    expect(requests).toHaveLength(1)
    expect(sleeps).toEqual([])
  })

  it('a connection dropped mid-file is resumed with Range on the same grant, without a second POST', async () => {
    let gets = 0
    const { client, requests } = fakeClient([() => granted(), (r) => file(r, ++gets === 1 ? 1234 : undefined)])
    const target = path.join(dir, 'cut.bin')
    const result = await client.download(LINK, target)
    expect(result.size).toBe(data.length)
    expect(sha256Hex(readFileSync(target))).toBe(sha256Hex(data))
    expect(requests.map(call)).toEqual([`POST ${LINK.url}`, `GET ${GRANT}`, `GET ${GRANT} bytes=1234-`])
    expect(requests[2]!.headers.get('if-range')).toBe(ETAG)
  })

  it('a link and a partial file: the grant answers HEAD for the ETag, then the rest comes with Range', async () => {
    const target = path.join(dir, 'partial.bin')
    writeFileSync(target, data.subarray(0, 3000))
    const head = () => new Response(null, { status: 200, headers: { etag: ETAG, 'content-length': String(data.length) } })
    const { client, requests } = fakeClient([() => granted(), head, (r) => file(r)])
    const result = await client.download(LINK.url, target)
    expect(result).toMatchObject({ size: data.length, resumedFrom: 3000 })
    expect(requests.map(call)).toEqual([`POST ${LINK.url}`, `HEAD ${GRANT}`, `GET ${GRANT} bytes=3000-`])
  })

  it('a grant URL given directly is resumed without a POST (free within its hour)', async () => {
    const target = path.join(dir, 'by-grant.bin')
    writeFileSync(target, data.subarray(0, 100))
    const head = () => new Response(null, { status: 200, headers: { etag: ETAG, 'content-length': String(data.length) } })
    const { client, requests } = fakeClient([head, (r) => file(r)])
    await client.download(GRANT, target)
    expect(requests.map(call)).toEqual([`HEAD ${GRANT}`, `GET ${GRANT} bytes=100-`])
    expect(sha256Hex(readFileSync(target))).toBe(sha256Hex(data))
  })

  it('a file record whose partial file is already complete asks nothing (no download is counted)', async () => {
    const target = path.join(dir, 'complete.bin')
    writeFileSync(target, data)
    const { client, requests } = fakeClient([() => granted()])
    const result = await client.download({ ...FILE, size: data.length, sha256: sha256Hex(data) }, target)
    expect(result).toEqual({ size: data.length, sha256: sha256Hex(data), resumedFrom: data.length })
    expect(requests).toHaveLength(0)
  })
})
