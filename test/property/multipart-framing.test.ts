import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { UploadResponse } from '../../src/http/schemas.js'
import { bearer, startTestApp, type TestApp } from '../helpers/test-app.js'
import { expectDocumented } from '../helpers/documented-responses.js'
import { rawExchange } from '../helpers/raw-http.js'
import { sha256Hex as sha256 } from '../../src/lib/sha256-hex.js'

/**
 * Upload bodies with broken multipart and HTTP framing, written byte for byte to a socket.
 * Well-framed bodies have an exact expected outcome; broken ones must still get a documented
 * error (or, when the HTTP body itself is cut off, possibly no answer), and never leave a file,
 * stored bytes, an unfinished write or a counted upload behind.
 */

interface Part {
  /** The Content-Disposition line's name, e.g. `Content-Disposition` or `content-DISPOSITION`. */
  headerName: string
  disposition: string
  /** Whether the parser sees a file part named exactly `file`. */
  isFileNamedFile: boolean
  isFile: boolean
  headers: string[]
  content: Buffer
  /** A part header larger than the parser keeps (80 KiB): the outcome is then up to the parser. */
  oversizedHeader: boolean
  /**
   * Parts @fastify/multipart refuses outright (400 invalid_request) instead of ignoring: a field
   * typed application/json that is not JSON, or a name that is a property of Object.prototype.
   */
  refusedByParser: boolean
}

const BCHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'()+_,-./:=?"
const boundaryArb = fc.string({ unit: fc.constantFrom(...BCHARS.split('')), minLength: 1, maxLength: 70 })

const caseVariant = (word: string) =>
  fc
    .array(fc.boolean(), { minLength: word.length, maxLength: word.length })
    .map((upper) => [...word].map((char, i) => (upper[i] ? char.toUpperCase() : char.toLowerCase())).join(''))

const partArb: fc.Arbitrary<Part> = fc
  .record({
    headerName: caseVariant('content-disposition'),
    formData: caseVariant('form-data'),
    nameParam: caseVariant('name'),
    name: fc.oneof(
      { weight: 6, arbitrary: fc.constant('file') },
      fc.constantFrom('other', 'File', 'file ', 'files', 'file[]', '', 'constructor', '__proto__', 'toString'),
      fc.string({ maxLength: 8 }),
    ),
    validJson: fc.boolean(),
    quoting: fc.constantFrom('quoted', 'bare'),
    filename: fc.option(
      fc.oneof(fc.constantFrom('a.bin', 'photo.jpg', '', 'x y.txt'), fc.string({ unit: 'grapheme-ascii', maxLength: 20 })),
      { nil: undefined },
    ),
    contentType: fc.option(fc.constantFrom('text/plain', 'application/json', 'image/png', 'text/plain; charset=utf-8', 'x/y; a="b;c"'), {
      nil: undefined,
    }),
    extra: fc.array(
      fc.constantFrom('Content-Transfer-Encoding: base64', 'Content-Length: 3', 'X-Note: ä', 'X-Empty:', 'Content-ID: <a@b>'),
      { maxLength: 2 },
    ),
    pad: fc.option(fc.constantFrom(1_000, 20_000, 90_000), { nil: undefined }),
    content: fc.oneof(
      { weight: 6, arbitrary: fc.uint8Array({ maxLength: 600 }) },
      { weight: 1, arbitrary: fc.integer({ min: 0, max: 300_000 }).map((size) => new Uint8Array(size).fill(0x61)) },
    ),
  })
  .map((spec) => {
    // Names the generator cannot write inside this quoting fall back to plain letters.
    const bareSafe = /^[A-Za-z0-9_.[\]-]+$/.test(spec.name)
    const quotedSafe = !/["\\\r\n]/.test(spec.name)
    const quoting = spec.quoting === 'bare' && bareSafe ? 'bare' : 'quoted'
    const name = quoting === 'quoted' && !quotedSafe ? 'other' : spec.name
    const filename = spec.filename?.replace(/["\\\r\n;]/g, '_')
    const disposition = [
      spec.formData,
      `${spec.nameParam}=${quoting === 'quoted' ? `"${name}"` : name}`,
      ...(filename === undefined ? [] : [`filename="${filename}"`]),
    ].join('; ')
    const isFile = filename !== undefined
    const jsonField = !isFile && spec.contentType === 'application/json'
    const content = jsonField ? Buffer.from(spec.validJson ? '{"a":[1,"b"]}' : '{"a":') : Buffer.from(spec.content)
    const headers = [
      ...(spec.contentType ? [`Content-Type: ${isFile ? 'application/octet-stream' : spec.contentType}`] : []),
      ...spec.extra,
      ...(spec.pad ? [`X-Pad: ${'p'.repeat(spec.pad)}`] : []),
    ]
    return {
      headerName: spec.headerName,
      disposition,
      isFile,
      isFileNamedFile: isFile && name === 'file',
      headers,
      content,
      oversizedHeader: (spec.pad ?? 0) > 80 * 1024,
      refusedByParser: (jsonField && !spec.validJson) || name in Object.prototype,
    }
  })

/** The body, and for each part the offset at which the delimiter that ends its content is complete. */
function multipartBody(boundary: string, parts: Part[], preamble: string, epilogue: string): { body: Buffer; partEnds: number[] } {
  const pieces: Buffer[] = [Buffer.from(preamble ? `${preamble}\r\n` : '')]
  let length = pieces[0]!.length
  const partEnds: number[] = []
  for (const part of parts) {
    const head = Buffer.from(
      `--${boundary}\r\n${[`${part.headerName}: ${part.disposition}`, ...part.headers].join('\r\n')}\r\n\r\n`,
      'utf8',
    )
    pieces.push(head, part.content, Buffer.from('\r\n'))
    length += head.length + part.content.length + 2
    partEnds.push(length + 2 + boundary.length)
  }
  pieces.push(Buffer.from(`--${boundary}--\r\n${epilogue}`))
  return { body: Buffer.concat(pieces), partEnds }
}

/** Request framing around the body: how the HTTP layer and the multipart layer get broken. */
type Framing =
  | { kind: 'intact'; chunked: boolean }
  | { kind: 'multipart-cut'; at: number }
  | { kind: 'http-cut'; at: number }
  | { kind: 'wrong-boundary'; header: string }
  | { kind: 'lf-only' }
  | { kind: 'bad-chunk-size' }
  | { kind: 'content-length-mismatch'; delta: number }

const framingArb: fc.Arbitrary<Framing> = fc.oneof(
  { weight: 5, arbitrary: fc.boolean().map((chunked) => ({ kind: 'intact' as const, chunked })) },
  { weight: 2, arbitrary: fc.double({ min: 0, max: 1, noNaN: true }).map((at) => ({ kind: 'multipart-cut' as const, at })) },
  fc.double({ min: 0, max: 1, noNaN: true }).map((at) => ({ kind: 'http-cut' as const, at })),
  fc
    .oneof(
      boundaryArb.map((b) => `multipart/form-data; boundary=${b}x`),
      fc.constantFrom(
        'multipart/form-data',
        'multipart/form-data; boundary=',
        'multipart/form-data; boundary=""',
        `multipart/form-data; boundary=${'b'.repeat(71)}`,
        'multipart/mixed; boundary=B',
        'multipart/form-data; boundary="unterminated',
      ),
    )
    .map((header) => ({ kind: 'wrong-boundary' as const, header })),
  fc.constant({ kind: 'lf-only' as const }),
  fc.constant({ kind: 'bad-chunk-size' as const }),
  fc.integer({ min: -50, max: -1 }).map((delta) => ({ kind: 'content-length-mismatch' as const, delta })),
)

function chunkedEncoding(body: Buffer, pieces: number): Buffer {
  const size = Math.max(1, Math.ceil(body.length / pieces))
  const out: Buffer[] = []
  for (let offset = 0; offset < body.length; offset += size) {
    const piece = body.subarray(offset, offset + size)
    out.push(Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n'))
  }
  out.push(Buffer.from('0\r\n\r\n'))
  return Buffer.concat(out)
}

const scenarioArb = fc.record({
  boundary: boundaryArb,
  parts: fc.array(partArb, { maxLength: 5 }),
  preamble: fc.constantFrom('', 'This is a preamble.', '--not-the-boundary'),
  epilogue: fc.constantFrom('', 'epilogue bytes\r\n', '--'),
  framing: framingArb,
  quoteBoundary: fc.boolean(),
  pieces: fc.integer({ min: 1, max: 7 }),
})
type Scenario = typeof scenarioArb extends fc.Arbitrary<infer T> ? T : never

describe('multipart and HTTP framing over a raw socket', () => {
  let t: TestApp
  let accountId: number
  let apiKey: string

  beforeAll(async () => {
    t = await startTestApp({ FILESHARE_IDLE_TIMEOUT_MS: '3000' })
    ;({ accountId, apiKey } = await t.createAccount('pro'))
    await t.app.services.accounts.setLimits(accountId, {
      requests_per_minute: 1_000_000,
      requests_per_day: 1_000_000,
      daily_uploads: 1_000_000,
    })
  })
  afterAll(async () => {
    await t?.close()
  })

  /** Waits (bounded) until no upload left anything behind: cleanup may finish after the answer. */
  async function expectNothingLeft(what: string, uploaded: number) {
    const deadline = Date.now() + 5_000
    let traces: unknown
    do {
      const list = (await t.app.inject({ url: '/api/v1/files', headers: bearer(apiKey) }).then((r) => r.json())) as {
        pagination: { total: number }
      }
      const stats = await t.app.services.accounts.stats(accountId)
      traces = {
        listed: list.pagination.total,
        blobs: await t.storedBlobs(),
        unfinished: await t.unfinishedWrites(),
        uploadsToday: stats.uploadsToday,
      }
      if (JSON.stringify(traces) === JSON.stringify({ listed: 0, blobs: [], unfinished: [], uploadsToday: uploaded })) return
      await new Promise((resolve) => setTimeout(resolve, 20))
    } while (Date.now() < deadline)
    // fast-check shows only the shrunk case, and once something is left behind every later run sees
    // it too: print the scenario that first left it.
    console.error(`left behind after ${what}: ${JSON.stringify(traces)}`)
    expect(traces, `${what}: nothing left behind`).toEqual({ listed: 0, blobs: [], unfinished: [], uploadsToday: uploaded })
  }

  /** Sends one scenario and checks the answer and what is left behind. */
  async function sendAndCheck({ boundary, parts, preamble, epilogue, framing, quoteBoundary, pieces }: Scenario, before: number) {
    fc.pre(!preamble.includes(`--${boundary}`) && parts.every((part) => !part.content.includes(`--${boundary}`)))
    const { body, partEnds } = multipartBody(boundary, parts, preamble, epilogue)
    let contentType = `multipart/form-data; boundary=${quoteBoundary || /[(),/:=?]/.test(boundary) ? `"${boundary}"` : boundary}`
    let sentBody = body
    // A client that half-closes once a `file` part is whole may still have its upload stored,
    // while Node aborts the request and no answer reaches it (httpAllowHalfOpen is false): that
    // outcome is a race, so such cuts fall before the end of the first whole `file` part and
    // before the last delimiter, where nothing may ever be stored. A short Content-Length may cut
    // anywhere: the request's own answer goes out before the 400 for the bytes after it.
    const safeCutEnd = Math.min(
      body.lastIndexOf(`--${boundary}--`) + 2 + boundary.length,
      ...parts.flatMap((part, i) => (part.isFileNamedFile ? [partEnds[i]!] : [])),
    )
    const halfCloseCut = (at: number) => Math.max(0, Math.min(at, safeCutEnd - 1))
    let lengthHeader = `Content-Length: ${body.length}`
    // Only a cut-off body ends our side of the connection: Node aborts a request whose client
    // half-closes (httpAllowHalfOpen is false), so a whole request keeps the socket open.
    let halfClose = false
    switch (framing.kind) {
      case 'intact':
        if (framing.chunked) {
          sentBody = chunkedEncoding(body, pieces)
          lengthHeader = 'Transfer-Encoding: chunked'
        }
        break
      case 'multipart-cut':
        sentBody = body.subarray(0, Math.floor(framing.at * body.length))
        lengthHeader = `Content-Length: ${sentBody.length}`
        break
      case 'http-cut':
        sentBody = body.subarray(0, halfCloseCut(Math.floor(framing.at * body.length)))
        halfClose = true
        break
      case 'wrong-boundary':
        contentType = framing.header
        break
      case 'lf-only':
        sentBody = Buffer.from(body.toString('latin1').replace(/\r\n/g, '\n'), 'latin1')
        lengthHeader = `Content-Length: ${sentBody.length}`
        break
      case 'bad-chunk-size':
        sentBody = Buffer.concat([Buffer.from('zz\r\n'), body, Buffer.from('\r\n0\r\n\r\n')])
        lengthHeader = 'Transfer-Encoding: chunked'
        break
      case 'content-length-mismatch':
        // Declares fewer bytes than it sends: the rest reads as a second, garbage request.
        lengthHeader = `Content-Length: ${Math.max(0, body.length + framing.delta)}`
        break
    }
    const head =
      `POST /api/v1/files/upload HTTP/1.1\r\nHost: fileshare.test\r\nAuthorization: Bearer ${apiKey}\r\n` +
      `Content-Type: ${contentType}\r\n${lengthHeader}\r\nConnection: close\r\n\r\n`
    const what = `${framing.kind} ${JSON.stringify(framing)} parts=${JSON.stringify(parts.map((p) => [p.disposition, p.headers.map((h) => h.slice(0, 40)), p.content.length]))} boundary=${boundary}`
    const exchange = await rawExchange(t.url, [Buffer.from(head, 'latin1'), sentBody], { halfClose })

    const bodyComplete = framing.kind !== 'http-cut' || sentBody.length === body.length
    if (bodyComplete) {
      // The server answers a whole request and closes the connection (Connection: close).
      expect(exchange.response, `${what}: an answer`).toBeDefined()
      expect(exchange.closedByServer, `${what}: closed by the server`).toBe(true)
    }
    // One answer per request. The only exception is a declared length shorter than the body,
    // where the leftover bytes are a second (malformed) request and get their own 400.
    const pipelinedGarbage = framing.kind === 'content-length-mismatch'
    if (exchange.response && !pipelinedGarbage) expect(exchange.trailing.length, `${what}: bytes after the answer`).toBe(0)
    const { code, json } = exchange.response ? expectDocumented(exchange.response, what, { success: UploadResponse }) : {}
    const status = exchange.response?.status

    // How much of the multipart body the server got as this request's body.
    const received =
      framing.kind === 'multipart-cut' || framing.kind === 'http-cut'
        ? sentBody.length
        : framing.kind === 'content-length-mismatch'
          ? Math.max(0, body.length + framing.delta)
          : body.length
    // A cut after the closing delimiter loses only the epilogue: the body is still whole.
    const closed = body.lastIndexOf(`--${boundary}--`) + boundary.length + 4
    const whole = (framing.kind === 'intact' || framing.kind === 'multipart-cut') && received >= closed
    const predictable = whole && !parts.some((p) => p.oversizedHeader)
    const fileParts = parts.filter((part) => part.isFileNamedFile)
    /** `file` parts whose content and ending delimiter arrived whole. */
    const completeFileParts = parts.filter((part, i) => part.isFileNamedFile && partEnds[i]! <= received)
    if (predictable) {
      if (parts.some((part) => part.refusedByParser)) expect(code, what).toBe('invalid_request')
      else if (parts.length === 0) expect(['missing_file', 'invalid_request'], what).toContain(code)
      else if (fileParts.length === 0) expect(code, what).toBe('missing_file')
      else if (fileParts.length > 1) expect(code, what).toBe('invalid_request')
      else expect(status, what).toBe(201)
    } else if (status === 201) {
      // Only a body whose close delimiter arrived may be taken (a short Content-Length may drop
      // part of the epilogue): never one cut right after its file part, which the parser alone
      // would end quietly as if it were whole, and never a partial file.
      expect(['intact', 'multipart-cut', 'content-length-mismatch'], what).toContain(framing.kind)
      expect(received, `${what}: the close delimiter arrived`).toBeGreaterThanOrEqual(closed)
      expect(completeFileParts.length, what).toBe(1)
    }

    // What is stored must be exactly one whole `file` part, and only after a 201.
    const listed = (await t.app.services.files.list(accountId, 1, 100)).files
    if (status === 201) {
      expect(
        listed.map((f) => f.id),
        `${what}: the one listed file`,
      ).toEqual([json!.file_id])
    } else {
      expect(listed, `${what}: nothing stored without a 201`).toEqual([])
    }
    expect(listed.length, what).toBeLessThanOrEqual(1)
    for (const file of listed) {
      const candidates = predictable ? fileParts : completeFileParts
      expect(
        candidates.map((part) => sha256(part.content)),
        `${what}: a whole file part`,
      ).toContain(file.sha256)
      const deleted = await t.app.inject({ method: 'DELETE', url: `/api/v1/files/${file.id}`, headers: bearer(apiKey) })
      expect(deleted.statusCode, what).toBe(200)
    }
    await expectNothingLeft(what, before + listed.length)
  }

  it('answers every upload body as documented and leaves nothing behind on failure', async () => {
    // fast-check reports only the shrunk case, whose failure may be a consequence of the first one
    // (what that run left behind): the first failure is printed as it happened.
    let firstFailure = true
    await fc.assert(
      fc.asyncProperty(scenarioArb, async (scenario) => {
        const before = (await t.app.services.accounts.stats(accountId)).uploadsToday
        try {
          await sendAndCheck(scenario, before)
        } catch (error) {
          if (firstFailure) console.error(`first failure, for ${JSON.stringify(scenario).slice(0, 2_000)}:`, error)
          firstFailure = false
          throw error
        } finally {
          // Whatever happened, the next run (and shrinking) starts from an empty account.
          for (const file of (await t.app.services.files.list(accountId, 1, 100)).files)
            await t.app.services.files.delete(accountId, file.id)
        }
      }),
      { numRuns: 100 },
    )
    // The server is still healthy after all of it.
    expect((await fetch(`${t.url}/healthz`)).status).toBe(200)
  }, 120_000)

  it('refuses more than 100 parts with invalid_request, storing nothing', async () => {
    const boundary = 'many-parts'
    const fields = Array.from({ length: 150 }, (_, i) => ({
      headerName: 'Content-Disposition',
      disposition: `form-data; name="f${i}"`,
      isFile: false,
      isFileNamedFile: false,
      headers: [],
      content: Buffer.from('v'),
      oversizedHeader: false,
      refusedByParser: false,
    }))
    const file: Part = { ...fields[0]!, disposition: 'form-data; name="file"; filename="late.bin"', isFile: true, isFileNamedFile: true }
    const { body } = multipartBody(boundary, [...fields, file], '', '')
    const head =
      `POST /api/v1/files/upload HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${apiKey}\r\n` +
      `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`
    const { response } = await rawExchange(t.url, [Buffer.from(head), body])
    expect(response).toBeDefined()
    expect(expectDocumented(response!, '150 parts').code).toBe('invalid_request')
    await expectNothingLeft('150 parts', (await t.app.services.accounts.stats(accountId)).uploadsToday)
  })
  /**
   * Sends `body` (boundary A) `attempts` times, declaring `declaredLength` bytes of it: each gets a
   * 400 invalid_request, and nothing is left behind.
   */
  async function expectRefusedEachTime(what: string, body: Buffer, declaredLength: number, attempts: number) {
    const before = (await t.app.services.accounts.stats(accountId)).uploadsToday
    const head =
      `POST /api/v1/files/upload HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${apiKey}\r\n` +
      `Content-Type: multipart/form-data; boundary=A\r\nContent-Length: ${declaredLength}\r\nConnection: close\r\n\r\n`
    for (let attempt = 0; attempt < attempts; attempt++) {
      const { response } = await rawExchange(t.url, [Buffer.from(head), body], { halfClose: false })
      expect(response, `${what}: an answer`).toBeDefined()
      expect(expectDocumented(response!, what).code).toBe('invalid_request')
    }
    await expectNothingLeft(what, before)
  }

  it('a declared length that ends inside the closing delimiter, after an empty file part, is 400 and never 500', async () => {
    // Found by the property above (seed 576106383 and others under load): the file part is cut, so
    // the store's own pipeline fails with a premature close of its own; that is the body's fault.
    const body = Buffer.from(
      '--A\r\nContent-Disposition: form-data; name="other"; filename=""\r\n\r\n\r\n' +
        '--A\r\nContent-Disposition: form-data; name="file"; filename=""\r\n\r\n\r\n--A--\r\nepilogue bytes\r\n',
      'latin1',
    )
    await expectRefusedEachTime('cut inside the closing delimiter', body, body.length - 21, 10)
  })
  it('a body that turns out malformed after a whole file part the store has not read yet is 400, and keeps no temp file', async () => {
    // Found by the property above (seed -1746314442): the cut in the third part's headers makes
    // the parser destroy the first part, whose bytes had all arrived but were still queued for
    // the store; the upload then waited forever, with no answer and its temp file in tmp/.
    const body = Buffer.from(
      `--A\r\nContent-Disposition: form-data; name="file"; filename="a.bin"\r\n\r\n${'a'.repeat(200_000)}\r\n` +
        `--A\r\nContent-Disposition: form-data; name="note"\r\n\r\n${'b'.repeat(130_000)}\r\n` +
        `--A\r\nContent-Disposition: form-data; name="other"; filename="b.bin"\r\nX-Pad: ${'p'.repeat(100)}\r\n\r\n\r\n--A--\r\n`,
      'latin1',
    )
    await expectRefusedEachTime('cut inside the last part', body, body.length - 50, 5)
  })
})
