import { describe, expect, it } from 'vitest'
import { checkNewPassword, hashPassword, verifyPassword } from '../../src/lib/passwords.js'

describe('password hashing (scrypt)', () => {
  it('verifies the password it hashed and nothing else', async () => {
    const hash = await hashPassword('correct horse battery staple')
    expect(hash).toMatch(/^scrypt\$32768\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/)
    expect(await verifyPassword('correct horse battery staple', hash)).toBe(true)
    for (const wrong of ['correct horse battery stapl', 'Correct horse battery staple', 'correct horse battery staple ', '']) {
      expect(await verifyPassword(wrong, hash)).toBe(false)
    }
  })

  it('salts every hash: the same password hashes differently each time', async () => {
    const [a, b] = await Promise.all([hashPassword('same password twice'), hashPassword('same password twice')])
    expect(a).not.toBe(b)
    expect(await verifyPassword('same password twice', b)).toBe(true)
  })

  it('reads its cost from the stored hash, so that older hashes keep working when the cost changes', async () => {
    // Made with N = 2^14, r = 8, p = 1, salt "0123456789abcdef".
    const { scryptSync } = await import('node:crypto')
    const salt = Buffer.from('0123456789abcdef')
    const stored = `scrypt$16384$8$1$${salt.toString('base64url')}$${scryptSync('older password', salt, 32, { N: 16384, r: 8, p: 1 }).toString('base64url')}`
    expect(await verifyPassword('older password', stored)).toBe(true)
    expect(await verifyPassword('other password', stored)).toBe(false)
  })

  it('treats composed and decomposed forms of the same characters as the same password', async () => {
    const hash = await hashPassword('caf\u00e9 au lait, long enough')
    expect(await verifyPassword('cafe\u0301 au lait, long enough', hash)).toBe(true)
  })

  it('never matches a malformed hash', async () => {
    for (const stored of ['', 'scrypt', 'bcrypt$1$2$3$4$5', 'scrypt$16384$8$1$$', 'scrypt$16384$8$1$c2FsdA$']) {
      expect(await verifyPassword('anything at all', stored)).toBe(false)
    }
  })

  it('new passwords have 12 to 1024 characters (counted as characters, not bytes)', () => {
    expect(() => checkNewPassword('eleven char')).toThrow('at least 12 characters')
    expect(() => checkNewPassword('twelve chars')).not.toThrow()
    expect(() => checkNewPassword('😀'.repeat(12))).not.toThrow()
    expect(() => checkNewPassword('x'.repeat(1024))).not.toThrow()
    expect(() => checkNewPassword('x'.repeat(1025))).toThrow('at most 1024 characters')
  })
})
