import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CLAMD_AVAILABLE, EICAR, EICAR_SIGNATURE, startClamd, type TestClamd } from '../helpers/clamd.js'
import { startWebhookReceiver } from '../helpers/webhook-receiver.js'
import { bearer, startTestApp, unlimitedAccount, uploadFile, type TestApp } from '../helpers/test-app.js'

/**
 * Virus scanning (../shared/spec/upload-requests.md, second half) with Debian's real clamd on a
 * signature database of the test's own (test/helpers/clamd.ts), on both stacks: required mode fails
 * closed (nothing served before clamd's clean answer, also while clamd is down), async mode serves
 * at once; an infected file loses its bytes, links and place in the counters, and stays readable
 * for its owner.
 */

const HASHED = randomBytes(3000)
const SCAN_TIMING = { pollMs: 20, retryMs: 50, maxRetryMs: 200, leaseMs: 5_000 }
const MAX_BYTES = 200_000

/** A link of the public URL (files.example.test), reached on the test's own server. */
const local = (t: TestApp, url: string) => url.replace('http://files.example.test', t.url)

interface FileRecord {
  file_id: number
  public_link: string
  size: number
  scan: { status: string; signature: string | null; scanned_at: string | null } | null
}

describe.skipIf(!CLAMD_AVAILABLE)('virus scanning with clamd', () => {
  let clamd: TestClamd
  let required: TestApp
  let async: TestApp
  beforeAll(async () => {
    clamd = await startClamd({ infectedContents: [HASHED] })
    const env = {
      FILESHARE_CLAMD: clamd.url,
      FILESHARE_SCAN_MAX_BYTES: String(MAX_BYTES),
      FILESHARE_WEBHOOKS_ALLOW_PRIVATE: 'true',
      FILESHARE_WEBHOOKS_ALLOW_HTTP: 'true',
      FILESHARE_DOWNLOADS_PER_MINUTE: '100000',
    }
    ;[required, async] = await Promise.all([
      startTestApp(env, { scanning: SCAN_TIMING, webhookDispatch: { pollMs: 20 } }),
      startTestApp({ ...env, FILESHARE_SCAN: 'async' }, { scanning: SCAN_TIMING }),
    ])
  }, 60_000)
  afterAll(async () => {
    await Promise.allSettled([required?.close(), async?.close()])
    await clamd?.close()
  })

  async function details(t: TestApp, apiKey: string, id: number): Promise<FileRecord> {
    const response = await fetch(`${t.api}/files/${id}`, { headers: bearer(apiKey) })
    expect(response.status).toBe(200)
    return ((await response.json()) as { file: FileRecord }).file
  }

  async function settled(t: TestApp, apiKey: string, id: number): Promise<FileRecord> {
    let file: FileRecord | undefined
    await expect.poll(async () => (file = await details(t, apiKey, id)).scan?.status, { timeout: 15_000, interval: 50 }).not.toBe('pending')
    return file!
  }

  function tusUpload(t: TestApp, apiKey: string, content: Uint8Array) {
    return fetch(`${t.api}/uploads`, {
      method: 'POST',
      headers: {
        ...bearer(apiKey),
        'tus-resumable': '1.0.0',
        'upload-length': String(content.length),
        'content-type': 'application/offset+octet-stream',
      },
      body: content,
    })
  }

  it('required: a clean file is pending, then clean, and only then served', async () => {
    const { apiKey } = await unlimitedAccount(required)
    const content = randomBytes(50_000)
    const { body } = await uploadFile(required, apiKey, content, 'clean.bin')
    expect(body).toMatchObject({ scan: { status: 'pending', signature: null, scanned_at: null } })
    const file = await settled(required, apiKey, body.file_id)
    expect(file.scan).toEqual({ status: 'clean', signature: null, scanned_at: expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/) })
    const download = await fetch(local(required, file.public_link))
    expect(download.status).toBe(200)
    expect(Buffer.from(await download.arrayBuffer()).equals(content)).toBe(true)
  })

  it('an infected file loses its bytes, links and counters at once, raises its events, and stays readable for its owner', async () => {
    const { apiKey } = await unlimitedAccount(required)
    const hooks = await startWebhookReceiver()
    try {
      const webhook = await fetch(`${required.api}/webhooks`, {
        method: 'POST',
        headers: { ...bearer(apiKey), 'content-type': 'application/json' },
        body: JSON.stringify({ url: `${hooks.base}/hooks`, events: ['file.deleted'] }),
      })
      expect(webhook.status).toBe(201)
      const blobsBefore = await required.storedBlobs()
      const clean = await uploadFile(required, apiKey, 'harmless', 'ok.txt')
      const { body } = await uploadFile(required, apiKey, `prefix ${EICAR} suffix`, 'eicar.com')
      const infected = await settled(required, apiKey, body.file_id)
      expect(infected.scan).toEqual({ status: 'infected', signature: EICAR_SIGNATURE, scanned_at: expect.any(String) })
      expect((await fetch(local(required, body.public_link))).status).toBe(404)
      // Gone from the list and the counters; the clean one stays.
      const list = (await (await fetch(`${required.api}/files`, { headers: bearer(apiKey) })).json()) as {
        files: FileRecord[]
        pagination: { total: number }
      }
      expect(list.files.map((file) => file.file_id)).toEqual([clean.body.file_id])
      expect(list.pagination.total).toBe(1)
      const stats = (await (await fetch(`${required.api}/stats`, { headers: bearer(apiKey) })).json()) as {
        stats: { total_files: number; total_size: number }
      }
      expect(stats.stats).toMatchObject({ total_files: 1, total_size: 'harmless'.length })
      // Its bytes are deleted from the store.
      await expect.poll(async () => (await required.storedBlobs()).length - blobsBefore.length).toBe(1)
      // The events: the webhook's file.deleted with reason infected, the audit log's scan.infected by the system.
      await expect.poll(() => hooks.received.length).toBe(1)
      expect(JSON.parse(hooks.received[0]!.body)).toMatchObject({
        type: 'file.deleted',
        data: { file_id: body.file_id, filename: 'eicar.com', reason: 'infected' },
      })
      const audit = (await (await fetch(`${required.api}/audit-events?action=scan.infected`, { headers: bearer(apiKey) })).json()) as {
        events: Array<Record<string, unknown>>
      }
      expect(audit.events).toEqual([
        expect.objectContaining({
          action: 'scan.infected',
          actor: { type: 'system', id: null },
          target: { type: 'file', id: body.file_id },
          details: { filename: 'eicar.com', size: body.size, signature: EICAR_SIGNATURE },
        }),
      ])
      // Its owner may dismiss the record.
      expect((await fetch(`${required.api}/files/${body.file_id}`, { method: 'DELETE', headers: bearer(apiKey) })).status).toBe(200)
      expect((await fetch(`${required.api}/files/${body.file_id}`, { headers: bearer(apiKey) })).status).toBe(404)
    } finally {
      await hooks.close()
    }
  })

  it('a resumable upload is scanned the same; a hash signature of a generated file is found', async () => {
    const { apiKey } = await unlimitedAccount(required)
    const response = await tusUpload(required, apiKey, HASHED)
    expect(response.status).toBe(201)
    const id = Number(response.headers.get('fileshare-file-id'))
    expect((await settled(required, apiKey, id)).scan).toMatchObject({ status: 'infected', signature: clamd.hashSignatures[0] })
  })

  it('required: a file too large to scan is refused (403 file_not_scannable), multipart and tus alike', async () => {
    const { apiKey } = await unlimitedAccount(required)
    const { response, body } = await uploadFile(required, apiKey, randomBytes(MAX_BYTES + 1), 'big.bin')
    expect(response.status).toBe(403)
    expect(body).toMatchObject({ error: { code: 'file_not_scannable', message: expect.stringContaining('FILESHARE_SCAN_MAX_BYTES') } })
    const tus = await fetch(`${required.api}/uploads`, {
      method: 'POST',
      headers: { ...bearer(apiKey), 'tus-resumable': '1.0.0', 'upload-length': String(MAX_BYTES + 1) },
    })
    expect(tus.status).toBe(403)
    expect(await tus.json()).toMatchObject({ error: { code: 'file_not_scannable' } })
    // A deferred length is held to what can be scanned as its bytes come.
    const deferred = await fetch(`${required.api}/uploads`, {
      method: 'POST',
      headers: { ...bearer(apiKey), 'tus-resumable': '1.0.0', 'upload-defer-length': '1' },
    })
    expect(deferred.status).toBe(201)
    const chunk = await fetch(`${required.url}${deferred.headers.get('location')}`, {
      method: 'PATCH',
      headers: { ...bearer(apiKey), 'tus-resumable': '1.0.0', 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' },
      body: randomBytes(MAX_BYTES + 1),
    })
    expect(chunk.status).toBe(403)
    expect(await chunk.json()).toMatchObject({ error: { code: 'file_not_scannable' } })
    const stats = (await (await fetch(`${required.api}/stats`, { headers: bearer(apiKey) })).json()) as { stats: { total_files: number } }
    expect(stats.stats.total_files).toBe(0)
    // A guest page tells its guests the same limit.
    const request = await fetch(`${required.api}/upload-requests`, {
      method: 'POST',
      headers: { ...bearer(apiKey), 'content-type': 'application/json' },
      body: JSON.stringify({ label: 'scanned', expires_in: 3600 }),
    })
    const { upload_request } = (await request.json()) as { upload_request: { url: string } }
    const page = await (await fetch(local(required, upload_request.url))).text()
    expect(page).toContain(`"max_file_size":${MAX_BYTES}`)
  })

  it('required, clamd down: files stay pending and are never served (409 scan_pending), then end clean or infected once it is back', async () => {
    const { apiKey } = await unlimitedAccount(required)
    await clamd.stop()
    let clean: number[] = []
    let infected: number[] = []
    try {
      clean = await Promise.all(
        Array.from({ length: 4 }, async (_, i) => (await uploadFile(required, apiKey, randomBytes(1000 + i), `c${i}.bin`)).body.file_id),
      )
      infected = await Promise.all(
        Array.from({ length: 2 }, async (_, i) => (await uploadFile(required, apiKey, `${i} ${EICAR}`, `v${i}.com`)).body.file_id),
      )
      // Several failed attempts, backing off: still pending, nothing served.
      await new Promise((resolve) => setTimeout(resolve, 400))
      for (const id of [...clean, ...infected]) {
        const file = await details(required, apiKey, id)
        expect(file.scan?.status, `file ${id}`).toBe('pending')
        const download = await fetch(local(required, file.public_link))
        expect(download.status).toBe(409)
        expect(download.headers.get('retry-after')).toMatch(/^\d+$/)
        expect(await download.json()).toMatchObject({ error: { code: 'scan_pending' } })
      }
      // A browser gets a page; a link with a policy gives no grant while its file is pending.
      const first = await details(required, apiKey, clean[0]!)
      const page = await fetch(local(required, first.public_link), { headers: { accept: 'text/html' } })
      expect(page.status).toBe(409)
      expect(page.headers.get('content-type')).toMatch(/^text\/html/)
      expect(await page.text()).toContain('being checked')
      const link = await fetch(`${required.api}/files/${clean[0]}/links`, {
        method: 'POST',
        headers: { ...bearer(apiKey), 'content-type': 'application/json' },
        body: JSON.stringify({ max_downloads: 5 }),
      })
      const { link: limited } = (await link.json()) as { link: { url: string } }
      expect((await fetch(local(required, limited.url), { method: 'POST' })).status).toBe(409)
    } finally {
      await clamd.start()
    }
    for (const id of clean) expect((await settled(required, apiKey, id)).scan?.status, `file ${id}`).toBe('clean')
    for (const id of infected) expect((await settled(required, apiKey, id)).scan?.status, `file ${id}`).toBe('infected')
    for (const id of clean) expect((await fetch(local(required, (await details(required, apiKey, id)).public_link))).status).toBe(200)
  })

  it('async: links work at once; an infected file is removed when found, even behind a grant given before', async () => {
    const { apiKey } = await unlimitedAccount(async)
    // clamd stopped: the verdict waits, so the grant below is surely taken before it.
    await clamd.stop()
    let grantUrl: string
    let body: { file_id: number; public_link: string }
    try {
      ;({ body } = await uploadFile(async, apiKey, EICAR, 'eicar.txt'))
      expect((await fetch(local(async, body.public_link))).status).toBe(200)
      const link = await fetch(`${async.api}/files/${body.file_id}/links`, {
        method: 'POST',
        headers: { ...bearer(apiKey), 'content-type': 'application/json' },
        body: JSON.stringify({ max_downloads: 3 }),
      })
      expect(link.status).toBe(201)
      const { link: limited } = (await link.json()) as { link: { url: string } }
      const grant = await fetch(local(async, limited.url), { method: 'POST', redirect: 'manual' })
      expect(grant.status).toBe(303)
      grantUrl = local(async, new URL(grant.headers.get('location')!, limited.url).href)
      expect((await fetch(grantUrl)).status).toBe(200)
    } finally {
      await clamd.start()
    }
    expect((await settled(async, apiKey, body.file_id)).scan?.status).toBe('infected')
    expect((await fetch(local(async, body.public_link))).status).toBe(404)
    expect((await fetch(grantUrl)).status).toBe(404)
    // Too large to scan: skipped, and served.
    const big = await uploadFile(async, apiKey, randomBytes(MAX_BYTES + 1), 'big.bin')
    expect(big.response.status).toBe(201)
    expect(big.body).toMatchObject({ scan: { status: 'skipped' } })
    expect((await fetch(local(async, big.body.public_link))).status).toBe(200)
  })
})

describe.skipIf(!CLAMD_AVAILABLE)('virus scanning: what clamd cannot do', () => {
  let small: TestClamd
  beforeAll(async () => {
    // clamd's own StreamMaxLength below what the operator declared (FILESHARE_SCAN_MAX_BYTES' default, 25 MiB).
    small = await startClamd({ streamMaxLength: 10_000 })
  }, 60_000)
  afterAll(async () => {
    await small?.close()
  })

  it("required: a file over clamd's own limit ends error, and its link answers 403 file_not_scannable; async: skipped and served", async () => {
    for (const mode of ['required', 'async'] as const) {
      const t = await startTestApp({ FILESHARE_CLAMD: small.url, FILESHARE_SCAN: mode }, { scanning: SCAN_TIMING })
      try {
        const { apiKey } = await unlimitedAccount(t)
        const { body } = await uploadFile(t, apiKey, randomBytes(20_000), 'over.bin')
        let status: string | undefined
        await expect
          .poll(
            async () => {
              const response = await fetch(`${t.api}/files/${body.file_id}`, { headers: bearer(apiKey) })
              status = ((await response.json()) as { file: FileRecord }).file.scan?.status
              return status
            },
            { timeout: 15_000, interval: 50 },
          )
          .not.toBe('pending')
        expect(status, mode).toBe(mode === 'required' ? 'error' : 'skipped')
        const download = await fetch(local(t, body.public_link))
        if (mode === 'required') {
          expect(download.status).toBe(403)
          expect(await download.json()).toMatchObject({ error: { code: 'file_not_scannable' } })
        } else {
          expect(download.status).toBe(200)
        }
      } finally {
        await t.close()
      }
    }
  })

  it('clamd unreachable at start: a warning, the server starts; in async mode files are served while they wait', async () => {
    const lines: string[] = []
    const t = await startTestApp(
      { FILESHARE_CLAMD: 'tcp://127.0.0.1:9', FILESHARE_SCAN: 'async', FILESHARE_LOG_LEVEL: 'warn' },
      { scanning: SCAN_TIMING, logStream: { write: (line) => lines.push(line) } },
    )
    try {
      expect(lines.some((line) => line.includes('clamd does not answer at tcp://127.0.0.1:9'))).toBe(true)
      const { apiKey } = await unlimitedAccount(t)
      const { body } = await uploadFile(t, apiKey, 'served while pending', 'pending.txt')
      expect(body).toMatchObject({ scan: { status: 'pending' } })
      expect((await fetch(local(t, body.public_link))).status).toBe(200)
      await new Promise((resolve) => setTimeout(resolve, 200))
      const file = (await (await fetch(`${t.api}/files/${body.file_id}`, { headers: bearer(apiKey) })).json()) as { file: FileRecord }
      expect(file.file.scan?.status).toBe('pending')
    } finally {
      await t.close()
    }
  })
})
