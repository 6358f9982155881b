import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bearer, fileForm, startTestApp, uploadFile, type TestApp } from '../helpers/test-app.js'

interface StatsBody {
  success: boolean
  plan: string
  stats: { total_files: number; total_size: number; uploads_today: number; total_downloads: number }
  limits: { max_file_size: number; daily_uploads: number; requests_per_minute: number; requests_per_day: number }
}

/** decisions.md, "Account limits (403)". */
const PLAN_TABLE = {
  pro: { requests_per_minute: 50, requests_per_day: 5000, max_file_size: 5368709120, daily_uploads: 500, max_storage: 107374182400 },
  business: {
    requests_per_minute: 100,
    requests_per_day: 10000,
    max_file_size: 10737418240,
    daily_uploads: 2000,
    max_storage: 1099511627776,
  },
  enterprise: {
    requests_per_minute: 1000,
    requests_per_day: 100000,
    max_file_size: 53687091200,
    daily_uploads: 20000,
    max_storage: 10995116277760,
  },
} as const

const EMPTY_STATS = { total_files: 0, total_size: 0, uploads_today: 0, total_downloads: 0, storage_reserved: 0 }

async function readStats(t: TestApp, apiKey: string): Promise<StatsBody> {
  const response = await fetch(`${t.api}/stats`, { headers: bearer(apiKey) })
  expect(response.status).toBe(200)
  return (await response.json()) as StatsBody
}

async function downloadCount(t: TestApp, apiKey: string, fileId: number): Promise<number> {
  const response = await fetch(`${t.api}/files/${fileId}`, { headers: bearer(apiKey) })
  expect(response.status).toBe(200)
  return ((await response.json()) as { file: { download_count: number } }).file.download_count
}

describe('GET /stats', () => {
  // One app for the file: every test works in accounts of its own.
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp()
  })
  afterAll(async () => {
    await t.close()
  })

  it.each(Object.entries(PLAN_TABLE))('reports the %s plan’s limits exactly, and zero counters for a new account', async (plan, limits) => {
    const { apiKey } = await t.createAccount(plan)
    const body = await readStats(t, apiKey)
    expect(body.success).toBe(true)
    expect(body.plan).toBe(plan)
    expect(body.limits).toEqual(limits)
    expect(body.stats).toMatchObject(EMPTY_STATS)
  })

  it('reports the plan name in lower case whatever case it was given in', async () => {
    const { apiKey } = await t.createAccount('Business')
    expect((await readStats(t, apiKey)).plan).toBe('business')
    const enterprise = await t.createAccount('ENTERPRISE')
    expect((await readStats(t, enterprise.apiKey)).plan).toBe('enterprise')
  })

  it('shows an account’s limit overrides, and the plan’s figures again once they are cleared', async () => {
    const { accountId, apiKey } = await t.createAccount('pro')
    const overrides = { max_file_size: 1234, daily_uploads: 7, requests_per_minute: 33, requests_per_day: 444, max_storage: 5000 }
    await t.app.services.accounts.setLimits(accountId, overrides)
    const response = await fetch(`${t.api}/stats`, { headers: bearer(apiKey) })
    const body = (await response.json()) as StatsBody
    expect(body.limits).toEqual(overrides)
    expect(body.plan).toBe('pro')
    // The request limit in force is the one reported.
    expect(response.headers.get('ratelimit-limit')).toBe('33')

    await t.app.services.accounts.setLimits(accountId, { max_file_size: null, requests_per_day: null })
    expect((await readStats(t, apiKey)).limits).toEqual({ ...overrides, max_file_size: 5368709120, requests_per_day: 5000 })
    await t.app.services.accounts.setLimits(accountId, { daily_uploads: null, requests_per_minute: null, max_storage: null })
    expect((await readStats(t, apiKey)).limits).toEqual(PLAN_TABLE.pro)
  })

  it('follows a plan change', async () => {
    const { accountId, apiKey } = await t.createAccount('pro')
    await t.app.services.accounts.setPlan(accountId, 'enterprise')
    const body = await readStats(t, apiKey)
    expect(body.plan).toBe('enterprise')
    expect(body.limits).toEqual(PLAN_TABLE.enterprise)
  })

  it('reports the plan table as configured by FILESHARE_PLANS', async () => {
    const configured = await startTestApp({ FILESHARE_PLANS: JSON.stringify({ pro: { daily_uploads: 9, max_file_size: 1000 } }) })
    try {
      const { apiKey } = await configured.createAccount('pro')
      expect((await readStats(configured, apiKey)).limits).toEqual({ ...PLAN_TABLE.pro, daily_uploads: 9, max_file_size: 1000 })
      const business = await configured.createAccount('business')
      expect((await readStats(configured, business.apiKey)).limits).toEqual(PLAN_TABLE.business)
    } finally {
      await configured.close()
    }
  })

  it('counts files, bytes, uploads today and downloads exactly, and drops a deleted file’s share', async () => {
    const { apiKey } = await t.createAccount('pro')
    const other = await t.createAccount('pro')
    await uploadFile(t, other.apiKey, 'someone else’s file')

    const a = (await uploadFile(t, apiKey, 'abcde', 'a.txt')).body
    const b = (await uploadFile(t, apiKey, '', 'empty.txt')).body
    const c = (await uploadFile(t, apiKey, 'hello world', 'c.txt')).body
    expect((await readStats(t, apiKey)).stats).toMatchObject({ total_files: 3, total_size: 16, uploads_today: 3, total_downloads: 0 })

    const linkA = `${t.url}${new URL(a.public_link).pathname}`
    const get = async (url: string, headers: Record<string, string> = {}, method = 'GET') => {
      const response = await fetch(url, { method, headers })
      await response.arrayBuffer()
      return response
    }
    // Counted: a whole GET, and ranges that start at byte 0.
    expect((await get(linkA)).status).toBe(200)
    expect((await get(linkA, { range: 'bytes=0-1' })).status).toBe(206)
    expect((await get(linkA, { range: 'bytes=0-' })).status).toBe(206)
    // Not counted: HEAD, a 304, a range that starts later, an unsatisfiable range.
    const head = await get(linkA, {}, 'HEAD')
    expect(head.status).toBe(200)
    const etag = head.headers.get('etag')!
    expect((await get(linkA, { 'if-none-match': etag })).status).toBe(304)
    expect((await get(linkA, { range: 'bytes=2-' })).status).toBe(206)
    expect((await get(linkA, { range: 'bytes=3-4' })).status).toBe(206)
    expect((await get(linkA, { range: 'bytes=100-200' })).status).toBe(416)
    // A zero-byte file is downloaded whole.
    expect((await get(`${t.url}${new URL(b.public_link).pathname}`)).status).toBe(200)

    expect(await downloadCount(t, apiKey, a.file_id)).toBe(3)
    expect(await downloadCount(t, apiKey, b.file_id)).toBe(1)
    expect(await downloadCount(t, apiKey, c.file_id)).toBe(0)
    expect((await readStats(t, apiKey)).stats).toMatchObject({ total_files: 3, total_size: 16, uploads_today: 3, total_downloads: 4 })

    const deleted = await fetch(`${t.api}/files/${a.file_id}`, { method: 'DELETE', headers: bearer(apiKey) })
    expect(deleted.status).toBe(200)
    // Uploads today counts uploads made, so a delete does not give one back.
    expect((await readStats(t, apiKey)).stats).toMatchObject({ total_files: 2, total_size: 11, uploads_today: 3, total_downloads: 1 })
    // The other account's figures were never touched.
    expect((await readStats(t, other.apiKey)).stats).toMatchObject({ total_files: 1, uploads_today: 1, total_downloads: 0 })
  })

  it('counts concurrent downloads exactly', async () => {
    const { apiKey } = await t.createAccount('pro')
    const { body } = await uploadFile(t, apiKey, 'popular')
    const link = `${t.url}${new URL(body.public_link).pathname}`
    const bodies = await Promise.all(Array.from({ length: 12 }, async () => (await fetch(link)).text()))
    expect(bodies).toEqual(Array.from({ length: 12 }, () => 'popular'))
    expect(await downloadCount(t, apiKey, body.file_id)).toBe(12)
    expect((await readStats(t, apiKey)).stats.total_downloads).toBe(12)
  })

  it('leaves the counters alone when an upload fails', async () => {
    const { accountId, apiKey } = await t.createAccount('pro')
    await uploadFile(t, apiKey, '12345')
    await t.app.services.accounts.setLimits(accountId, { max_file_size: 10, daily_uploads: 2 })
    const before = (await readStats(t, apiKey)).stats
    expect(before).toMatchObject({ total_files: 1, total_size: 5, uploads_today: 1 })

    const post = (body: FormData | string, headers: Record<string, string> = {}) =>
      fetch(`${t.api}/files/upload`, { method: 'POST', headers: { ...bearer(apiKey), ...headers }, body })
    // One at a time: an upload in flight holds its daily slot until it fails.
    const failures: [string, () => Promise<Response>, number][] = [
      ['no file part', () => post(fileForm('x', 'x.txt', 'attachment')), 400],
      ['not multipart', () => post('plain text', { 'content-type': 'text/plain' }), 400],
      // Over the limit while streaming (the declared length is within the framing allowance)...
      ['file too large', () => post(fileForm('x'.repeat(11))), 403],
      // ...and refused from its declared length alone.
      ['far too large', () => post(fileForm(new Uint8Array(200_000))), 403],
    ]
    for (const [name, send, status] of failures) {
      const response = await send()
      expect(response.status, name).toBe(status)
      await response.arrayBuffer()
      expect((await readStats(t, apiKey)).stats, name).toEqual(before)
    }

    // The failures took no daily slot: one more upload fits, and then the limit holds.
    expect((await uploadFile(t, apiKey, 'ok')).response.status).toBe(201)
    const limited = await uploadFile(t, apiKey, 'one too many')
    expect(limited.response.status).toBe(403)
    expect(limited.body).toMatchObject({ success: false, error: { code: 'daily_upload_limit_exceeded' } })
    expect((await readStats(t, apiKey)).stats).toMatchObject({ total_files: 2, total_size: 7, uploads_today: 2, total_downloads: 0 })
  })

  it('starts uploads_today from zero on a new UTC day', async () => {
    const { accountId, apiKey } = await t.createAccount('pro')
    await uploadFile(t, apiKey)
    expect((await readStats(t, apiKey)).stats.uploads_today).toBe(1)
    const tomorrow = await t.app.services.accounts.stats(accountId, Date.now() + 86_400_000)
    expect(tomorrow).toMatchObject({ uploadsToday: 0, totalFiles: 1 })
  })

  it("an instance whose clock is still on yesterday shows the count of the account's current day", async () => {
    // Another instance already counts on the next UTC day (a day never goes back): this one, behind
    // midnight, counts its uploads there too, and shows that count, not zero.
    const { accountId, apiKey } = await t.createAccount('pro')
    await uploadFile(t, apiKey)
    const yesterday = await t.app.services.accounts.stats(accountId, Date.now() - 86_400_000)
    expect(yesterday).toMatchObject({ uploadsToday: 1, totalFiles: 1 })
  })
})
