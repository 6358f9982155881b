import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../helpers/test-app.js'
import { expectDocumented } from '../helpers/documented-responses.js'
import { rawExchange } from '../helpers/raw-http.js'

/**
 * Request lines and header bytes that no HTTP client library would send, written to a socket:
 * odd methods, targets and versions, control and non-ASCII bytes in headers, duplicated or
 * conflicting framing headers, obsolete line folding. Whatever Node's parser or the app makes of
 * them, the answer is one documented JSON response (or a documented 404/400 for HEAD without a
 * body), never a 5xx, and the server closes the connection as asked.
 */

const methods = fc.oneof(
  fc.constantFrom('GET', 'HEAD', 'POST', 'DELETE', 'PUT', 'PATCH', 'OPTIONS', 'TRACE', 'CONNECT', 'get', 'BREW', 'M-SEARCH', 'PROPFIND'),
  fc.stringMatching(/^[A-Z]{1,10}$/),
)
const targets = fc.oneof(
  fc.constantFrom(
    '/api/v1/files',
    '/api/v1/stats',
    '/api/v1/files/1',
    '/api/v1/files/upload',
    '/download/abc',
    '/healthz',
    '/readyz',
    '/api/v1/openapi.json',
  ),
  fc.constantFrom(
    '*',
    'http://evil.example/api/v1/files',
    '//api/v1/files',
    '/api/v1/../v1/files',
    '/api/v1/files?page=1#frag',
    '/%00',
    '/api/v1/files/%ff',
    '',
  ),
  fc.string({ unit: fc.constantFrom(..."/abz09%?#&=.;~!$'()*+,:@ \t\u00e9".split('')), maxLength: 30 }).map((path) => `/${path}`),
)
const versions = fc.constantFrom('HTTP/1.1', 'HTTP/1.0', 'HTTP/1.2', 'HTTP/2.0', 'HTTP/0.9', 'http/1.1', 'HTTP/1.1 extra', '')

/** A header value as raw bytes, from harmless to forbidden (NUL, bare CR, DEL, obs-text). */
const valueBytes = fc.oneof(
  fc.string({ unit: 'grapheme-ascii', maxLength: 40 }).map((text) => Buffer.from(text, 'latin1')),
  fc.uint8Array({ maxLength: 40 }).map((bytes) => Buffer.from(bytes).filter((byte) => byte !== 0x0a)),
  fc.string({ unit: 'grapheme', maxLength: 20 }).map((text) => Buffer.from(text, 'utf8')),
)
const headerName = fc.oneof(
  fc.constantFrom(
    'Authorization',
    'Content-Length',
    'Transfer-Encoding',
    'Host',
    'Content-Type',
    'Expect',
    'Connection',
    'Range',
    'X-Forwarded-For',
    'Upgrade',
  ),
  fc.stringMatching(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,16}$/),
  fc.constantFrom('Bad Name', 'Bad:Name', 'Bad\u0000Name', ''),
)
const extraHeader = fc
  .tuple(headerName, valueBytes)
  .map(([name, value]) => Buffer.concat([Buffer.from(`${name}: `, 'latin1'), value, Buffer.from('\r\n')]))

const framingHeaders = fc.constantFrom(
  '',
  'Content-Length: 5\r\nContent-Length: 6\r\n',
  'Content-Length: 5\r\nTransfer-Encoding: chunked\r\n',
  'Transfer-Encoding: gzip, chunked\r\n',
  'Transfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n',
  'Content-Length: -1\r\n',
  'Content-Length: 1e3\r\n',
  'Content-Length: 99999999999999999999\r\n',
  'X-Folded: a\r\n  continued\r\n',
  'Expect: 100-continue\r\n',
  'Upgrade: websocket\r\nConnection: Upgrade\r\n',
)

describe('raw request bytes', () => {
  let t: TestApp
  let apiKey: string

  beforeAll(async () => {
    t = await startTestApp({ FILESHARE_AUTH_FAILURES_PER_MINUTE: '100000000', FILESHARE_DOWNLOADS_PER_MINUTE: '100000000' })
    const account = await t.createAccount('pro')
    apiKey = account.apiKey
    await t.app.services.accounts.setLimits(account.accountId, { requests_per_minute: 100_000_000, requests_per_day: 100_000_000 })
  })
  afterAll(async () => {
    await t?.close()
  })

  it('any request line and header bytes get one documented answer and a closed connection', async () => {
    const request = fc.record({
      method: methods,
      target: targets,
      version: versions,
      withKey: fc.boolean(),
      extra: fc.array(extraHeader, { maxLength: 4 }),
      framing: framingHeaders,
      body: fc.constantFrom('', 'hello', '5\r\nhello\r\n0\r\n\r\n'),
    })
    await fc.assert(
      fc.asyncProperty(request, async ({ method, target, version, withKey, extra, framing, body }) => {
        const head = Buffer.concat([
          Buffer.from(
            `${method} ${target} ${version}\r\nHost: fileshare.test\r\n${withKey ? `Authorization: Bearer ${apiKey}\r\n` : ''}`,
            'latin1',
          ),
          ...extra,
          Buffer.from(`${framing}Connection: close\r\n\r\n${body}`, 'latin1'),
        ])
        const what = JSON.stringify(head.toString('latin1')).slice(0, 400)
        const exchange = await rawExchange(t.url, [head], { halfClose: false, deadlineMs: 5_000, head: method === 'HEAD' })
        // The server ends every one of these exchanges itself, promptly (Connection: close, or a
        // refusal that closes): a client is never left hanging on a request it has fully sent.
        expect(exchange.closedByServer, `${what}: closed by the server`).toBe(true)
        if (!exchange.response) {
          // Only CONNECT, an upgrade, or a body promised but not sent may end without an answer.
          const unanswerable =
            method === 'CONNECT' || /Upgrade|Content-Length|Expect|chunked/i.test(framing + Buffer.concat(extra).toString('latin1'))
          expect(unanswerable, `${what}: an answer`).toBe(true)
          return
        }
        expectDocumented(exchange.response, what, { head: method === 'HEAD' })
      }),
      { numRuns: 300 },
    )
    expect((await fetch(`${t.url}/healthz`)).status).toBe(200)
  })
})
