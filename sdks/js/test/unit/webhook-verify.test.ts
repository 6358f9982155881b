// Webhooks.verify: the Standard Webhooks reference vector, every refusal of the spec (tampered body,
// wrong secret, a timestamp 301 s off either way, missing headers, no matching v1 signature, a
// body that is not JSON), the header and body types a receiver has, and a check against a
// straightforward signer written here with node:crypto.
import { createHmac, randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import {
  ConfigurationError,
  DEFAULT_WEBHOOK_TOLERANCE_SECONDS,
  FileshareError,
  WEBHOOK_EVENT_TYPES,
  WebhookVerificationError,
  Webhooks,
  type WebhookEvent,
} from '../../src/index.js'
import { nodeWebhookCrypto, portableWebhookCrypto, verifyWebhook, type WebhookCrypto } from '../../src/webhook-verify.js'

// The reference vector of the Standard Webhooks specification.
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'
const ID = 'msg_p5jXN8AQM9LWM0D4loKWxJek'
const TS = 1614265330
const BODY = '{"test": 2432232314}'
const SIGNATURE = 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE='
const HEADERS = { 'webhook-id': ID, 'webhook-timestamp': String(TS), 'webhook-signature': SIGNATURE }

/** A straightforward signer, written from the spec and nothing of the SDK: `v1,<base64 HMAC>`. */
function sign(secret: string, id: string, timestamp: number | string, body: string | Buffer): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64')
  const mac = createHmac('sha256', key)
  mac.update(`${id}.${timestamp}.`)
  mac.update(body)
  return `v1,${mac.digest('base64')}`
}

function refusal(run: () => unknown): WebhookVerificationError {
  try {
    run()
  } catch (error) {
    expect(error).toBeInstanceOf(WebhookVerificationError)
    return error as WebhookVerificationError
  }
  throw new Error('verify accepted the message')
}

const implementations: [string, WebhookCrypto][] = [
  ['node:crypto', nodeWebhookCrypto()!],
  ['@noble/hashes (browsers)', portableWebhookCrypto],
]

describe('Webhooks.verify', () => {
  it('passes the Standard Webhooks reference vector and returns the parsed body', () => {
    expect(Webhooks.verify(BODY, HEADERS, SECRET, { now: TS })).toEqual({ test: 2432232314 })
  })

  it('this Node reaches node:crypto (createHmac, timingSafeEqual) through process.getBuiltinModule', () => {
    expect(typeof process.getBuiltinModule).toBe('function')
    expect(nodeWebhookCrypto()).toBeDefined()
  })

  it.each(implementations)('%s: the reference vector, and its refusals', (_name, crypto) => {
    const verify = (body: string, headers: Record<string, string>, secret = SECRET) =>
      verifyWebhook(body, headers, secret, { now: TS }, crypto)
    expect(verify(BODY, HEADERS)).toEqual({ test: 2432232314 })
    expect(refusal(() => verify('{"test": 2432232315}', HEADERS)).message).toMatch(/no signature matches/)
    expect(refusal(() => verify(BODY, HEADERS, 'whsec_' + Buffer.from('another secret').toString('base64'))).message).toMatch(
      /no signature matches/,
    )
  })

  it('both implementations give the same HMAC and compare alike', () => {
    const [node, portable] = [implementations[0]![1], implementations[1]![1]]
    for (const size of [0, 1, 63, 64, 65, 1000]) {
      const key = randomBytes(32)
      const message = randomBytes(size)
      const expected = new Uint8Array(createHmac('sha256', key).update(message).digest())
      expect(node.hmacSha256(key, message)).toEqual(expected)
      expect(portable.hmacSha256(key, message)).toEqual(expected)
    }
    const a = Uint8Array.from([1, 2, 3])
    for (const crypto of [node, portable]) {
      expect(crypto.equal(a, Uint8Array.from([1, 2, 3]))).toBe(true)
      expect(crypto.equal(a, Uint8Array.from([1, 2, 4]))).toBe(false)
      expect(crypto.equal(a, Uint8Array.from([1, 2]))).toBe(false)
    }
  })

  it('takes the body as a string, a Buffer, a Uint8Array, an ArrayBuffer or a DataView', () => {
    const bytes = new TextEncoder().encode(BODY)
    for (const body of [BODY, Buffer.from(BODY), bytes, bytes.buffer, new DataView(bytes.buffer)]) {
      expect(Webhooks.verify(body, HEADERS, SECRET, { now: TS })).toEqual({ test: 2432232314 })
    }
    // A view onto part of a larger buffer: only its own bytes are signed.
    const larger = Buffer.from(`xx${BODY}yy`)
    expect(Webhooks.verify(larger.subarray(2, 2 + BODY.length), HEADERS, SECRET, { now: TS })).toEqual({ test: 2432232314 })
  })

  it('takes the headers as a fetch Headers, a Map, pairs, or an object with names in any case', () => {
    const mixed = { 'Webhook-Id': ID, 'WEBHOOK-TIMESTAMP': String(TS), 'webhook-Signature': SIGNATURE, 'content-type': 'application/json' }
    for (const headers of [new Headers(mixed), new Map(Object.entries(mixed)), Object.entries(mixed), mixed]) {
      expect(Webhooks.verify(BODY, headers, SECRET, { now: TS })).toEqual({ test: 2432232314 })
    }
    // Node's IncomingHttpHeaders may hold arrays: the entries are taken together.
    expect(Webhooks.verify(BODY, { ...HEADERS, 'webhook-signature': ['v1,bm9wZQ==', SIGNATURE] }, SECRET, { now: TS })).toEqual({
      test: 2432232314,
    })
  })

  it('takes now as a Date, and the clock by default', () => {
    expect(Webhooks.verify(BODY, HEADERS, SECRET, { now: new Date(TS * 1000) })).toEqual({ test: 2432232314 })
    const now = Math.floor(Date.now() / 1000)
    const body = JSON.stringify({ type: 'webhook.test', timestamp: new Date().toISOString(), data: { webhook_id: 3 } })
    const headers = { 'webhook-id': 'msg_now', 'webhook-timestamp': String(now), 'webhook-signature': sign(SECRET, 'msg_now', now, body) }
    expect(Webhooks.verify(body, headers, SECRET)).toEqual(JSON.parse(body))
    expect(refusal(() => Webhooks.verify(BODY, HEADERS, SECRET)).message).toMatch(/s old/)
  })

  it('a secret without the whsec_ prefix is taken as its base64', () => {
    expect(Webhooks.verify(BODY, HEADERS, SECRET.slice('whsec_'.length), { now: TS })).toEqual({ test: 2432232314 })
  })

  it('refuses a tampered body, id or timestamp, and a wrong secret', () => {
    expect(refusal(() => Webhooks.verify(BODY.replace('2432232314', '2432232315'), HEADERS, SECRET, { now: TS })).message).toMatch(
      /^no signature matches \(1 v1 signature checked\): a wrong secret, or a body changed on its way/,
    )
    expect(refusal(() => Webhooks.verify(`${BODY} `, HEADERS, SECRET, { now: TS })).message).toMatch(/no signature matches/)
    expect(refusal(() => Webhooks.verify(BODY, { ...HEADERS, 'webhook-id': 'msg_other' }, SECRET, { now: TS })).message).toMatch(
      /no signature matches/,
    )
    const later = { ...HEADERS, 'webhook-timestamp': String(TS + 1) }
    expect(refusal(() => Webhooks.verify(BODY, later, SECRET, { now: TS })).message).toMatch(/no signature matches/)
    const wrong = 'whsec_' + randomBytes(24).toString('base64')
    expect(refusal(() => Webhooks.verify(BODY, HEADERS, wrong, { now: TS })).message).toMatch(/no signature matches/)
  })

  it('refuses a timestamp 301 s off either way; 300 s is within the tolerance', () => {
    const at = (timestamp: number) => ({
      'webhook-id': ID,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': sign(SECRET, ID, timestamp, BODY),
    })
    expect(DEFAULT_WEBHOOK_TOLERANCE_SECONDS).toBe(300)
    expect(Webhooks.verify(BODY, at(TS - 300), SECRET, { now: TS })).toEqual({ test: 2432232314 })
    expect(Webhooks.verify(BODY, at(TS + 300), SECRET, { now: TS })).toEqual({ test: 2432232314 })
    expect(refusal(() => Webhooks.verify(BODY, at(TS - 301), SECRET, { now: TS })).message).toBe(
      'the message timestamp is 301 s old, more than the 300 s allowed: a stale or replayed message (or a wrong clock)',
    )
    expect(refusal(() => Webhooks.verify(BODY, at(TS + 301), SECRET, { now: TS })).message).toBe(
      'the message timestamp is 301 s in the future, more than the 300 s allowed (a wrong clock?)',
    )
    // The reference message itself, 301 s later or earlier.
    expect(refusal(() => Webhooks.verify(BODY, HEADERS, SECRET, { now: TS + 301 })).message).toMatch(/301 s old/)
    expect(refusal(() => Webhooks.verify(BODY, HEADERS, SECRET, { now: TS - 301 })).message).toMatch(/301 s in the future/)
  })

  it('toleranceSeconds changes the window; a bad one, or a bad now, is a ConfigurationError', () => {
    expect(Webhooks.verify(BODY, HEADERS, SECRET, { now: TS + 1000, toleranceSeconds: 1000 })).toEqual({ test: 2432232314 })
    expect(refusal(() => Webhooks.verify(BODY, HEADERS, SECRET, { now: TS + 11, toleranceSeconds: 10 })).message).toMatch(
      /11 s old, more than the 10 s allowed/,
    )
    for (const toleranceSeconds of [-1, Number.NaN, Number.POSITIVE_INFINITY, '300' as unknown as number]) {
      expect(() => Webhooks.verify(BODY, HEADERS, SECRET, { now: TS, toleranceSeconds })).toThrow(ConfigurationError)
    }
    expect(() => Webhooks.verify(BODY, HEADERS, SECRET, { now: new Date(Number.NaN) })).toThrow(ConfigurationError)
  })

  it('several signatures (a rotation): any one v1 that matches is enough', () => {
    const other = 'v1,' + randomBytes(32).toString('base64')
    const ok = (signature: string) => Webhooks.verify(BODY, { ...HEADERS, 'webhook-signature': signature }, SECRET, { now: TS })
    expect(ok(`${other} ${SIGNATURE}`)).toEqual({ test: 2432232314 })
    expect(ok(`${SIGNATURE} ${other}`)).toEqual({ test: 2432232314 })
    expect(ok(`  ${other}   ${SIGNATURE}  `)).toEqual({ test: 2432232314 })
    expect(refusal(() => ok(`${other} ${other.replace('v1,', 'v1,A')}`)).message).toMatch(
      /no signature matches \(2 v1 signatures checked\)/,
    )
  })

  it('ignores entries of other versions: a v2 entry never counts, even with the right bytes', () => {
    const bytes = SIGNATURE.slice(3)
    const ok = (signature: string) => Webhooks.verify(BODY, { ...HEADERS, 'webhook-signature': signature }, SECRET, { now: TS })
    expect(ok(`v2,${bytes} ${SIGNATURE}`)).toEqual({ test: 2432232314 })
    expect(ok(`v1a,xyz ${SIGNATURE} v0,abc`)).toEqual({ test: 2432232314 })
    expect(refusal(() => ok(`v2,${bytes}`)).message).toBe('the webhook-signature header holds no v1 signature')
    expect(refusal(() => ok(`v1a,${bytes} ${bytes}`)).message).toBe('the webhook-signature header holds no v1 signature')
    // A v1 entry that is not base64, or of another length, matches nothing.
    expect(refusal(() => ok('v1,not*base64')).message).toMatch(/no signature matches/)
    expect(refusal(() => ok(`v1,${bytes.slice(0, 20)}`)).message).toMatch(/no signature matches/)
  })

  it.each(['webhook-id', 'webhook-timestamp', 'webhook-signature'])('refuses a message without %s (or with it empty)', (name) => {
    const without: Record<string, string> = { ...HEADERS }
    delete without[name]
    expect(refusal(() => Webhooks.verify(BODY, without, SECRET, { now: TS })).message).toBe(
      `the ${name} header is missing: is this a webhook message?`,
    )
    expect(refusal(() => Webhooks.verify(BODY, { ...HEADERS, [name]: ' ' }, SECRET, { now: TS })).message).toMatch(
      `the ${name} header is missing`,
    )
    expect(refusal(() => Webhooks.verify(BODY, new Headers(without), SECRET, { now: TS })).message).toMatch(`the ${name} header is missing`)
  })

  it('refuses no headers at all', () => {
    expect(refusal(() => Webhooks.verify(BODY, {}, SECRET, { now: TS })).message).toMatch(/webhook-id header is missing/)
    expect(refusal(() => Webhooks.verify(BODY, undefined as never, SECRET, { now: TS })).message).toMatch(/no headers/)
  })

  it.each(['1614265330.5', '-1614265330', 'abc', '1e9', '16142653300000000'])('refuses the timestamp %s', (timestamp) => {
    const headers = { ...HEADERS, 'webhook-timestamp': timestamp }
    expect(refusal(() => Webhooks.verify(BODY, headers, SECRET, { now: TS })).message).toMatch(
      /webhook-timestamp header is not unix seconds/,
    )
  })

  it.each([
    ['empty', ''],
    ['not base64', 'whsec_not*base64!'],
    ['base64 of nothing', 'whsec_'],
    ['unpadded', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaS'],
  ])('refuses a bad secret (%s)', (_what, secret) => {
    expect(refusal(() => Webhooks.verify(BODY, HEADERS, secret, { now: TS })).message).toMatch(/secret/)
  })

  it('refuses a secret that is not a string', () => {
    expect(refusal(() => Webhooks.verify(BODY, HEADERS, undefined as never, { now: TS })).message).toMatch(/^no webhook secret/)
  })

  it('refuses a signed body that is not JSON, or not a JSON object', () => {
    for (const body of ['not json', '', '[1,2]', 'null']) {
      const headers = { ...HEADERS, 'webhook-signature': sign(SECRET, ID, TS, body) }
      expect(refusal(() => Webhooks.verify(body, headers, SECRET, { now: TS })).message).toMatch(
        /^the body is signed but is not (JSON|a JSON object)$/,
      )
    }
    const invalidUtf8 = Buffer.from([0x7b, 0xff, 0x7d])
    const headers = { ...HEADERS, 'webhook-signature': sign(SECRET, ID, TS, invalidUtf8) }
    expect(refusal(() => Webhooks.verify(invalidUtf8, headers, SECRET, { now: TS })).message).toBe('the body is signed but is not JSON')
  })

  it('refuses a parsed body (express.json) and says to pass the raw one', () => {
    const error = refusal(() => Webhooks.verify({ test: 2432232314 } as never, HEADERS, SECRET, { now: TS }))
    expect(error.message).toMatch(/^the body is a parsed object, not the raw body: .*express\.raw\(\{ type: 'application\/json' \}\)/)
    expect(refusal(() => Webhooks.verify(undefined as never, HEADERS, SECRET, { now: TS })).message).toMatch(/^the body is undefined/)
  })

  it('WebhookVerificationError is a FileshareError without a status', () => {
    const error = refusal(() => Webhooks.verify(BODY, {}, SECRET))
    expect(error).toBeInstanceOf(FileshareError)
    expect(error).toMatchObject({ name: 'WebhookVerificationError', status: undefined, code: undefined, requestId: undefined })
  })
})

describe('a message signed by a straightforward implementation verifies', () => {
  const secret = 'whsec_' + randomBytes(32).toString('base64')
  const now = 1_795_000_000

  it.each([
    ['file.uploaded', { file_id: 7, filename: 'räksmörgås ✓.txt', size: 5, sha256: 'ab'.repeat(32) }],
    ['file.deleted', { file_id: 7, filename: 'a.txt', reason: 'expired' }],
    ['link.downloaded', { link_id: 12, file_id: 7, downloads_left: null }],
    ['upload.expired', { upload_id: 'u_1', filename: 'big.bin', offset: 1024, length: 4096 }],
    ['webhook.test', { webhook_id: 3 }],
  ])('%s, as bytes and as text', (type, data) => {
    const body = JSON.stringify({ type, timestamp: '2026-11-27T10:00:00.000Z', data })
    const id = `msg_${randomBytes(12).toString('hex')}`
    const headers = { 'webhook-id': id, 'webhook-timestamp': String(now), 'webhook-signature': sign(secret, id, now, body) }
    const event: WebhookEvent = Webhooks.verify(Buffer.from(body, 'utf8'), headers, secret, { now })
    expect(event).toEqual({ type, timestamp: '2026-11-27T10:00:00.000Z', data })
    expect(Webhooks.verify(body, headers, secret, { now })).toEqual(event)
    expect(WEBHOOK_EVENT_TYPES).toContain(event.type)
  })

  it('the event type narrows data', () => {
    const body = JSON.stringify({
      type: 'link.downloaded',
      timestamp: '2026-11-27T10:00:00.000Z',
      data: { link_id: 1, file_id: 2, downloads_left: 4 },
    })
    const headers = { 'webhook-id': 'msg_1', 'webhook-timestamp': String(now), 'webhook-signature': sign(secret, 'msg_1', now, body) }
    const event = Webhooks.verify(body, headers, secret, { now })
    let left: number | null = null
    if (event.type === 'link.downloaded') left = event.data.downloads_left
    expect(left).toBe(4)
  })

  it('a 64-byte secret, and a body that is not ASCII, signed as bytes', () => {
    const long = 'whsec_' + randomBytes(64).toString('base64')
    const body = Buffer.from(JSON.stringify({ type: 'file.uploaded', timestamp: 'x', data: { filename: '日本語.pdf' } }))
    const headers = { 'webhook-id': 'msg_x', 'webhook-timestamp': String(now), 'webhook-signature': sign(long, 'msg_x', now, body) }
    expect(Webhooks.verify(body, headers, long, { now })).toMatchObject({ data: { filename: '日本語.pdf' } })
    expect(refusal(() => Webhooks.verify(body, headers, secret, { now })).message).toMatch(/no signature matches/)
  })

  it('the list of event types', () => {
    expect(WEBHOOK_EVENT_TYPES).toEqual([
      'file.uploaded',
      'file.deleted',
      'link.created',
      'link.updated',
      'link.revoked',
      'link.exhausted',
      'link.downloaded',
      'upload.expired',
      'webhook.test',
      'upload_request.file_received',
      'upload_request.full',
    ])
  })
})
