import { describe, expect, it } from 'vitest'
import {
  addressChecker,
  ALL_SCOPES,
  allowedIpList,
  grantedScopes,
  InvalidKeyPolicyError,
  scopeChecker,
  SCOPES,
  storedAllowedIps,
  storedScopes,
} from '../../src/services/key-policy.js'
import { auditAddress } from '../../src/services/audit.js'

describe('scopes', () => {
  it('no list and * mean every scope, present and future; a list is kept in the API order', () => {
    expect(storedScopes(undefined)).toBe(ALL_SCOPES)
    expect(storedScopes(['*'])).toBe(ALL_SCOPES)
    expect(storedScopes(['stats:read', ' files:read ', 'stats:read'])).toBe('files:read stats:read')
    expect(grantedScopes(ALL_SCOPES)).toEqual([...SCOPES])
    expect(grantedScopes('files:read stats:read')).toEqual(['files:read', 'stats:read'])
  })

  it('refuses an empty list and unknown names, naming them', () => {
    for (const bad of [[], [''], [' ', '']]) expect(() => storedScopes(bad)).toThrow(InvalidKeyPolicyError)
    expect(() => storedScopes(['files:read', 'files:admin', 'Files:Read'])).toThrow(/files:admin, Files:Read/)
    try {
      storedScopes(['nope'])
    } catch (error) {
      expect((error as InvalidKeyPolicyError).field).toBe('scopes')
    }
  })

  it('a scope list grants exactly its scopes; a stored scope unknown to this version grants nothing', () => {
    const allows = scopeChecker('files:read links:read')
    expect(SCOPES.filter(allows)).toEqual(['files:read', 'links:read'])
    expect(SCOPES.filter(scopeChecker(ALL_SCOPES))).toEqual([...SCOPES])
    expect(SCOPES.filter(scopeChecker('files:admin'))).toEqual([])
  })
})

describe('allowed addresses', () => {
  it('keeps the canonical form of addresses and ranges, and none as anywhere', () => {
    expect(storedAllowedIps(undefined)).toBeNull()
    expect(storedAllowedIps([' ', ''])).toBeNull()
    expect(storedAllowedIps(['10.1.2.3/8', '192.0.2.7', '2001:DB8::1/32', '::ffff:10.9.9.9/104', '10.0.0.0/8'])).toBe(
      '10.0.0.0/8 192.0.2.7 2001:db8::/32',
    )
    expect(storedAllowedIps(['192.0.2.7/32', '::1/128'])).toBe('192.0.2.7 ::1')
    expect(allowedIpList(null)).toEqual([])
    expect(allowedIpList('10.0.0.0/8 ::1')).toEqual(['10.0.0.0/8', '::1'])
  })

  it('refuses malformed entries, naming them', () => {
    for (const bad of [
      '10.0.0.0/33',
      '10.0.0/8',
      '10',
      '0x0a.0.0.1',
      '10.0.0.1/',
      '10.0.0.1/8/8',
      '::1/129',
      'example.com',
      '10.0.0.256',
      '1.2.3.4/-1',
      '1.2.3.4/08a',
    ]) {
      expect(() => storedAllowedIps([bad]), bad).toThrow(InvalidKeyPolicyError)
      expect(() => storedAllowedIps([bad]), bad).toThrow(JSON.stringify(bad))
    }
  })

  it('matches IPv4 and IPv6 clients against their ranges; an IPv4-mapped IPv6 address matches its IPv4 range', () => {
    const allows = addressChecker(storedAllowedIps(['10.0.0.0/8', '2001:db8::/32', '192.0.2.7']))
    expect(allows('10.255.0.1')).toBe(true)
    expect(allows('::ffff:10.1.2.3')).toBe(true)
    expect(allows('::ffff:11.1.2.3')).toBe(false)
    expect(allows('192.0.2.7')).toBe(true)
    expect(allows('192.0.2.8')).toBe(false)
    expect(allows('2001:db8:1::5')).toBe(true)
    expect(allows('2001:db9::5')).toBe(false)
    expect(allows('127.0.0.1')).toBe(false)
    expect(allows('not an address')).toBe(false)
    expect(addressChecker(null)('203.0.113.9')).toBe(true)
    expect(addressChecker(storedAllowedIps(['::ffff:10.0.0.0/104']))('10.0.0.1')).toBe(true)
  })
})

describe('the address an audit event keeps (FILESHARE_AUDIT_IP)', () => {
  it('truncates IPv4 to /24 and IPv6 to /48 by default, keeps all with full, nothing with off', () => {
    expect(auditAddress('203.0.113.77', 'truncated')).toBe('203.0.113.0')
    expect(auditAddress('::ffff:203.0.113.77', 'truncated')).toBe('203.0.113.0')
    expect(auditAddress('2001:db8:abcd:1234::99', 'truncated')).toBe('2001:db8:abcd::')
    expect(auditAddress('203.0.113.77', 'full')).toBe('203.0.113.77')
    expect(auditAddress('203.0.113.77', 'off')).toBeNull()
    expect(auditAddress(undefined, 'full')).toBeNull()
    expect(auditAddress('garbage', 'full')).toBeNull()
  })
})
