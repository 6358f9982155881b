import { createHmac, timingSafeEqual } from 'node:crypto'
import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'

/** A message a test receiver got. */
export interface ReceivedMessage {
  headers: IncomingHttpHeaders
  body: string
  /** When it arrived (epoch ms). */
  at: number
}

/**
 * A webhook receiver on 127.0.0.1 (the tests' servers run with FILESHARE_WEBHOOKS_ALLOW_PRIVATE):
 * records every message and answers the status `answer()` gives for it.
 */
export async function startWebhookReceiver(answer: () => number = () => 200) {
  const received: ReceivedMessage[] = []
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      received.push({ headers: request.headers, body: Buffer.concat(chunks).toString(), at: Date.now() })
      response.writeHead(answer()).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    /** http://127.0.0.1:<port> */
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

/**
 * Standard Webhooks verification, written from the scheme rather than taken from the server: any
 * one v1 signature over id.timestamp.body, keyed with the base64 part of the secret.
 */
export function verifiesStandardWebhook(secret: string, message: Pick<ReceivedMessage, 'headers' | 'body'>): boolean {
  const id = String(message.headers['webhook-id'])
  const timestamp = String(message.headers['webhook-timestamp'])
  const expected = createHmac('sha256', Buffer.from(secret.replace(/^whsec_/, ''), 'base64'))
    .update(`${id}.${timestamp}.${message.body}`)
    .digest()
  return String(message.headers['webhook-signature'])
    .split(' ')
    .filter((entry) => entry.startsWith('v1,'))
    .some((entry) => {
      const given = Buffer.from(entry.slice(3), 'base64')
      return given.length === expected.length && timingSafeEqual(given, expected)
    })
}
