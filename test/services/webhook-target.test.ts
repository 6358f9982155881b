import { describe, expect, it, vi } from 'vitest'
import { InvalidParameterError, WebhookUrlNotAllowedError } from '../../src/errors.js'
import {
  checkWebhookUrl,
  isPublicAddress,
  resolveWebhookTarget,
  type WebhookLookup,
  type WebhookTargetPolicy,
} from '../../src/services/webhook-target.js'

const STRICT: WebhookTargetPolicy = { allowPrivate: false, allowHttp: false }
const OPEN: WebhookTargetPolicy = { allowPrivate: true, allowHttp: true }

/** A resolver that answers `addresses` for every name (and records what it was asked). */
function answering(...addresses: string[]) {
  return vi.fn<WebhookLookup>(async () => addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })))
}
/** A resolver that must not be asked (IP literals are used as they are). */
const noLookup: WebhookLookup = () => Promise.reject(new Error('lookup must not be called for an IP literal'))

/** The URL with `address` as its host (IPv6 in brackets). */
const urlOf = (address: string) => `https://${address.includes(':') ? `[${address}]` : address}/hook`

const NOT_PUBLIC = [
  '127.0.0.1',
  '127.255.255.254',
  '::1',
  '10.1.2.3',
  '172.16.0.1',
  '172.31.255.255',
  '192.168.1.1',
  '169.254.169.254',
  'fc00::1',
  'fd12::1',
  'fe80::1',
  '::ffff:127.0.0.1',
  '::ffff:10.0.0.1',
  '::ffff:169.254.169.254',
  '0.0.0.0',
  '::',
  '100.64.0.1',
  '224.0.0.1',
  'ff02::1',
  '255.255.255.255',
  '192.0.2.1', // documentation
  '240.0.0.1', // reserved
  '2001:db8::1', // documentation
  '2002:7f00:1::1', // 6to4 of 127.0.0.1
  '2001::1', // Teredo
  '64:ff9b::7f00:1', // NAT64 of 127.0.0.1
  '::7f00:1', // IPv4-compatible (deprecated) 127.0.0.1
  'fec0::1', // site-local (deprecated)
]
const PUBLIC = ['8.8.8.8', '1.1.1.1', '2001:4860:4860::8888', '2606:4700:4700::1111', '::ffff:8.8.8.8']

describe('the address rule', () => {
  it.each(NOT_PUBLIC)('%s is not public', (address) => {
    expect(isPublicAddress(address)).toBe(false)
  })
  it.each(PUBLIC)('%s is public', (address) => {
    expect(isPublicAddress(address)).toBe(true)
  })
  it('is false for what is not an address', () => {
    expect(isPublicAddress('example.com')).toBe(false)
    expect(isPublicAddress('')).toBe(false)
    expect(isPublicAddress('10')).toBe(false)
  })
})

describe('checkWebhookUrl', () => {
  it('accepts an https URL with a name and keeps it whole', () => {
    const url = checkWebhookUrl('https://hooks.example.com:8443/in/fileshare?token=abc', STRICT)
    expect(url).toBeInstanceOf(URL)
    expect(url.href).toBe('https://hooks.example.com:8443/in/fileshare?token=abc')
  })

  it.each(NOT_PUBLIC)('refuses the literal %s at once', (address) => {
    expect(() => checkWebhookUrl(urlOf(address), STRICT)).toThrow(WebhookUrlNotAllowedError)
    expect(() => checkWebhookUrl(urlOf(address), STRICT)).toThrow(/not a public address/)
  })

  it.each(PUBLIC)('accepts the literal %s', (address) => {
    expect(checkWebhookUrl(urlOf(address), STRICT).protocol).toBe('https:')
  })

  it('refuses the other spellings of loopback that URL parsing turns into 127.0.0.1', () => {
    for (const raw of ['https://2130706433/', 'https://0x7f.0.0.1/', 'https://0177.0.0.1/', 'https://127.1/', 'https://[::ffff:7f00:1]/']) {
      expect(() => checkWebhookUrl(raw, STRICT), raw).toThrow(WebhookUrlNotAllowedError)
    }
  })

  it('names the host in the refusal', () => {
    expect(() => checkWebhookUrl('https://10.1.2.3/', STRICT)).toThrow('The webhook host 10.1.2.3 is not a public address.')
  })

  it('allows every literal with allowPrivate', () => {
    for (const address of NOT_PUBLIC) expect(checkWebhookUrl(urlOf(address), { allowPrivate: true, allowHttp: false })).toBeInstanceOf(URL)
  })

  it('refuses http:// unless allowHttp, saying that https is required', () => {
    expect(() => checkWebhookUrl('http://hooks.example.com/', STRICT)).toThrow(WebhookUrlNotAllowedError)
    expect(() => checkWebhookUrl('http://hooks.example.com/', STRICT)).toThrow(/must use https:\/\//)
    expect(() => checkWebhookUrl('http://hooks.example.com/', { allowPrivate: false, allowHttp: true }).protocol).not.toThrow()
    expect(checkWebhookUrl('HTTP://Hooks.Example.com/', { allowPrivate: false, allowHttp: true }).href).toBe('http://hooks.example.com/')
  })

  it('refuses other schemes even with allowHttp', () => {
    for (const raw of ['ftp://hooks.example.com/', 'file:///etc/passwd', 'ws://hooks.example.com/', 'javascript:alert(1)', 'data:,x']) {
      expect(() => checkWebhookUrl(raw, OPEN), raw).toThrow(WebhookUrlNotAllowedError)
      expect(() => checkWebhookUrl(raw, STRICT), raw).toThrow(/must use https:\/\//)
    }
  })

  it('refuses credentials in the URL', () => {
    for (const raw of ['https://user:pass@hooks.example.com/', 'https://user@hooks.example.com/', 'https://:pass@hooks.example.com/']) {
      expect(() => checkWebhookUrl(raw, OPEN), raw).toThrow(InvalidParameterError)
      expect(() => checkWebhookUrl(raw, OPEN), raw).toThrow('url must not contain credentials')
    }
  })

  it('refuses a URL over 2,048 characters and accepts one of exactly 2,048', () => {
    const base = 'https://hooks.example.com/'
    const exact = base + 'a'.repeat(2048 - base.length)
    expect(checkWebhookUrl(exact, STRICT).href).toBe(exact)
    expect(() => checkWebhookUrl(exact + 'a', STRICT)).toThrow(InvalidParameterError)
    expect(() => checkWebhookUrl(exact + 'a', STRICT)).toThrow('url must be at most 2048 characters')
  })

  it('refuses relative and malformed URLs with a message naming url', () => {
    for (const raw of [
      '/webhooks',
      'hooks.example.com/in',
      '',
      '   ',
      'https://',
      'https://exa mple.com/',
      'https://[::1/',
      'https://999.1.1.1.1:x/',
    ]) {
      expect(() => checkWebhookUrl(raw, OPEN), JSON.stringify(raw)).toThrow(InvalidParameterError)
      expect(() => checkWebhookUrl(raw, OPEN), JSON.stringify(raw)).toThrow(/^url /)
    }
  })

  it('throws errors with the API codes', () => {
    const codeOf = (raw: string) => {
      try {
        checkWebhookUrl(raw, STRICT)
        return null
      } catch (error) {
        return (error as { code: string; status: number }).code + ' ' + (error as { status: number }).status
      }
    }
    expect(codeOf('https://127.0.0.1/')).toBe('webhook_url_not_allowed 400')
    expect(codeOf('http://example.com/')).toBe('webhook_url_not_allowed 400')
    expect(codeOf('nonsense')).toBe('invalid_parameter 400')
  })
})

describe('resolveWebhookTarget', () => {
  it.each(NOT_PUBLIC)('refuses the literal %s without asking DNS', async (address) => {
    await expect(resolveWebhookTarget(new URL(urlOf(address)), STRICT, noLookup)).rejects.toThrow(WebhookUrlNotAllowedError)
  })

  it.each(PUBLIC)('uses the literal %s as it is', async (address) => {
    const url = new URL(urlOf(address))
    const target = await resolveWebhookTarget(url, STRICT, noLookup)
    expect(target.family).toBe(url.hostname.startsWith('[') ? 6 : 4)
    expect(target.address).toBe(url.hostname.replace(/^\[|\]$/g, ''))
  })

  it('asks for every address of a name', async () => {
    const lookup = answering('93.184.215.14')
    await expect(resolveWebhookTarget(new URL('https://hooks.example.com/in'), STRICT, lookup)).resolves.toEqual({
      address: '93.184.215.14',
      family: 4,
      addresses: [{ address: '93.184.215.14', family: 4 }],
    })
    expect(lookup).toHaveBeenCalledWith('hooks.example.com', { all: true })
  })

  it('refuses a name that answers a private address, naming the host and the address', async () => {
    const url = new URL('https://internal.example.com/')
    await expect(resolveWebhookTarget(url, STRICT, answering('10.0.0.5'))).rejects.toThrow(WebhookUrlNotAllowedError)
    await expect(resolveWebhookTarget(url, STRICT, answering('10.0.0.5'))).rejects.toThrow(
      'The webhook host internal.example.com resolves to 10.0.0.5, which is not a public address.',
    )
    await expect(resolveWebhookTarget(new URL('https://localhost/'), STRICT, answering('127.0.0.1', '::1'))).rejects.toThrow(
      /localhost resolves to 127\.0\.0\.1/,
    )
    await expect(resolveWebhookTarget(url, STRICT, answering('::ffff:192.168.0.1'))).rejects.toThrow(WebhookUrlNotAllowedError)
  })

  it('refuses a name when any of its addresses is not public, in any position', async () => {
    const url = new URL('https://mixed.example.com/')
    await expect(resolveWebhookTarget(url, STRICT, answering('8.8.8.8', '169.254.169.254'))).rejects.toThrow(/169\.254\.169\.254/)
    await expect(resolveWebhookTarget(url, STRICT, answering('fd00::1', '8.8.8.8'))).rejects.toThrow(WebhookUrlNotAllowedError)
    await expect(resolveWebhookTarget(url, STRICT, answering('2001:4860:4860::8888', '8.8.8.8', 'fe80::1'))).rejects.toThrow(
      WebhookUrlNotAllowedError,
    )
  })

  it('answers the first address when all are public, and every checked address to fall back to', async () => {
    const url = new URL('https://public.example.com/')
    await expect(resolveWebhookTarget(url, STRICT, answering('2001:4860:4860::8888', '8.8.8.8'))).resolves.toEqual({
      address: '2001:4860:4860::8888',
      family: 6,
      addresses: [
        { address: '2001:4860:4860::8888', family: 6 },
        { address: '8.8.8.8', family: 4 },
      ],
    })
    await expect(resolveWebhookTarget(url, STRICT, answering('8.8.4.4', '2001:4860:4860::8844'))).resolves.toMatchObject({
      address: '8.8.4.4',
      family: 4,
    })
  })

  it('allows everything with allowPrivate', async () => {
    const url = new URL('http://receiver.test:8080/')
    await expect(resolveWebhookTarget(url, OPEN, answering('127.0.0.1', '10.0.0.1'))).resolves.toMatchObject({
      address: '127.0.0.1',
      family: 4,
    })
    for (const address of NOT_PUBLIC) {
      await expect(resolveWebhookTarget(new URL(urlOf(address)), OPEN, noLookup)).resolves.toMatchObject({
        family: address.includes(':') ? 6 : 4,
      })
    }
  })

  it('passes on a failed lookup, and treats an empty answer as not found', async () => {
    const url = new URL('https://nowhere.invalid/')
    const failing: WebhookLookup = () =>
      Promise.reject(Object.assign(new Error('getaddrinfo ENOTFOUND nowhere.invalid'), { code: 'ENOTFOUND' }))
    await expect(resolveWebhookTarget(url, STRICT, failing)).rejects.toMatchObject({ code: 'ENOTFOUND' })
    await expect(resolveWebhookTarget(url, STRICT, answering())).rejects.toMatchObject({ code: 'ENOTFOUND' })
  })

  it('resolves with the system resolver by default', async () => {
    await expect(resolveWebhookTarget(new URL('https://localhost/'), STRICT)).rejects.toThrow(WebhookUrlNotAllowedError)
    await expect(resolveWebhookTarget(new URL('https://localhost/'), OPEN)).resolves.toMatchObject({
      address: expect.stringMatching(/^(127\.|::1$)/),
    })
  })
})
