import { describe, expect, it } from 'vitest'
import { TwoFactorSecretBox } from '../../src/services/two-factor-secret.js'

const SECRET = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP'
const KEY = '0f'.repeat(32)

describe('TwoFactorSecretBox: TOTP secrets at rest', () => {
  it('with a key: AES-256-GCM, a new IV each time, the secret nowhere in what is stored', () => {
    const box = new TwoFactorSecretBox(KEY)
    const first = box.seal(SECRET, 7)
    const second = box.seal(SECRET, 7)
    expect(first).toMatch(/^aes256gcm:[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]+:[A-Za-z0-9_-]{22}$/)
    expect(first).not.toBe(second)
    expect(first).not.toContain(SECRET)
    expect(box.open(first, 7)).toBe(SECRET)
    expect(box.encrypts).toBe(true)
  })

  it('bound to its account: a row copied onto another account does not open; nor under another key, nor without one', () => {
    const sealed = new TwoFactorSecretBox(KEY).seal(SECRET, 7)
    expect(() => new TwoFactorSecretBox(KEY).open(sealed, 8)).toThrow('does not decrypt')
    expect(() => new TwoFactorSecretBox('1e'.repeat(32)).open(sealed, 7)).toThrow('does not decrypt')
    expect(() => new TwoFactorSecretBox(undefined).open(sealed, 7)).toThrow('FILESHARE_TWO_FACTOR_KEY is not set')
    // A tampered ciphertext fails its tag.
    const [scheme, iv, body, tag] = sealed.split(':')
    const flipped = body!.startsWith('A') ? `B${body!.slice(1)}` : `A${body!.slice(1)}`
    expect(() => new TwoFactorSecretBox(KEY).open([scheme, iv, flipped, tag].join(':'), 7)).toThrow('does not decrypt')
  })

  it('errors never carry the secret or the key', () => {
    const sealed = new TwoFactorSecretBox(KEY).seal(SECRET, 7)
    for (const attempt of [
      () => new TwoFactorSecretBox('1e'.repeat(32)).open(sealed, 7),
      () => new TwoFactorSecretBox(KEY).open('junk', 7),
    ]) {
      try {
        attempt()
        expect.unreachable()
      } catch (error) {
        expect(String(error)).not.toContain(SECRET)
        expect(String(error)).not.toContain(KEY)
      }
    }
  })

  it('without a key: stored as it is, and a key set later still reads it', () => {
    const plain = new TwoFactorSecretBox(undefined).seal(SECRET, 7)
    expect(plain).toBe(`plain:${SECRET}`)
    expect(new TwoFactorSecretBox(undefined).open(plain, 7)).toBe(SECRET)
    expect(new TwoFactorSecretBox(KEY).open(plain, 7)).toBe(SECRET)
  })
})
