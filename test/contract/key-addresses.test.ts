import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bearer, startTestApp, TEST_FRONT, type TestApp } from '../helpers/test-app.js'

/**
 * A key's allowed addresses use the client address the rate limits use: the connection's, or with
 * FILESHARE_TRUST_PROXY the one the proxy forwards (../shared/spec/keys-and-audit.md).
 */
describe.skipIf(TEST_FRONT === 'nginx')('allowed addresses of a key', () => {
  let direct: TestApp
  let proxied: TestApp
  beforeAll(async () => {
    direct = await startTestApp()
    proxied = await startTestApp({ FILESHARE_TRUST_PROXY: 'true' })
  })
  afterAll(async () => {
    await direct.close()
    await proxied.close()
  })

  async function keyFrom(t: TestApp, allowedIps: string[]) {
    const { accountId } = await t.createAccount('pro')
    return (await t.app.services.apiKeys.create(accountId, 'fenced', { allowedIps })).apiKey
  }

  async function status(t: TestApp, apiKey: string, forwardedFor?: string) {
    const response = await fetch(`${t.api}/stats`, {
      headers: { ...bearer(apiKey), ...(forwardedFor && { 'x-forwarded-for': forwardedFor }) },
    })
    const body = (await response.json()) as { error?: { code: string } }
    return response.status === 200 ? 200 : `${response.status} ${body.error?.code}`
  }

  it('allows the listed addresses and ranges, and refuses others with 403 ip_not_allowed', async () => {
    expect(await status(direct, await keyFrom(direct, ['127.0.0.0/8']))).toBe(200)
    expect(await status(direct, await keyFrom(direct, ['127.0.0.1', '10.0.0.0/8']))).toBe(200)
    expect(await status(direct, await keyFrom(direct, ['10.0.0.0/8', '2001:db8::/32']))).toBe('403 ip_not_allowed')
  })

  it('ignores a spoofed X-Forwarded-For unless the proxy is trusted', async () => {
    const tenOnly = await keyFrom(direct, ['10.0.0.0/8'])
    expect(await status(direct, tenOnly, '10.1.2.3')).toBe('403 ip_not_allowed')
    const loopbackOnly = await keyFrom(direct, ['127.0.0.1'])
    expect(await status(direct, loopbackOnly, '203.0.113.9')).toBe(200)
  })

  it('behind a trusted proxy, matches the forwarded address, IPv4-mapped IPv6 forms included', async () => {
    const tenOnly = await keyFrom(proxied, ['10.0.0.0/8'])
    expect(await status(proxied, tenOnly, '10.1.2.3')).toBe(200)
    expect(await status(proxied, tenOnly, '::ffff:10.1.2.3')).toBe(200)
    expect(await status(proxied, tenOnly, '203.0.113.9')).toBe('403 ip_not_allowed')
    const v6 = await keyFrom(proxied, ['2001:db8::/32'])
    expect(await status(proxied, v6, '2001:db8:5::1')).toBe(200)
    expect(await status(proxied, v6, '2001:db9::1')).toBe('403 ip_not_allowed')
  })

  it('GET /key shows the ranges as stored, and the last use records the address as FILESHARE_AUDIT_IP keeps it', async () => {
    const { accountId } = await direct.createAccount('pro')
    const { apiKey, key } = await direct.app.services.apiKeys.create(accountId, 'fenced', { allowedIps: ['127.0.0.9/8', '::1'] })
    const response = await fetch(`${direct.api}/key`, { headers: bearer(apiKey) })
    expect(((await response.json()) as { key: { allowed_ips: string[] } }).key.allowed_ips).toEqual(['127.0.0.0/8', '::1'])
    await expect
      .poll(async () => (await direct.app.services.apiKeys.list(accountId)).find((k) => k.id === key.id)?.last_used_ip)
      .toBe('127.0.0.0')
  })
})
