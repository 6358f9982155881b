import { withTimeout } from '../lib/with-timeout.js'
import dns from 'node:dns'
import { isIP } from 'node:net'
import ipaddr from 'ipaddr.js'
import { InvalidParameterError, WebhookUrlNotAllowedError } from '../errors.js'

/**
 * Where a webhook may be sent: ../shared/spec/webhooks.md, "Server-side request forgery". The URL's
 * syntax is checked when an endpoint is created or changed; its host is resolved again at every
 * attempt, every address it answers must be public, and the sender connects to the address checked
 * here (a DNS answer that changes between the check and the connection cannot slip through).
 */

/** config.webhooks: the operator's exceptions (tests allow both for their local receivers). */
export interface WebhookTargetPolicy {
  allowPrivate: boolean
  allowHttp: boolean
}

/** The address a delivery connects to first, and every checked address it may fall back to. */
export interface WebhookTargetAddress {
  address: string
  family: 4 | 6
  addresses: readonly { address: string; family: 4 | 6 }[]
}

/** dns.promises.lookup with every address (injected by tests). */
export type WebhookLookup = (hostname: string, options: { all: true }) => Promise<readonly { address: string; family: number }[]>

export const MAX_WEBHOOK_URL_LENGTH = 2048

// IPv6 global unicast is 2000::/3; anything else (IPv4-compatible ::a.b.c.d, 100::/64, ...) is refused
// even where ipaddr.js names no range for it.
const IPV6_GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3') as [ipaddr.IPv6, number]

/**
 * Whether `address` (IPv4 or IPv6 text) is a global unicast address: ipaddr.js's range must be
 * 'unicast' (after unwrapping an IPv4-mapped IPv6 address), which leaves out loopback, private,
 * link-local, unique-local, multicast, unspecified, broadcast, carrier-grade NAT, reserved and
 * documentation ranges, 6to4, Teredo, NAT64 and the rest of its special ranges.
 */
export function isPublicAddress(address: string): boolean {
  if (isIP(address) === 0) return false
  let parsed = ipaddr.parse(address)
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address()
  if (parsed.range() !== 'unicast') return false
  return parsed.kind() === 'ipv4' || (parsed as ipaddr.IPv6).match(IPV6_GLOBAL_UNICAST)
}

/** The URL's host without the brackets of an IPv6 literal. */
function bareHost(url: URL): string {
  return url.hostname.startsWith('[') && url.hostname.endsWith(']') ? url.hostname.slice(1, -1) : url.hostname
}

function notPublic(host: string, address?: string): WebhookUrlNotAllowedError {
  return new WebhookUrlNotAllowedError(
    address === undefined || address === host
      ? `The webhook host ${host} is not a public address.`
      : `The webhook host ${host} resolves to ${address}, which is not a public address.`,
  )
}

/**
 * The syntax rules of a webhook URL: absolute, https (http only when the operator allows it), at
 * most 2,048 characters, no credentials, a host. A host that is an IP literal is checked at once
 * against the address rule (unless private targets are allowed); a name is checked when resolved.
 */
export function checkWebhookUrl(raw: string, policy: WebhookTargetPolicy): URL {
  if (raw.length > MAX_WEBHOOK_URL_LENGTH) throw new InvalidParameterError(`url must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`)
  const url = URL.parse(raw)
  if (url === null) throw new InvalidParameterError('url must be an absolute URL, such as https://example.com/webhooks')
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.allowHttp)) {
    throw new WebhookUrlNotAllowedError(
      policy.allowHttp
        ? 'The webhook url must use https:// or http://.'
        : 'The webhook url must use https:// (http:// is not allowed on this server).',
    )
  }
  if (url.username !== '' || url.password !== '') throw new InvalidParameterError('url must not contain credentials')
  const host = bareHost(url)
  if (host === '') throw new InvalidParameterError('url must name a host')
  if (!policy.allowPrivate && isIP(host) !== 0 && !isPublicAddress(host)) throw notPublic(host)
  return url
}

/**
 * How long a webhook host's lookup may take: a zone that never answers must not hold an attempt (or
 * a create) for the resolver's own timeout. (The lookup's thread is freed only when the system
 * resolver gives up; the attempt does not wait for it.)
 */
export const LOOKUP_TIMEOUT_MS = 5_000

/**
 * Resolves every address of the URL's host (an IP literal is used as it is) and refuses the target
 * when any of them is not public, unless private targets are allowed. Answers the first address: the
 * one to connect to. A failed lookup rejects with the resolver's error (code ENOTFOUND, EAI_AGAIN, ...).
 */
export async function resolveWebhookTarget(
  url: URL,
  policy: WebhookTargetPolicy,
  lookup: WebhookLookup = dns.promises.lookup,
  timeoutMs = LOOKUP_TIMEOUT_MS,
): Promise<WebhookTargetAddress> {
  const host = bareHost(url)
  const literal = isIP(host)
  const answers =
    literal !== 0
      ? [{ address: host, family: literal }]
      : await withTimeout(lookup(host, { all: true }), timeoutMs, () =>
          Object.assign(new Error(`the lookup of ${host} took too long`), { code: 'ETIMEOUT' }),
        )
  const first = answers[0]
  if (first === undefined) throw Object.assign(new Error(`${host} has no address`), { code: 'ENOTFOUND' })
  if (!policy.allowPrivate) {
    const refused = answers.find((answer) => !isPublicAddress(answer.address))
    if (refused !== undefined) throw notPublic(host, refused.address)
  }
  const addresses = answers.map((answer) => ({ address: answer.address, family: answer.family === 6 ? (6 as const) : (4 as const) }))
  return { ...addresses[0]!, addresses }
}
