import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bearer, fileForm, startTestApp, type TestApp } from '../helpers/test-app.js'

const ORIGIN = { origin: 'https://app.example.org' }
const TUS_REQUEST_HEADERS = ['upload-offset', 'upload-length', 'upload-metadata', 'upload-defer-length', 'upload-checksum', 'tus-resumable']
const TUS_RESPONSE_HEADERS = [
  'upload-offset',
  'upload-length',
  'upload-metadata',
  'upload-defer-length',
  'upload-expires',
  'tus-resumable',
  'tus-version',
  'tus-extension',
  'tus-max-size',
  'tus-checksum-algorithm',
  'fileshare-file-id',
]

/** The names of a comma-separated header list, lower-cased (header names are case-insensitive). */
const names = (value: string | null) => (value ?? '').split(',').map((name) => name.trim().toLowerCase())

/** Browsers may call /api/v1 from any origin with a key (never with cookies): src/http/cors.ts. */
describe('cross-origin access to /api/v1', () => {
  let t: TestApp
  let apiKey: string
  beforeAll(async () => {
    t = await startTestApp()
    ;({ apiKey } = await t.createAccount('pro'))
  })
  afterAll(() => t.close())

  it('answers a preflight without a key, for every method and header the API takes', async () => {
    for (const path of ['/files', '/files/upload', '/files/7', '/stats', '/uploads/abc']) {
      const response = await fetch(`${t.api}${path}`, {
        method: 'OPTIONS',
        headers: { ...ORIGIN, 'access-control-request-method': 'DELETE', 'access-control-request-headers': 'authorization' },
      })
      expect(response.status, path).toBe(204)
      expect(response.headers.get('access-control-allow-origin')).toBe('*')
      expect(response.headers.get('access-control-allow-methods')).toContain('DELETE')
      expect(response.headers.get('access-control-allow-headers')).toContain('Authorization')
      expect(response.headers.get('access-control-allow-credentials')).toBeNull()
    }
  })

  it("a preflight allows a file's lifetime and an Idempotency-Key, and answers expose Idempotent-Replayed", async () => {
    const response = await fetch(`${t.api}/files/upload`, {
      method: 'OPTIONS',
      headers: {
        ...ORIGIN,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'fileshare-expires-in,idempotency-key',
      },
    })
    expect(names(response.headers.get('access-control-allow-headers'))).toEqual(
      expect.arrayContaining(['fileshare-expires-in', 'idempotency-key']),
    )
    const answer = await fetch(`${t.api}/stats`, { headers: ORIGIN })
    expect(names(answer.headers.get('access-control-expose-headers'))).toContain('idempotent-replayed')
    expect(names(answer.headers.get('access-control-expose-headers'))).toContain('www-authenticate')
  })

  it('an OPTIONS that is no preflight is still an unknown method (404), except tus discovery', async () => {
    const response = await fetch(`${t.api}/files`, { method: 'OPTIONS' })
    expect(response.status).toBe(404)
    expect(await response.json()).toMatchObject({ success: false, error: { code: 'not_found' } })
    expect((await fetch(`${t.api}/uploads`, { method: 'OPTIONS' })).status).toBe(204)
  })

  it('every answer, refusals included, lets the page read the body and the rate-limit headers', async () => {
    const answers = [
      await fetch(`${t.api}/stats`, { headers: { ...ORIGIN, ...bearer(apiKey) } }),
      await fetch(`${t.api}/files/upload`, { method: 'POST', headers: { ...ORIGIN, ...bearer(apiKey) }, body: fileForm('hi') }),
      await fetch(`${t.api}/stats`, { headers: ORIGIN }), // 401
      await fetch(`${t.api}/files/999999`, { headers: { ...ORIGIN, ...bearer(apiKey) } }), // 404
    ]
    expect(answers.map((response) => response.status)).toEqual([200, 201, 401, 404])
    for (const response of answers) {
      expect(response.headers.get('access-control-allow-origin')).toBe('*')
      expect(response.headers.get('access-control-expose-headers')).toEqual(expect.stringContaining('RateLimit-Remaining'))
      expect(response.headers.get('access-control-expose-headers')).toEqual(expect.stringContaining('X-Request-Id'))
      await response.arrayBuffer()
    }
  })

  it('a preflight for /api/v1/uploads allows every tus request header', async () => {
    const response = await fetch(`${t.api}/uploads`, {
      method: 'OPTIONS',
      headers: { ...ORIGIN, 'access-control-request-method': 'POST', 'access-control-request-headers': 'upload-length' },
    })
    expect(response.status).toBe(204)
    expect(response.headers.get('access-control-allow-origin')).toBe('*')
    expect(names(response.headers.get('access-control-allow-headers'))).toEqual(expect.arrayContaining(TUS_REQUEST_HEADERS))
  })

  it('an answer of /api/v1/uploads exposes every tus response header', async () => {
    const response = await fetch(`${t.api}/uploads`, {
      method: 'POST',
      headers: { ...ORIGIN, ...bearer(apiKey), 'tus-resumable': '1.0.0', 'upload-length': '5', 'upload-metadata': 'filename aGkudHh0' },
    })
    expect(response.status).toBe(201)
    const exposed = names(response.headers.get('access-control-expose-headers'))
    expect(exposed).toEqual(expect.arrayContaining(TUS_RESPONSE_HEADERS))
    // And whatever tus header this answer really carries.
    const carried = [...response.headers.keys()].filter((name) => /^(upload-|tus-|fileshare-)/.test(name))
    expect(carried.length).toBeGreaterThan(0)
    expect(exposed).toEqual(expect.arrayContaining(carried))
  })

  // They match no route, so they are answered by a not-found handler, not by a route's hooks.
  it('an unknown path or method under /api/v1 is a 404 with the CORS headers (and Tus-Resumable under /uploads)', async () => {
    const unknown: [method: string, path: string, tus: boolean][] = [
      ['GET', '/nope', false],
      ['GET', '/files/1/extra', false],
      ['PUT', '/files/1', false],
      ['POST', '/stats', false],
      ['PUT', '/uploads/abc', true],
      ['HEAD', '/uploads', true],
      ['GET', '/uploads', true],
      ['GET', '/uploads/abc/extra?x=1', true],
    ]
    for (const [method, path, tus] of unknown) {
      for (const headers of [ORIGIN, { ...ORIGIN, ...bearer(apiKey) }]) {
        const what = `${method} ${path}`
        const response = await fetch(`${t.api}${path}`, { method, headers })
        expect(response.status, what).toBe(404)
        expect(response.headers.get('access-control-allow-origin'), what).toBe('*')
        expect(names(response.headers.get('access-control-expose-headers')), what).toEqual(expect.arrayContaining(TUS_RESPONSE_HEADERS))
        expect(response.headers.get('tus-resumable'), what).toBe(tus ? '1.0.0' : null)
        if (method === 'HEAD') expect(await response.text(), what).toBe('')
        else expect(await response.json(), what).toEqual({ success: false, error: { code: 'not_found', message: expect.any(String) } })
      }
    }
  })

  it('the dashboard, which signs in with a cookie, gets no CORS headers', async () => {
    const response = await fetch(`${t.url}/dashboard/api/session`, { headers: ORIGIN })
    expect(response.status).toBe(401)
    expect(response.headers.get('access-control-allow-origin')).toBeNull()
  })
})
