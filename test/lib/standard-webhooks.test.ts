import { describe, expect, it } from 'vitest'
import { newMessageId, newWebhookSecret, signatureHeader, webhookSignature } from '../../src/lib/standard-webhooks.js'

/**
 * An independent verifier written from the Standard Webhooks specification, in another style than
 * the module (WebCrypto instead of node:crypto's createHmac, base64 by atob/btoa): it checks what a
 * consumer's library checks.
 */
async function verifyIndependently(secret: string, headers: Record<string, string>, body: string): Promise<boolean> {
  const keyText = secret.replace(/^whsec_/, '')
  const keyBytes = Uint8Array.from(atob(keyText), (char) => char.charCodeAt(0))
  const key = await crypto.subtle.importKey('raw', keyBytes, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])
  const signed = new TextEncoder().encode(`${headers['webhook-id']}.${headers['webhook-timestamp']}.${body}`)
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, signed))
  const expected = btoa(String.fromCharCode(...mac))
  return (headers['webhook-signature'] ?? '').split(' ').some((entry) => {
    const [version, signature] = entry.split(',', 2)
    return version === 'v1' && signature === expected
  })
}

// The reference vector of the Standard Webhooks specification (and of every library for it).
const REFERENCE = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
}

describe('webhookSignature', () => {
  it('gives the reference test vector', () => {
    expect(webhookSignature(REFERENCE.secret, REFERENCE.id, REFERENCE.timestamp, REFERENCE.body)).toBe(REFERENCE.signature)
  })

  it('takes the secret without its whsec_ prefix too', () => {
    expect(webhookSignature(REFERENCE.secret.slice('whsec_'.length), REFERENCE.id, REFERENCE.timestamp, REFERENCE.body)).toBe(
      REFERENCE.signature,
    )
  })

  it('passes the independent verifier on the reference vector, which refuses any change', async () => {
    const headers = {
      'webhook-id': REFERENCE.id,
      'webhook-timestamp': String(REFERENCE.timestamp),
      'webhook-signature': REFERENCE.signature,
    }
    expect(await verifyIndependently(REFERENCE.secret, headers, REFERENCE.body)).toBe(true)
    expect(await verifyIndependently(REFERENCE.secret, headers, '{"test": 2432232315}')).toBe(false)
    expect(await verifyIndependently(REFERENCE.secret, { ...headers, 'webhook-timestamp': '1614265331' }, REFERENCE.body)).toBe(false)
    expect(await verifyIndependently(REFERENCE.secret, { ...headers, 'webhook-id': 'msg_other' }, REFERENCE.body)).toBe(false)
    expect(await verifyIndependently(newWebhookSecret(), headers, REFERENCE.body)).toBe(false)
  })

  it('is verified by the independent implementation for new secrets and bodies with any characters', async () => {
    for (const body of ['{}', '{"type":"file.uploaded","data":{"name":"Überweisung €.pdf","emoji":"📦"}}', 'x'.repeat(100_000)]) {
      const secret = newWebhookSecret()
      const id = newMessageId()
      const timestamp = 1_800_000_000
      const headers = {
        'webhook-id': id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': webhookSignature(secret, id, timestamp, body),
      }
      expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/)
      expect(await verifyIndependently(secret, headers, body)).toBe(true)
      expect(await verifyIndependently(secret, headers, body + ' ')).toBe(false)
    }
  })
})

describe('signatureHeader', () => {
  it('joins one signature per secret with single spaces, in the order given', async () => {
    const [newer, older] = [newWebhookSecret(), newWebhookSecret()]
    const header = signatureHeader([newer, older], REFERENCE.id, REFERENCE.timestamp, REFERENCE.body)
    expect(header).toBe(
      `${webhookSignature(newer, REFERENCE.id, REFERENCE.timestamp, REFERENCE.body)} ${webhookSignature(older, REFERENCE.id, REFERENCE.timestamp, REFERENCE.body)}`,
    )
    expect(header.split(' ')).toHaveLength(2)
    const headers = { 'webhook-id': REFERENCE.id, 'webhook-timestamp': String(REFERENCE.timestamp), 'webhook-signature': header }
    // A consumer holding either secret accepts the message; one holding neither does not.
    expect(await verifyIndependently(newer, headers, REFERENCE.body)).toBe(true)
    expect(await verifyIndependently(older, headers, REFERENCE.body)).toBe(true)
    expect(await verifyIndependently(newWebhookSecret(), headers, REFERENCE.body)).toBe(false)
  })

  it('is one signature for one secret', () => {
    expect(signatureHeader([REFERENCE.secret], REFERENCE.id, REFERENCE.timestamp, REFERENCE.body)).toBe(REFERENCE.signature)
  })
})

describe('newWebhookSecret', () => {
  it('is whsec_ and the base64 of 32 random bytes, different each time', () => {
    const secrets = new Set(Array.from({ length: 200 }, newWebhookSecret))
    expect(secrets.size).toBe(200)
    for (const secret of secrets) {
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
      expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32)
    }
  })
})

describe('newMessageId', () => {
  it('is msg_ and 27 base62 characters, unique', () => {
    const ids = Array.from({ length: 5000 }, newMessageId)
    for (const id of ids) expect(id).toMatch(/^msg_[0-9A-Za-z]{27}$/)
    expect(new Set(ids).size).toBe(ids.length)
  })

  it('uses the whole alphabet', () => {
    const seen = new Set(Array.from({ length: 500 }, newMessageId).flatMap((id) => [...id.slice(4)]))
    expect(seen.size).toBe(62)
  })
})
