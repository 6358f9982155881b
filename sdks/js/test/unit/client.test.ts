import { readFileSync } from 'node:fs'
import { inspect } from 'node:util'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { ConfigurationError, Fileshare, USER_AGENT, VERSION } from '../../src/index.js'
import { FILE, apiError, fakeClient, json } from '../helpers/fake-fetch.js'

const KEY = 'fsk_' + 'k'.repeat(43)

describe('configuration', () => {
  afterEach(() => vi.unstubAllEnvs())

  it('reads FILESHARE_BASE_URL and FILESHARE_API_KEY when options are missing', () => {
    vi.stubEnv('FILESHARE_BASE_URL', 'http://env.test/api/v1/')
    vi.stubEnv('FILESHARE_API_KEY', KEY)
    const client = new Fileshare()
    expect(client.baseUrl).toBe('http://env.test/api/v1')
    expect(client.maxRetries).toBe(2)
    expect(client.timeoutMs).toBe(60_000)
    expect(client.resumableThreshold).toBe(64 * 1024 * 1024)
    expect(client.chunkSize).toBe(16 * 1024 * 1024)
  })

  it('throws a clear ConfigurationError without a base URL or key', () => {
    vi.stubEnv('FILESHARE_BASE_URL', '')
    vi.stubEnv('FILESHARE_API_KEY', '')
    expect(() => new Fileshare({ apiKey: KEY })).toThrow(ConfigurationError)
    expect(() => new Fileshare({ apiKey: KEY })).toThrow(/FILESHARE_BASE_URL/)
    expect(() => new Fileshare({ baseUrl: 'http://x.test/api/v1' })).toThrow(/FILESHARE_API_KEY/)
    expect(() => new Fileshare({ baseUrl: 'ftp://x', apiKey: KEY })).toThrow(ConfigurationError)
    expect(() => new Fileshare({ baseUrl: 'http://x.test/api/v1', apiKey: KEY, maxRetries: -1 })).toThrow(ConfigurationError)
  })
})

describe('the API key stays secret', () => {
  it('never shows in toString, inspect, JSON or error messages', async () => {
    const { client } = fakeClient([() => apiError(401, 'unauthorized')], { apiKey: KEY, maxRetries: 0 })
    expect(String(client)).not.toContain(KEY)
    expect(inspect(client, { depth: 10, showHidden: true })).not.toContain(KEY)
    expect(JSON.stringify(client)).not.toContain(KEY)
    expect(JSON.stringify(client)).toContain('[redacted]')
    const error = await client.stats().catch((e: unknown) => e)
    expect(String(error)).not.toContain(KEY)
    expect(inspect(error, { depth: 10, showHidden: true })).not.toContain(KEY)
    expect(JSON.stringify(error)).not.toContain(KEY)
    expect(
      Object.values(client)
        .map((v) => inspect(v, { depth: 5 }))
        .join(),
    ).not.toContain(KEY)
  })
})

describe('requests', () => {
  it('sends the key, the user agent and JSON accept headers', async () => {
    const { client, requests } = fakeClient([() => json(200, { success: true, file: FILE })], { apiKey: KEY })
    await client.files.get(7)
    const [request] = requests
    expect(request!.url).toBe('http://fake.test/api/v1/files/7')
    expect(request!.headers.get('authorization')).toBe(`Bearer ${KEY}`)
    expect(request!.headers.get('user-agent')).toBe(`fileshare-sdk-js/${VERSION}`)
    expect(USER_AGENT).toBe(`fileshare-sdk-js/${VERSION}`)
  })

  it('has the version of package.json', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
    expect(VERSION).toBe(pkg.version)
    // ...and the newest released entry of CHANGELOG.md (an "Unreleased" section may come first).
    const changelog = readFileSync(new URL('../../CHANGELOG.md', import.meta.url), 'utf8')
    const headings = [...changelog.matchAll(/^## (\S+)$/gm)].map((m) => m[1])
    expect(headings.filter((h) => h !== 'Unreleased')[0]).toBe(pkg.version)
    expect(headings.indexOf('Unreleased')).toBeLessThanOrEqual(0)
  })

  it('keeps unknown fields of stats and gives upload_date as a UTC Date', async () => {
    const { client } = fakeClient([
      () => json(200, { success: true, stats: { total_files: 1, extra: 1 }, limits: { max_file_size: 5 }, plan: 'pro', newField: 'x' }),
      () => json(200, { success: true, file: FILE }),
    ])
    const stats = await client.stats()
    expect(stats).toMatchObject({ plan: 'pro', newField: 'x', stats: { extra: 1 } })
    expect(stats).not.toHaveProperty('success')
    const file = await client.files.get(7)
    expect(file.uploaded_at.toISOString()).toBe('2026-11-22T09:30:00.000Z')
    expect(JSON.parse(JSON.stringify(file))).toEqual(FILE)
  })

  it('refuses ids that are not positive integers before sending', async () => {
    const { client, requests } = fakeClient([() => json(200, {})])
    await expect(client.files.get('abc')).rejects.toBeInstanceOf(ConfigurationError)
    await expect(client.files.delete(0)).rejects.toBeInstanceOf(ConfigurationError)
    expect(requests).toHaveLength(0)
  })

  it('raises IntegrityError when the server stored other bytes than were sent', async () => {
    const { client } = fakeClient([() => json(201, { success: true, ...FILE, sha256: '0'.repeat(64) })], { resumableThreshold: 1e12 })
    const { IntegrityError } = await import('../../src/index.js')
    const error = await client.files.upload(new TextEncoder().encode('hello'), { filename: 'a.txt' }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(IntegrityError)
    expect(error).toMatchObject({ expected: '0'.repeat(64), actual: FILE.sha256 })
  })
})
