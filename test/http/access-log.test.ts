import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bearer, fileForm, startTestApp, uploadFile, type TestApp } from '../helpers/test-app.js'

/** The access log (src/http/plugins/observability.ts): one line per request, and never a secret. */

interface AccessLine {
  level: number
  msg: string
  reqId: string
  method: string
  route: string | null
  path?: string
  token?: string
  status: number
  error?: string
  res_bytes: number
  req_bytes?: number
  duration_ms: number
  account_id?: number
  key_id?: number
  ip: string
  aborted?: boolean
}

const TUS = { 'tus-resumable': '1.0.0' }

describe('access log', () => {
  let t: TestApp
  const raw: string[] = []
  const secrets: string[] = []
  let account: { accountId: number; apiKey: string; keyId: number }

  beforeAll(async () => {
    t = await startTestApp(
      {
        FILESHARE_LOG_LEVEL: 'info',
        FILESHARE_AUTH_FAILURES_PER_MINUTE: '2',
        FILESHARE_PLANS: JSON.stringify({ business: { requests_per_minute: 1 } }),
      },
      { logStream: { write: (line: string) => void raw.push(line) } },
    )
    const created = await t.createAccount('pro')
    const [key] = await t.app.services.apiKeys.list(created.accountId)
    account = { ...created, keyId: key!.id }
    secrets.push(created.apiKey, created.apiKey.slice('fsk_'.length))
  })
  afterAll(async () => {
    await t.close()
  })

  const lines = () => raw.map((line) => JSON.parse(line) as AccessLine)
  /** The access-log lines of the request that got `response` (by its X-Request-Id). */
  const linesOf = (response: Response) => {
    const id = response.headers.get('x-request-id')
    expect(id).toBeTruthy()
    return lines().filter((line) => line.reqId === id)
  }
  /** The one line of `response`'s request, once it is written (after the answer went out). */
  async function lineOf(response: Response): Promise<AccessLine> {
    await response.arrayBuffer().catch(() => {})
    for (let i = 0; i < 50 && linesOf(response).length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10))
    const found = linesOf(response)
    expect(found).toHaveLength(1)
    expect(found[0]!.msg).toBe('request completed')
    return found[0]!
  }

  it('writes one line per request: method, route pattern, status, bytes, duration, request id, account and key', async () => {
    const { body } = await uploadFile(t, account.apiKey, 'hello log', 'log.txt')
    const response = await fetch(`${t.api}/files/${body.file_id}`, { headers: bearer(account.apiKey) })
    const text = await response.text()
    const line = await lineOf(response)
    expect(line).toMatchObject({
      level: 30,
      method: 'GET',
      route: '/api/v1/files/:file_id',
      status: 200,
      res_bytes: Buffer.byteLength(text),
      account_id: account.accountId,
      key_id: account.keyId,
      ip: '127.0.0.1',
    })
    expect(line.duration_ms).toBeGreaterThanOrEqual(0)
    expect(line).not.toHaveProperty('req_bytes')
    expect(line).not.toHaveProperty('path')
    // No second line (Fastify's own "incoming request" / "request completed" pair is gone).
    expect(lines().filter((l) => l.msg === 'incoming request')).toEqual([])
  })

  it('logs a public link token only as a six-character prefix, on a hit and on an unknown path', async () => {
    const { body } = await uploadFile(t, account.apiKey, 'download me', 'dl.txt')
    const token = body.public_link.split('/download/')[1]!
    secrets.push(token)
    const download = await fetch(`${t.url}/download/${token}`)
    const line = await lineOf(download)
    expect(line).toMatchObject({ method: 'GET', route: '/download/:token', token: `${token.slice(0, 6)}…`, status: 200, res_bytes: 11 })
    expect(line).not.toHaveProperty('account_id')

    const ranged = await fetch(`${t.url}/download/${token}`, { headers: { range: 'bytes=0-3' } })
    expect(ranged.status).toBe(206)
    expect(await lineOf(ranged)).toMatchObject({ status: 206, res_bytes: 4 })

    const head = await fetch(`${t.url}/download/${token}`, { method: 'HEAD' })
    expect(await lineOf(head)).toMatchObject({ method: 'HEAD', status: 200, res_bytes: 0 })

    // A grant URL: its route and the token's prefix, never the grant.
    const granted = await fetch(`${t.url}/download/${token}`, { method: 'POST', redirect: 'manual' })
    expect(granted.status).toBe(303)
    const grant = granted.headers.get('location')!.split('/').at(-1)!
    secrets.push(grant)
    expect(await lineOf(granted)).toMatchObject({ method: 'POST', route: '/download/:token', token: `${token.slice(0, 6)}…`, status: 303 })
    const grantDownload = await fetch(`${t.url}/download/${token}/${grant}`)
    expect(await lineOf(grantDownload)).toMatchObject({
      route: '/download/:token/:grant',
      token: `${token.slice(0, 6)}…`,
      status: 200,
      res_bytes: 11,
    })

    const unknown = await fetch(`${t.url}/download/${token}/more/paths?x=${token}`)
    expect(unknown.status).toBe(404)
    expect(await lineOf(unknown)).toMatchObject({
      route: null,
      path: `/download/${token.slice(0, 6)}…/more/paths`,
      status: 404,
      error: 'not_found',
    })
  })

  it('logs refusals with their code and no account: 401, the per-IP 429, the plan 429', async () => {
    const wrong = `fsk_${'A'.repeat(43)}`
    secrets.push(wrong)
    const refused = await fetch(`${t.api}/files`, { headers: bearer(wrong) })
    expect(refused.status).toBe(401)
    expect(await lineOf(refused)).toMatchObject({ route: '/api/v1/files', status: 401, error: 'unauthorized' })
    expect(await lineOf(refused)).not.toHaveProperty('account_id')

    let limited: Response | undefined
    for (let i = 0; i < 5 && !limited; i++) {
      const response = await fetch(`${t.api}/files`, { headers: { authorization: `Bearer ${wrong}` } })
      if (response.status === 429) limited = response
      else await response.arrayBuffer()
    }
    expect(limited).toBeDefined()
    expect(await lineOf(limited!)).toMatchObject({ status: 429, error: 'rate_limited' })

    const business = await t.createAccount('business')
    secrets.push(business.apiKey)
    await (await fetch(`${t.api}/files`, { headers: bearer(business.apiKey) })).arrayBuffer()
    const overPlan = await fetch(`${t.api}/files`, { headers: bearer(business.apiKey) })
    expect(overPlan.status).toBe(429)
    expect(await lineOf(overPlan)).toMatchObject({ status: 429, error: 'rate_limited', account_id: business.accountId })
  })

  it('logs uploads with the bytes they declared: multipart and resumable', async () => {
    const form = fileForm('twelve bytes', 'up.txt')
    const upload = await fetch(`${t.api}/files/upload`, { method: 'POST', headers: bearer(account.apiKey), body: form })
    expect(upload.status).toBe(201)
    const uploadLine = await lineOf(upload)
    expect(uploadLine).toMatchObject({ method: 'POST', route: '/api/v1/files/upload', status: 201, account_id: account.accountId })
    expect(uploadLine.req_bytes).toBeGreaterThan(12)

    const created = await fetch(`${t.api}/uploads`, {
      method: 'POST',
      headers: { ...bearer(account.apiKey), ...TUS, 'upload-length': '5' },
    })
    expect(created.status).toBe(201)
    expect(await lineOf(created)).toMatchObject({ route: '/api/v1/uploads', status: 201, account_id: account.accountId })
    const patch = await fetch(`${t.url}${created.headers.get('location')!}`, {
      method: 'PATCH',
      headers: { ...bearer(account.apiKey), ...TUS, 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' },
      body: 'hello',
    })
    expect(patch.status).toBe(204)
    expect(await lineOf(patch)).toMatchObject({
      method: 'PATCH',
      route: '/api/v1/uploads/:upload_id',
      status: 204,
      req_bytes: 5,
      res_bytes: 0,
      key_id: account.keyId,
    })
  })

  it('never writes a key, the Authorization header or a whole token anywhere in the log', () => {
    const log = raw.join('')
    expect(log).toContain('request completed')
    for (const secret of secrets) expect(log).not.toContain(secret)
    expect(log).not.toMatch(/fsk_[A-Za-z0-9_-]{10}/)
    expect(log.toLowerCase()).not.toContain('bearer')
    expect(log.toLowerCase()).not.toContain('authorization')
  })
})
