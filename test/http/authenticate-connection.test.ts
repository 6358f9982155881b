import http from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../helpers/test-app.js'

/**
 * authenticate.ts remembers the key each connection sent last, with its hash. Behind a proxy one
 * connection carries many clients' keys: each request must still be its own key's.
 */
describe('keys on one keep-alive connection', () => {
  let t: TestApp
  // One socket for every request of this file.
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })

  beforeAll(async () => {
    // With the key cache on (the tests' default turns it off), as in production.
    t = await startTestApp({ FILESHARE_CACHE_TTL_MS: '5000' })
  })
  afterAll(async () => {
    agent.destroy()
    await t.close()
  })

  function get(path: string, key: string): Promise<{ status: number; body: { key?: { prefix: string } }; port: number }> {
    return new Promise((resolve, reject) => {
      const request = http.get(`${t.api}${path}`, { agent, headers: { authorization: `Bearer ${key}` } }, (response) => {
        let text = ''
        response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk))
        response.on('end', () =>
          resolve({
            status: response.statusCode!,
            body: JSON.parse(text) as { key?: { prefix: string } },
            port: request.socket!.localPort!,
          }),
        )
      })
      request.on('error', reject)
    })
  }

  it('answers each request as its own key, whatever the connection sent before', async () => {
    const first = await t.createAccount()
    const second = await t.createAccount()
    const ports = new Set<number>()
    for (const key of [first.apiKey, second.apiKey, second.apiKey, first.apiKey, second.apiKey]) {
      const answer = await get('/key', key)
      expect(answer.status).toBe(200)
      expect(answer.body.key!.prefix).toBe(key.slice(0, 10))
      ports.add(answer.port)
    }
    expect(ports.size).toBe(1)
    // A key one character off the last one is no key.
    const last = second.apiKey
    const forged = last.slice(0, -1) + (last.endsWith('A') ? 'B' : 'A')
    expect((await get('/key', forged)).status).toBe(401)
    expect((await get('/key', last)).status).toBe(200)
  })

  it('refuses a key revoked since the connection last sent it', async () => {
    const { accountId, apiKey } = await t.createAccount()
    expect((await get('/key', apiKey)).status).toBe(200)
    const [key] = await t.app.services.apiKeys.list(accountId)
    await t.app.services.apiKeys.revoke(key!.id)
    expect((await get('/key', apiKey)).status).toBe(401)
  })
})
