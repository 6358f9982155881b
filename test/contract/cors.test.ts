import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bearer, fileForm, startTestApp, type TestApp } from '../helpers/test-app.js'

const ORIGIN = { origin: 'https://app.example.org' }

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

  it('the dashboard, which signs in with a cookie, gets no CORS headers', async () => {
    const response = await fetch(`${t.url}/dashboard/api/session`, { headers: ORIGIN })
    expect(response.status).toBe(401)
    expect(response.headers.get('access-control-allow-origin')).toBeNull()
  })
})
