import { randomBytes } from 'node:crypto'
import contentDisposition from 'content-disposition'
import fc from 'fast-check'
import type { InjectOptions } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DeleteResponse, DetailResponse, ListResponse, StatsResponse, UploadResponse } from '../../src/http/schemas.js'
import { decodeFormFilename } from '../../src/http/form-filename.js'
import { sanitizeFilename } from '../../src/lib/filename.js'
import { bearer, startTestApp, uploadFile, type TestApp } from '../helpers/test-app.js'
import { expectDocumented, fromInject } from '../helpers/documented-responses.js'

/**
 * Hostile input through app.inject (the whole Fastify pipeline: hooks, routing, validation,
 * handlers, error handler, without sockets). Requests whose framing matters go over real sockets
 * in multipart-framing.test.ts and slow-clients.test.ts.
 */

const PLAIN_ID = /^[1-9][0-9]*$/
const isSafeId = (text: string) => PLAIN_ID.test(text) && Number(text) <= Number.MAX_SAFE_INTEGER

/** Strings that look almost like integers, and the edges of every documented range. */
const integerLike = fc.constantFrom(
  '0',
  '1',
  '2',
  '20',
  '99',
  '100',
  '101',
  '-1',
  '+1',
  ' 1',
  '1 ',
  '1.0',
  '1.',
  '.5',
  '1e1',
  '1E2',
  '0x10',
  '0b1',
  '0o7',
  '01',
  '007',
  '1_000',
  '１',
  '٣',
  '9007199254740991',
  '9007199254740992',
  '99999999999999999999999',
  '',
  'NaN',
  'Infinity',
  '-Infinity',
  'true',
  'null',
  'undefined',
  '[]',
  '{}',
  '1,2',
  '1;2',
  '\u00001',
  '1\u0000',
)
/** Numbers of any length: past 2^53, past what a double holds (Infinity), with exponents and leading zeros. */
const hugeNumber = fc.oneof(
  fc.integer({ min: 16, max: 500 }).map((digits) => '9'.repeat(digits)),
  fc.integer({ min: 310, max: 500 }).map((digits) => `1${'0'.repeat(digits)}`),
  fc.constantFrom('1e400', '9'.repeat(400), `0${'9'.repeat(30)}`, `-${'9'.repeat(400)}`, '1e308', '1.7976931348623157e309'),
)
const anyText = fc.oneof(fc.string({ unit: 'grapheme', maxLength: 40 }), fc.string({ unit: 'binary-ascii', maxLength: 40 }))
const idText = fc.oneof(integerLike, hugeNumber, fc.nat().map(String), fc.bigInt({ min: 0n, max: 10n ** 22n }).map(String), anyText)

/** The one style of an integer parameter's 400 (src/lib/integers.ts): no framework paths, the value cut to 40 characters. */
function expectIntegerMessage(response: { body: string }, name: string, what: string) {
  const { message } = (JSON.parse(response.body) as { error: { message: string } }).error
  expect(message, what).toMatch(new RegExp(`^${name} must be an integer from \\d+ to \\d+, got ".{0,240}"\\.$`))
  expect(message, what).not.toMatch(/querystring|params\/|must be <=|must be >=/)
  expect(message.length, what).toBeLessThan(400)
}

describe('hostile requests (app.inject)', () => {
  let t: TestApp
  let owner: { accountId: number; apiKey: string }
  let empty: { accountId: number; apiKey: string }
  let free: { accountId: number; apiKey: string }
  let revokedKey: string
  let expiredKey: string
  const ownerFiles: { id: number; token: string; content: Buffer }[] = []

  beforeAll(async () => {
    t = await startTestApp({
      // Thousands of refused keys and downloads here: keep the per-IP guards out of the way.
      FILESHARE_AUTH_FAILURES_PER_MINUTE: '100000000',
      FILESHARE_DOWNLOADS_PER_MINUTE: '100000000',
      FILESHARE_TRUST_PROXY: 'true',
    })
    const roomy = { requests_per_minute: 100_000_000, requests_per_day: 100_000_000, daily_uploads: 100_000_000 }
    owner = await t.createAccount('pro')
    empty = await t.createAccount('pro')
    free = await t.createAccount('free')
    await t.app.services.accounts.setLimits(owner.accountId, roomy)
    await t.app.services.accounts.setLimits(empty.accountId, roomy)
    const revoked = await t.app.services.apiKeys.create(owner.accountId, 'revoked')
    await t.app.services.apiKeys.revoke(revoked.key.id)
    revokedKey = revoked.apiKey
    expiredKey = (await t.app.services.apiKeys.create(owner.accountId, 'expired', { expiresAt: Date.now() - 1 })).apiKey
    for (let i = 0; i < 3; i++) {
      const content = randomBytes(50 + i * 37)
      const { response, body } = await uploadFile(t, owner.apiKey, content, `seed-${i}.bin`)
      expect(response.status).toBe(201)
      ownerFiles.push({ id: body.file_id, token: new URL(body.public_link).pathname.split('/').pop()!, content })
    }
  })
  afterAll(async () => {
    await t?.close()
  })

  const inject = async (options: InjectOptions) => fromInject(await t.app.inject(options))

  it('GET /files: any query string gives the documented page or 400 invalid_parameter', async () => {
    const key = fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom('page', 'limit') },
      fc.constantFrom('PAGE', 'Limit', 'page[]', 'page.x', 'limit ', '__proto__', 'constructor', 'toString', 'hasOwnProperty'),
      anyText,
    )
    const pairs = fc.array(fc.tuple(key, idText), { maxLength: 5 })
    await fc.assert(
      fc.asyncProperty(pairs, async (query) => {
        const search = query.map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`).join('&')
        const response = await inject({ url: `/api/v1/files?${search}`, headers: bearer(owner.apiKey) })

        // The oracle: each of page and limit at most once, plain decimal digits, within range.
        const expected: Record<string, number> = { page: 1, limit: 20 }
        let valid = true
        for (const [name, max] of [
          ['page', Number.MAX_SAFE_INTEGER],
          ['limit', 100],
        ] as const) {
          const values = query.filter(([given]) => given === name).map(([, value]) => value)
          if (values.length > 1) valid = false
          else if (values.length === 1) {
            if (PLAIN_ID.test(values[0]!) && Number(values[0]) <= max) expected[name] = Number(values[0])
            else valid = false
          }
        }
        const what = `GET /files?${search}`
        const { code, json } = expectDocumented(response, what, { success: ListResponse })
        if (!valid) {
          expect(code, what).toBe('invalid_parameter')
          expectIntegerMessage(response, '(page|limit)', what)
          return
        }
        expect(response.status, what).toBe(200)
        const { page, limit } = expected as { page: number; limit: number }
        const total = ownerFiles.length
        expect(json!.pagination, what).toEqual({
          page,
          limit,
          total,
          pages: Math.ceil(total / limit),
          next_before_id: page * limit < total ? expect.any(Number) : null,
        })
        expect((json!.files as unknown[]).length, what).toBe(Math.max(0, Math.min(limit, total - (page - 1) * limit)))
      }),
      { numRuns: 150 },
    )
  })

  it('GET and DELETE /files/{file_id}: any path segment gives the file, 404 or 400 invalid_parameter', async () => {
    const segment = fc.oneof(
      fc.constantFrom(...ownerFiles.map((file) => String(file.id))),
      idText.filter((text) => text !== ''),
    )
    await fc.assert(
      fc.asyncProperty(segment, fc.boolean(), async (raw, asDelete) => {
        const url = `/api/v1/files/${encodeURIComponent(raw)}`
        // DELETE goes with the key of an account without files: it must never remove the owner's.
        const response = await inject({ method: asDelete ? 'DELETE' : 'GET', url, headers: bearer(asDelete ? empty.apiKey : owner.apiKey) })
        const what = `${asDelete ? 'DELETE' : 'GET'} ${url}`
        const { code, json } = expectDocumented(response, what, { success: asDelete ? DeleteResponse : DetailResponse })
        if (raw === '.' || raw === '..') {
          // Dot segments are path syntax, not an id: either answer is an error, never a file.
          expect(['invalid_parameter', 'not_found'], what).toContain(code)
        } else if (!isSafeId(raw)) {
          expect(code, what).toBe('invalid_parameter')
          expectIntegerMessage(response, 'file_id', what)
        } else if (!asDelete && ownerFiles.some((file) => file.id === Number(raw))) {
          expect(response.status, what).toBe(200)
          expect((json!.file as { file_id: number }).file_id, what).toBe(Number(raw))
        } else {
          expect(code, what).toBe('not_found')
        }
      }),
      { numRuns: 150 },
    )
    // The owner's files survived every DELETE from the other account.
    for (const file of ownerFiles)
      expect((await inject({ url: `/api/v1/files/${file.id}`, headers: bearer(owner.apiKey) })).status).toBe(200)
  })

  it('raw, badly encoded or overlong path segments give a documented 400, 404 or 414, never a 5xx', async () => {
    const rawChar = fc.constantFrom(..."%%%0aAfFzZ9;,.:@!$&'()*+=-_~\u00e9\u20ac".split(''))
    const segment = fc.oneof(
      fc.string({ unit: rawChar, minLength: 1, maxLength: 30 }),
      fc.integer({ min: 90, max: 5000 }).map((length) => '1'.repeat(length)),
      fc.integer({ min: 90, max: 5000 }).map((length) => 'a'.repeat(length)),
    )
    const base = fc.constantFrom('/api/v1/files/', '/download/', '/api/v1/')
    await fc.assert(
      fc.asyncProperty(base, segment, fc.constantFrom('GET', 'DELETE', 'HEAD'), async (prefix, raw, method) => {
        const response = await inject({ method: method as 'GET', url: prefix + raw, headers: bearer(owner.apiKey) })
        const { code } = expectDocumented(response, `${method} ${prefix}${raw.slice(0, 80)}`, { head: method === 'HEAD' })
        if (method !== 'HEAD') expect(['invalid_parameter', 'invalid_request', 'not_found']).toContain(code)
        else expect([400, 404, 414]).toContain(response.status)
      }),
      { numRuns: 100 },
    )
  })

  it('Authorization: only the exact Bearer form of an active key passes; everything else is 401 (403 on a free plan)', async () => {
    const scheme = fc.constantFrom('Bearer', 'bearer', 'BEARER', 'bEaReR')
    const spaces = (min: number) => fc.integer({ min, max: 3 }).map((n) => ' '.repeat(n))
    const wellFormed = fc.tuple(scheme, spaces(1), spaces(0))
    const flipOneChar = fc.nat().map((position) => {
      const key = owner.apiKey
      const at = 4 + (position % (key.length - 4))
      return key.slice(0, at) + (key[at] === 'A' ? 'B' : 'A') + key.slice(at + 1)
    })
    const badKey = fc
      .oneof(
        flipOneChar,
        fc
          .constantFrom(
            () => revokedKey,
            () => expiredKey,
          )
          .map((get) => get()),
        fc.constant(null).map(() => `fsk_${randomBytes(32).toString('base64url')}`),
        fc.nat({ max: 46 }).map((cut) => owner.apiKey.slice(0, cut)),
        fc.string({ unit: 'binary-ascii', minLength: 1, maxLength: 3 }).map((extra) => owner.apiKey + extra.replace(/\s/g, 'x')),
        fc.constant(null).map(() => owner.apiKey.toUpperCase()),
        fc.constant(null).map(() => owner.apiKey.replace('fsk_', 'FSK_')),
        fc.constant(null).map(() => `${owner.apiKey.slice(0, 20)}%${owner.apiKey.slice(21)}`),
      )
      .filter((key) => key !== owner.apiKey)
    const refused = fc.oneof(
      fc.tuple(wellFormed, badKey).map(([[s, before, after], key]) => `${s}${before}${key}${after}`),
      fc.constantFrom('Basic ', 'Token ', 'Bearer: ', 'Bearer\t', 'Bearer', '', 'Digest ', 'Bearer "').map((s) => `${s}${owner.apiKey}`),
      fc.tuple(scheme, fc.constantFrom(' x', ' ,', ', Bearer x', '\u00a0', '"')).map(([s, tail]) => `${s} ${owner.apiKey}${tail}`),
      fc.string({ unit: 'binary-ascii', maxLength: 80 }).filter((text) => !/[\r\n\0]/.test(text)),
      fc.string({ unit: 'grapheme', maxLength: 80 }).map((text) => Buffer.from(text, 'utf8').toString('latin1')),
    )
    const endpoint = fc.constantFrom(
      { method: 'GET', url: '/api/v1/stats', schema: StatsResponse },
      { method: 'GET', url: '/api/v1/files', schema: ListResponse },
      { method: 'GET', url: '/api/v1/files/1' },
      { method: 'DELETE', url: '/api/v1/files/999999999' },
      { method: 'POST', url: '/api/v1/files/upload' },
    )
    const attempt = fc.oneof(
      fc
        .tuple(wellFormed, fc.constantFrom('owner', 'free'))
        .map(([[s, before, after], who]) => ({ kind: who, header: [s, before, after] })),
      refused.map((header) => ({ kind: 'refused', header })),
    )
    await fc.assert(
      fc.asyncProperty(attempt, endpoint, async (chosen, { method, url, schema }) => {
        const header = Array.isArray(chosen.header)
          ? `${chosen.header[0]}${chosen.header[1]}${chosen.kind === 'owner' ? owner.apiKey : free.apiKey}${chosen.header[2]}`
          : chosen.header
        const response = await inject({ method: method as 'GET', url, headers: { authorization: header } })
        const what = `${method} ${url} with Authorization ${JSON.stringify(header)}`
        const { code } = expectDocumented(response, what, { success: schema })
        if (chosen.kind === 'refused') expect(code, what).toBe('unauthorized')
        else if (chosen.kind === 'free') expect(code, what).toBe('plan_not_supported')
        else expect(['unauthorized', 'plan_not_supported', 'rate_limited'], what).not.toContain(code)
      }),
      { numRuns: 200 },
    )
  })

  it('download: any Range and conditional headers give the right bytes, 304, or 416, with the documented body', async () => {
    const position = fc.oneof(fc.nat({ max: 400 }), fc.constantFrom(0, 1, 49, 50, 51, 86, 87, 2 ** 53, 2 ** 64))
    const spec = fc.oneof(
      fc.tuple(position, position).map(([a, b]) => `${a}-${b}`),
      position.map((a) => `${a}-`),
      position.map((b) => `-${b}`),
      fc.constantFrom('', '-', '--1', '1--2', 'a-b', '0x1-2', '1-2-3', ' 1 - 2 ', '-0', '0-0'),
      // Bounds of any length (past 2^53 and past what a double holds): clamped, ignored or 416, never a 5xx.
      fc
        .tuple(
          fc.nat({ max: 60 }),
          hugeNumber.filter((text) => /^[0-9]+$/.test(text)),
        )
        .map(([a, huge]) => `${a}-${huge}`),
      hugeNumber.filter((text) => /^[0-9]+$/.test(text)).map((huge) => `${huge}-`),
      hugeNumber.filter((text) => /^[0-9]+$/.test(text)).map((huge) => `-${huge}`),
    )
    const range = fc.oneof(
      { weight: 3, arbitrary: fc.array(spec, { minLength: 1, maxLength: 3 }).map((specs) => `bytes=${specs.join(',')}`) },
      fc.tuple(fc.constantFrom('bytes', 'BYTES', 'items', 'bytes ', ''), fc.constantFrom('=', ':', ''), spec).map((p) => p.join('')),
      fc.string({ unit: 'binary-ascii', maxLength: 30 }),
    )
    const optional = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined })
    const headers = fc.record({
      range: optional(range),
      'if-range': optional(
        fc.oneof(fc.constantFrom('"nope"', 'W/"x"', new Date(0).toUTCString()), fc.string({ unit: 'binary-ascii', maxLength: 30 })),
      ),
      'if-none-match': optional(fc.oneof(fc.constantFrom('*', '"nope"', 'W/*', ','), fc.string({ unit: 'binary-ascii', maxLength: 30 }))),
      'if-modified-since': optional(
        fc.oneof(
          fc.date({ noInvalidDate: true }).map((date) => date.toUTCString()),
          fc.string({ unit: 'binary-ascii', maxLength: 30 }),
        ),
      ),
      'x-forwarded-for': optional(fc.oneof(fc.ipV4(), fc.ipV6(), fc.string({ unit: 'binary-ascii', maxLength: 30 }))),
      'accept-encoding': optional(fc.constantFrom('gzip', 'br;q=1, *;q=0', '')),
    })
    const cleaned = (record: Record<string, string | undefined>) =>
      Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined && !/[\r\n\0]/.test(value))) as Record<
        string,
        string
      >
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...ownerFiles), headers, fc.boolean(), async (file, given, head) => {
        const sent = cleaned(given)
        const method = head ? 'HEAD' : 'GET'
        const response = await t.app.inject({ method, url: `/download/${file.token}`, headers: sent })
        const what = `${method} with ${JSON.stringify(sent)}`
        const seen = fromInject(response)
        const size = file.content.length
        expect([200, 206, 304, 416], what).toContain(response.statusCode)
        if (response.statusCode === 416) {
          if (!head) expect(expectDocumented(seen, what).code, what).toBe('range_not_satisfiable')
          expect(response.headers['content-range'], what).toBe(`bytes */${size}`)
          return
        }
        if (head || response.statusCode === 304) expect(seen.body, what).toBe('')
        expect(response.headers['x-content-type-options'], what).toBe('nosniff')
        expect(response.headers['content-security-policy'], what).toBe('sandbox')
        if (response.statusCode === 304) return
        let expected = file.content
        if (response.statusCode === 206) {
          const match = /^bytes ([0-9]+)-([0-9]+)\/([0-9]+)$/.exec(String(response.headers['content-range']))
          expect(match, what).not.toBeNull()
          const [start, end, total] = match!.slice(1).map(Number) as [number, number, number]
          expect(total, what).toBe(size)
          expect(start <= end && end < size, what).toBe(true)
          expected = file.content.subarray(start, end + 1)
        }
        expect(Number(response.headers['content-length']), what).toBe(expected.length)
        if (!head) expect(response.rawPayload.equals(expected), what).toBe(true)
        // A well-formed single range inside the file, without conditions, is always honoured exactly.
        const single = /^bytes=([0-9]+)-([0-9]+)$/.exec(sent.range ?? '')
        if (single && !sent['if-range'] && !sent['if-none-match'] && !sent['if-modified-since']) {
          const [start, end] = [Number(single[1]), Number(single[2])]
          if (start <= end && end < size) {
            expect(response.statusCode, what).toBe(206)
            expect(response.headers['content-range'], what).toBe(`bytes ${start}-${end}/${size}`)
          }
        }
      }),
      { numRuns: 150 },
    )
  })

  it('download: any token gives 404 not_found with the documented body', async () => {
    // "." and ".." are dot segments, not tokens: URL parsing resolves `/download/..` to `/` before
    // any request is made (light-my-request here, curl and browsers alike), so no link carries them.
    const token = fc.oneof(
      anyText.filter((text) => text !== '' && text !== '.' && text !== '..'),
      fc.base64String({ minLength: 16, maxLength: 64 }).map((text) => text.replace(/[+/=]/g, '_')),
    )
    await fc.assert(
      fc.asyncProperty(token, fc.boolean(), async (raw, head) => {
        const url = `/download/${encodeURIComponent(raw)}`
        const response = await inject({ method: head ? 'HEAD' : 'GET', url })
        expect(response.status, url).toBe(404)
        if (!head) expect(expectDocumented(response, url).code, url).toBe('not_found')
      }),
      { numRuns: 100 },
    )
  })

  it('extra and odd request headers never change the answer of an API call', async () => {
    const reserved = /^(content-length|transfer-encoding|host|authorization|connection|expect|content-type|upgrade|te|trailer)$/i
    const name = fc
      .oneof(
        fc.stringMatching(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,20}$/),
        fc.constantFrom(
          'accept',
          'accept-version',
          'x-forwarded-for',
          'x-forwarded-host',
          'x-forwarded-proto',
          'x-request-id',
          'cookie',
          'origin',
          'range',
          'if-none-match',
          'accept-language',
          'x-http-method-override',
          'forwarded',
          'via',
        ),
      )
      .filter((header) => !reserved.test(header))
    const value = fc.oneof(
      fc.string({ unit: 'binary-ascii', maxLength: 60 }).map((text) => text.replace(/[\r\n\0]/g, '').trim()),
      fc.string({ unit: 'grapheme', maxLength: 30 }).map((text) =>
        Buffer.from(text, 'utf8')
          .toString('latin1')
          .replace(/[\r\n\0]/g, '')
          .trim(),
      ),
      fc.integer({ min: 1_000, max: 8_000 }).map((length) => 'v'.repeat(length)),
    )
    const file = ownerFiles[0]!
    await fc.assert(
      fc.asyncProperty(fc.dictionary(name, value, { maxKeys: 6 }), async (extra) => {
        const response = await inject({ url: `/api/v1/files/${file.id}`, headers: { ...extra, ...bearer(owner.apiKey) } })
        const what = `GET /files/${file.id} with ${JSON.stringify(extra).slice(0, 300)}`
        expectDocumented(response, what, { success: DetailResponse })
        expect(response.status, what).toBe(200)
        expect(JSON.parse(response.body).file.file_id, what).toBe(file.id)
      }),
      { numRuns: 100 },
    )
  })

  it('file names: any name is stored sanitised and round-trips through the download Content-Disposition', async () => {
    const name = fc.oneof(
      fc.string({ unit: 'grapheme', maxLength: 60 }),
      fc.string({ unit: 'binary-ascii', maxLength: 60 }),
      fc.string({ unit: 'grapheme', minLength: 100, maxLength: 300 }),
      fc.constantFrom(
        '../../etc/passwd',
        'C:\\boot.ini',
        '.',
        '..',
        ' ',
        'a\u0000b',
        'e\u0301',
        '\u202eexe.txt',
        'con',
        '%2e%2e%2f',
        '<script>.html',
        'a;b=c',
      ),
      // The HTML form encoding's escapes, and other percent signs that must stay as they are.
      fc.constantFrom('quote%22d.txt', 'line%0Abreak.txt', 'percent%41.txt', '100%.txt', '%%22', '%2522.txt'),
    )
    const encoding = fc.constantFrom('filename*', 'quoted-utf8')
    const boundary = 'hostile-filename-boundary-x9'
    await fc.assert(
      fc.asyncProperty(name, encoding, fc.uint8Array({ maxLength: 64 }), async (raw, how, content) => {
        const extended = `filename*=UTF-8''${encodeURIComponent(raw).replace(/['()*!]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`
        // CR and LF cannot be sent inside a header line; quotes and backslashes are escaped.
        const sentQuoted = raw.replace(/[\r\n]/g, '')
        const quoted = `filename="${sentQuoted.replace(/["\\]/g, (c) => `\\${c}`)}"`
        const params = how === 'filename*' ? extended : quoted
        const body = Buffer.concat([
          Buffer.from(
            `--${boundary}\r\nContent-Disposition: form-data; name="file"; ${params}\r\nContent-Type: application/octet-stream\r\n\r\n`,
            'utf8',
          ),
          Buffer.from(content),
          Buffer.from(`\r\n--${boundary}--\r\n`),
        ])
        const response = await inject({
          method: 'POST',
          url: '/api/v1/files/upload',
          headers: { ...bearer(owner.apiKey), 'content-type': `multipart/form-data; boundary=${boundary}` },
          payload: body,
        })
        const what = `upload with ${params.slice(0, 300)}`
        const { code } = expectDocumented(response, what, { success: UploadResponse })
        if (how === 'filename*' && /[\r\n]/.test(raw)) {
          // The multipart parser skips a part whose decoded name holds CR or LF (header injection
          // guard), so the upload has no file part: 400 missing_file, nothing stored.
          expect(code, what).toBe('missing_file')
          return
        }
        expect(response.status, what).toBe(201)
        const uploaded = JSON.parse(response.body) as { filename: string; size: number; public_link: string; file_id: number }
        expect(uploaded.size, what).toBe(content.length)
        // The documented rules, checked directly ...
        expect(Buffer.byteLength(uploaded.filename, 'utf8'), what).toBeLessThanOrEqual(255)
        expect(uploaded.filename, what).not.toMatch(/[\p{Cc}\u2028\u2029/\\]/u)
        expect(uploaded.filename.length, what).toBeGreaterThan(0)
        expect(uploaded.filename, what).toBe(uploaded.filename.normalize('NFC'))
        // ... and the exact name: the sanitised form of what was sent (the multipart parser already
        // turns a last path component of `.` or `..` into an empty name, hence `file`).
        // The parser has already decoded filename*; then %22, %0D and %0A are decoded as the HTML
        // form encoding wants, whichever parameter carried the name (src/http/form-filename.ts).
        const sent = decodeFormFilename(how === 'quoted-utf8' ? sentQuoted : raw)!
        const lastComponent = sent.slice(Math.max(sent.lastIndexOf('/'), sent.lastIndexOf('\\')) + 1)
        expect(uploaded.filename, what).toBe(lastComponent === '.' || lastComponent === '..' ? 'file' : sanitizeFilename(sent))

        const download = await t.app.inject({ url: new URL(uploaded.public_link).pathname })
        expect(download.statusCode, what).toBe(200)
        expect(download.rawPayload.equals(Buffer.from(content)), what).toBe(true)
        const disposition = contentDisposition.parse(String(download.headers['content-disposition']))
        expect(disposition.type, what).toBe('attachment')
        expect(disposition.parameters.filename, what).toBe(uploaded.filename)
        // The plain `filename` fallback: printable ASCII, and no `%` that a client could decode (RFC 6266 4.3).
        const fallback = /filename="((?:[^"\\]|\\.)*)"/.exec(String(download.headers['content-disposition']))?.[1]
        expect(fallback, what).toMatch(/^[\x20-\x7e]*$/)
        expect(fallback, what).not.toContain('%')
        expect(String(download.headers['content-type']), what).not.toMatch(/[\r\n]/)
        // Keep the account's file list small for the list property above.
        await t.app.inject({ method: 'DELETE', url: `/api/v1/files/${uploaded.file_id}`, headers: bearer(owner.apiKey) })
      }),
      { numRuns: 80 },
    )
  })

  // KNOWN BUG (dependency): @fastify/busboy 3.2.6 has a fast path for `form-data; name="…"; filename="…"`
  // that returns as soon as the quoted filename ends, so a `filename*` after it (the form RFC 6266
  // recommends, and the one our own downloads send) is dropped and the ASCII fallback is stored.
  // Upstream: the stop at the closing quote came with https://github.com/fastify/busboy/pull/194.
  // No issue is open for the dropped `filename*`: none in fastify/busboy, and the nearest one,
  // https://github.com/mscdex/busboy/issues/226 (`filename` and `filename*` together, in the
  // original busboy), was closed as fixed there in 2020. Before filing one, search
  // https://github.com/fastify/busboy/issues for `filename*` and "parseParams" (this machine
  // cannot reach GitHub to file it).
  // `it.fails` keeps this visible: once busboy is fixed this test starts failing; make it `it`.
  it.fails('prefers filename* over a filename fallback given before it (RFC 6266)', async () => {
    const boundary = 'both-names-boundary'
    const response = await inject({
      method: 'POST',
      url: '/api/v1/files/upload',
      headers: { ...bearer(owner.apiKey), 'content-type': `multipart/form-data; boundary=${boundary}` },
      payload: `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="rates.txt"; filename*=UTF-8''%E2%82%AC%20rates.txt\r\n\r\nx\r\n--${boundary}--\r\n`,
    })
    expect(response.status).toBe(201)
    expect(JSON.parse(response.body).filename).toBe('€ rates.txt')
  })
})
