import { isIP } from 'node:net'
import ipaddr from 'ipaddr.js'
import { InvalidRequestError } from '../errors.js'

/**
 * What a key may do (its scopes) and where from (its allowed addresses):
 * ../shared/spec/keys-and-audit.md. Address parsing and CIDR matching are ipaddr.js's (the library
 * Fastify's proxy-addr already uses); only the rules are ours.
 */

/** Every scope, in the order the API lists them. */
export const SCOPES = [
  'files:read',
  'files:write',
  'files:delete',
  'links:read',
  'links:write',
  'stats:read',
  'webhooks:manage',
  'requests:manage',
  'audit:read',
] as const
export type Scope = (typeof SCOPES)[number]

/** Stored for a key that holds every scope, present and future. */
export const ALL_SCOPES = '*'

const SCOPE_SET: ReadonlySet<string> = new Set(SCOPES)

/** A scope list or address list that breaks its rule (the CLI's usage error, the dashboard's field error). */
export class InvalidKeyPolicyError extends InvalidRequestError {
  constructor(
    readonly field: 'scopes' | 'allowed_ips',
    message: string,
  ) {
    super(message)
  }
}

export function isScope(name: string): name is Scope {
  return SCOPE_SET.has(name)
}

/**
 * The stored form of a scope list: '*' when it names '*' (or nothing was given at all), else the
 * named scopes in SCOPES order, separated by spaces. Unknown names and an empty list are refused.
 */
export function storedScopes(names: readonly string[] | undefined): string {
  if (names === undefined) return ALL_SCOPES
  const trimmed = names.map((name) => name.trim()).filter((name) => name !== '')
  if (trimmed.length === 0) throw new InvalidKeyPolicyError('scopes', 'Name at least one scope, or * for every scope.')
  if (trimmed.includes(ALL_SCOPES)) return ALL_SCOPES
  const unknown = trimmed.filter((name) => !isScope(name))
  if (unknown.length > 0) {
    throw new InvalidKeyPolicyError('scopes', `Unknown scope ${unknown.join(', ')}; the scopes are ${SCOPES.join(', ')} (or * for all).`)
  }
  return SCOPES.filter((scope) => trimmed.includes(scope)).join(' ')
}

/** The scopes a stored list grants. */
export function grantedScopes(stored: string): Scope[] {
  if (stored === ALL_SCOPES) return [...SCOPES]
  return stored.split(' ').filter(isScope)
}

/** A key's scope check, made once per cached key rather than once per request. */
export function scopeChecker(stored: string): (scope: Scope) => boolean {
  if (stored === ALL_SCOPES) return () => true
  const granted = new Set(grantedScopes(stored))
  return (scope) => granted.has(scope)
}

/** The canonical text of one address or CIDR range ('10.0.0.0/8', '2001:db8::/32', '192.0.2.7'), or an error. */
function canonicalRange(entry: string): string {
  const text = entry.trim()
  const [addressText = '', prefixText, ...rest] = text.split('/')
  // net.isIP first: ipaddr.js also reads old IPv4 forms ('10', '0x0a.1') that nobody means here.
  const family = isIP(addressText)
  const maxPrefix = family === 4 ? 32 : 128
  const prefix = prefixText === undefined ? maxPrefix : /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : NaN
  if (family === 0 || rest.length > 0 || !(prefix >= 0 && prefix <= maxPrefix)) {
    throw new InvalidKeyPolicyError(
      'allowed_ips',
      `${JSON.stringify(text)} is not an IP address or a CIDR range (such as 10.0.0.0/8 or 2001:db8::/32).`,
    )
  }
  // '10.1.2.3/8' names the range 10.0.0.0/8: store what it means.
  const network = networkOf(ipaddr.parse(addressText), prefix)
  if (isMapped(network) && prefix >= 96) return withPrefix(unmapped(network).toString(), prefix - 96, 32)
  return withPrefix(network.toString(), prefix, maxPrefix)
}

function withPrefix(address: string, prefix: number, maxPrefix: number): string {
  return prefix === maxPrefix ? address : `${address}/${prefix}`
}

/** The network of `address` with a prefix of `prefix` bits: the address with every later bit zero. */
export function networkOf(address: ipaddr.IPv4 | ipaddr.IPv6, prefix: number): ipaddr.IPv4 | ipaddr.IPv6 {
  const bytes = address.toByteArray().map((byte, index) => {
    const bits = Math.max(0, Math.min(8, prefix - index * 8))
    return byte & ((0xff << (8 - bits)) & 0xff)
  })
  return ipaddr.fromByteArray(bytes)
}

function isMapped(address: ipaddr.IPv4 | ipaddr.IPv6): boolean {
  return address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()
}

/** An IPv4-mapped IPv6 address (::ffff:10.1.2.3) is the IPv4 address it carries. */
export function unmapped(address: ipaddr.IPv4 | ipaddr.IPv6): ipaddr.IPv4 | ipaddr.IPv6 {
  return isMapped(address) ? (address as ipaddr.IPv6).toIPv4Address() : address
}

/**
 * The stored form of an allowed-address list: null for none (anywhere), else the canonical
 * ranges, separated by spaces, without repeats. Malformed entries are refused with their text.
 */
export function storedAllowedIps(entries: readonly string[] | undefined): string | null {
  if (entries === undefined) return null
  const ranges = entries.filter((entry) => entry.trim() !== '').map(canonicalRange)
  if (ranges.length === 0) return null
  return [...new Set(ranges)].join(' ')
}

/** The allowed ranges of a stored list ([] = anywhere). */
export function allowedIpList(stored: string | null): string[] {
  return stored === null ? [] : stored.split(' ')
}

/** A key's address check, parsed once per cached key: true when the client address may use it. */
export function addressChecker(stored: string | null): (clientAddress: string) => boolean {
  if (stored === null) return () => true
  const ranges = allowedIpList(stored).map((range) => {
    const [address, prefix] = range.includes('/') ? ipaddr.parseCIDR(range) : [ipaddr.parse(range), undefined]
    return [address, prefix ?? (address.kind() === 'ipv4' ? 32 : 128)] as [ipaddr.IPv4 | ipaddr.IPv6, number]
  })
  return (clientAddress) => {
    let address: ipaddr.IPv4 | ipaddr.IPv6
    try {
      address = unmapped(ipaddr.parse(clientAddress))
    } catch {
      return false
    }
    return ranges.some(([network, prefix]) => network.kind() === address.kind() && address.match(network, prefix))
  }
}
