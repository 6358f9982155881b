// Virus scanning (issue 35) against fakes: a file record's `scan` with each status, the two error
// codes (403 file_not_scannable a LimitExceededError, 409 scan_pending a ScanPendingError that
// download() waits out per Retry-After), and how `fshare` shows a file's scan.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { run } from '../../src/cli/main.js'
import { exitCodeFor } from '../../src/cli/exit-codes.js'
import { formatScan } from '../../src/cli/output.js'
import {
  BadRequestError,
  ERROR_CODES,
  FILE_FIELDS,
  FILE_SCAN_FIELDS,
  FILE_SCAN_STATUSES,
  LimitExceededError,
  PermissionDeniedError,
  ScanPendingError,
  type AuditAction,
  type FileScan,
  type FileScanStatus,
  type WebhookEventData,
} from '../../src/index.js'
import { FILE, LINK, apiError, fakeClient, json, type Recorded } from '../helpers/fake-fetch.js'
import { randomBytes, sha256Hex } from '../helpers/env.js'

const SCANS: Record<FileScanStatus, FileScan> = {
  pending: { status: 'pending', signature: null, scanned_at: null },
  clean: { status: 'clean', signature: null, scanned_at: '2026-11-27 10:00:01' },
  infected: { status: 'infected', signature: 'Win.Test.EICAR_HDB-1', scanned_at: '2026-11-27 10:00:02' },
  error: { status: 'error', signature: null, scanned_at: '2026-11-27 10:00:03' },
  skipped: { status: 'skipped', signature: null, scanned_at: '2026-11-27 10:00:04' },
}

const scanPending = () => apiError(409, 'scan_pending', { 'retry-after': '10' })

describe('a file record’s scan', () => {
  it('the types and lists: scan is the last field of a file; five statuses; three fields', () => {
    expect(FILE_FIELDS.at(-1)).toBe('scan')
    expect(FILE_SCAN_STATUSES).toEqual(['pending', 'clean', 'infected', 'error', 'skipped'])
    expect(FILE_SCAN_FIELDS).toEqual(['status', 'signature', 'scanned_at'])
    expect(ERROR_CODES).toContain('scan_pending')
    expect(ERROR_CODES).toContain('file_not_scannable')
    const action: AuditAction = 'scan.infected'
    const deleted: WebhookEventData['file.deleted'] = { file_id: 7, filename: 'a.txt', reason: 'infected' }
    expect([action, deleted.reason]).toEqual(['scan.infected', 'infected'])
  })

  it.each(FILE_SCAN_STATUSES)('parses a file whose scan is %s, as sent', async (status) => {
    const raw = { ...FILE, scan: SCANS[status] }
    const { client } = fakeClient([() => json(200, { success: true, file: raw })])
    const file = await client.files.get(7)
    expect(file.scan).toEqual(SCANS[status])
    expect(file.scan?.status).toBe(status)
    expect(JSON.parse(JSON.stringify(file))).toEqual(raw)
  })

  it('an infected file: its signature and the time of the verdict', async () => {
    const { client } = fakeClient([() => json(200, { success: true, file: { ...FILE, scan: SCANS.infected } })])
    const file = await client.files.get(7)
    expect(file.scan).toEqual({ status: 'infected', signature: 'Win.Test.EICAR_HDB-1', scanned_at: '2026-11-27 10:00:02' })
  })

  it('scan: null (the server does not scan) stays null; a server from before scanning (no field) gives null too', async () => {
    const { scan: _scan, ...older } = FILE
    const { client } = fakeClient([
      () => json(200, { success: true, file: FILE }),
      () => json(200, { success: true, file: older }),
      () =>
        json(200, {
          success: true,
          files: [
            { ...FILE, file_id: 3, scan: SCANS.clean },
            { ...older, file_id: 2 },
            { ...FILE, file_id: 1, scan: SCANS.pending },
          ],
          pagination: { page: 1, limit: 20, total: 3, pages: 1, next_before_id: null },
        }),
    ])
    expect((await client.files.get(7)).scan).toBeNull()
    const fromOlder = await client.files.get(7)
    expect(fromOlder.scan).toBeNull()
    expect(Object.keys(fromOlder)).toContain('scan')
    const list = await client.files.list()
    expect(list.files.map((f) => f.scan?.status ?? null)).toEqual(['clean', null, 'pending'])
  })

  it('an upload answer carries the scan (pending while the server scans)', async () => {
    const { client } = fakeClient([() => json(201, { success: true, ...FILE, scan: SCANS.pending })], { resumableThreshold: 1e12 })
    const file = await client.files.upload(new TextEncoder().encode('hello'), { filename: 'a.txt' })
    expect(file.scan).toEqual(SCANS.pending)
  })
})

describe('the scan errors', () => {
  it('403 file_not_scannable at upload: a LimitExceededError (not a PermissionDeniedError), never retried', async () => {
    const { client, requests } = fakeClient([() => apiError(403, 'file_not_scannable')], { resumableThreshold: 1e12 })
    const error = await client.files.upload(new TextEncoder().encode('hello'), { filename: 'big.iso' }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(LimitExceededError)
    expect(error).not.toBeInstanceOf(PermissionDeniedError)
    expect(error).toMatchObject({ status: 403, code: 'file_not_scannable', requestId: 'req-123' })
    expect(requests).toHaveLength(1)
    expect(exitCodeFor(error)).toBe(5)
  })

  it('403 file_not_scannable of a download link (a file whose scan is error): a LimitExceededError, not retried', async () => {
    const { client, requests, sleeps } = fakeClient([() => apiError(403, 'file_not_scannable')])
    const error = await client.download(LINK, new WritableStream()).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(LimitExceededError)
    expect(error).toMatchObject({ code: 'file_not_scannable' })
    expect(requests).toHaveLength(1)
    expect(sleeps).toEqual([])
  })

  it('409 scan_pending: a ScanPendingError (a BadRequestError) with retryAfter; other 409s stay BadRequestError', async () => {
    const { client } = fakeClient([scanPending, () => apiError(409, 'default_link_required')], { maxRetries: 0 })
    const pending = await client.download(LINK, new WritableStream()).catch((e: unknown) => e)
    expect(pending).toBeInstanceOf(ScanPendingError)
    expect(pending).toBeInstanceOf(BadRequestError)
    expect(pending).toMatchObject({ name: 'ScanPendingError', status: 409, code: 'scan_pending', retryAfter: 10 })
    expect(exitCodeFor(pending)).toBe(7)
    const other = await client.links.delete(1).catch((e: unknown) => e)
    expect(other).toBeInstanceOf(BadRequestError)
    expect(other).not.toBeInstanceOf(ScanPendingError)
  })
})

describe('download() of a file not scanned yet', () => {
  const data = randomBytes(3000, 35)
  const GRANT = `${LINK.url}/grant1`
  const granted = () =>
    new Response(JSON.stringify({ success: true, download_url: GRANT, expires_at: '2026-11-27 13:00:00' }), {
      status: 303,
      headers: { location: GRANT, 'content-type': 'application/json' },
    })
  const file = () =>
    new Response(data as Uint8Array<ArrayBuffer>, {
      status: 200,
      headers: { etag: `"${sha256Hex(data)}"`, 'content-length': String(data.length) },
    })
  const call = (r: Recorded) => `${r.method} ${r.url}`
  const collect = (chunks: Uint8Array[]) => new WritableStream<Uint8Array>({ write: (chunk) => void chunks.push(chunk) })

  it('the link’s POST answers 409 scan_pending: waits Retry-After (10 s) and asks again', async () => {
    const { client, requests, sleeps } = fakeClient([scanPending, scanPending, granted, file])
    const chunks: Uint8Array[] = []
    const result = await client.download(LINK, collect(chunks))
    expect(result).toEqual({ size: data.length, sha256: sha256Hex(data), resumedFrom: 0 })
    expect(sleeps).toEqual([10_000, 10_000])
    expect(requests.map(call)).toEqual([`POST ${LINK.url}`, `POST ${LINK.url}`, `POST ${LINK.url}`, `GET ${GRANT}`])
  })

  it('still pending after maxRetries: the ScanPendingError', async () => {
    const { client, requests, sleeps } = fakeClient([scanPending], { maxRetries: 2 })
    const error = await client.download(LINK, new WritableStream()).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ScanPendingError)
    expect(requests).toHaveLength(3)
    expect(sleeps).toEqual([10_000, 10_000])
  })

  it('a grant URL given before the scan ended answers 409 too: waited out the same way', async () => {
    const { client, requests, sleeps } = fakeClient([scanPending, file])
    const chunks: Uint8Array[] = []
    await client.download(GRANT, collect(chunks))
    expect(sleeps).toEqual([10_000])
    expect(requests.map(call)).toEqual([`GET ${GRANT}`, `GET ${GRANT}`])
    expect(sha256Hex(Buffer.concat(chunks))).toBe(sha256Hex(data))
  })

  it('a Retry-After over a minute is not slept through', async () => {
    const { client, requests, sleeps } = fakeClient([() => apiError(409, 'scan_pending', { 'retry-after': '600' })])
    const error = await client.download(LINK, new WritableStream()).catch((e: unknown) => e)
    expect(error).toMatchObject({ name: 'ScanPendingError', retryAfter: 600 })
    expect(requests).toHaveLength(1)
    expect(sleeps).toEqual([])
  })
})

describe('fshare shows the scan', () => {
  it('formatScan: each status, long and short; null is "not scanned" / "-"', () => {
    expect(FILE_SCAN_STATUSES.map((status) => formatScan(SCANS[status]))).toEqual([
      'pending: not scanned yet',
      'clean (2026-11-27 10:00:01 UTC)',
      'infected: Win.Test.EICAR_HDB-1 (2026-11-27 10:00:02 UTC)',
      'error: too large for the scanner, never served (2026-11-27 10:00:03 UTC)',
      'skipped: too large to scan, served unscanned (2026-11-27 10:00:04 UTC)',
    ])
    expect(FILE_SCAN_STATUSES.map((status) => formatScan(SCANS[status], true))).toEqual([...FILE_SCAN_STATUSES])
    expect([formatScan(null), formatScan(null, true)]).toEqual(['not scanned', '-'])
    expect(formatScan({ status: 'infected', signature: 'Evil\u001b[31m', scanned_at: null })).toBe('infected: Evil\\x1b[31m')
  })

  // A small server answering the three calls, as the API would.
  let server: Server
  let baseUrl = ''
  let scanOfList: (FileScan | null)[] = []
  beforeAll(async () => {
    server = createServer((req, res) => {
      const send = (status: number, body: unknown) =>
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body))
      if (req.method === 'GET' && req.url === '/api/v1/files/7')
        return send(200, { success: true, file: { ...FILE, scan: SCANS.infected } })
      if (req.method === 'GET' && req.url === '/api/v1/files/8') return send(200, { success: true, file: { ...FILE, file_id: 8 } })
      if (req.method === 'GET' && /^\/api\/v1\/files(\?|$)/.test(req.url ?? '')) {
        return send(200, {
          success: true,
          files: scanOfList.map((scan, i) => ({ ...FILE, file_id: 10 - i, scan })),
          pagination: { page: 1, limit: 20, total: scanOfList.length, pages: 1, next_before_id: null },
        })
      }
      if (req.method === 'POST' && req.url === '/api/v1/files/upload') {
        req.resume()
        req.on('end', () => send(201, { success: true, ...FILE, scan: SCANS.pending }))
        return
      }
      send(404, { success: false, error: { code: 'not_found', message: 'File not found.' } })
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`
  })
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

  async function fshare(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    let stdout = ''
    let stderr = ''
    const code = await run({
      argv,
      env: { FILESHARE_BASE_URL: baseUrl, FILESHARE_API_KEY: `fsk_${'k'.repeat(43)}` },
      stdout: { write: (text: string) => ((stdout += text), true) } as never,
      stderr: { write: (text: string) => ((stderr += text), true) },
      signal: new AbortController().signal,
    })
    return { code, stdout, stderr }
  }

  it('info: a scan line (infected with its signature; "not scanned" when the server does not scan)', async () => {
    const infected = await fshare('info', '7')
    expect(infected.code).toBe(0)
    expect(infected.stdout).toMatch(/^scan +infected: Win\.Test\.EICAR_HDB-1 \(2026-11-27 10:00:02 UTC\)$/m)
    const off = await fshare('info', '8')
    expect(off.stdout).toMatch(/^scan +not scanned$/m)
    expect(JSON.parse((await fshare('info', '7', '--json')).stdout).scan).toEqual(SCANS.infected)
  })

  it('ls: a SCAN column when the server scans, none when every scan is null', async () => {
    scanOfList = [SCANS.clean, null, SCANS.pending]
    const scanned = await fshare('ls')
    expect(scanned.code).toBe(0)
    const lines = scanned.stdout.split('\n')
    expect(lines[0]).toMatch(/^ *ID +NAME +SIZE +UPLOADED \(UTC\) +DOWNLOADS +SCAN +LINK$/)
    expect(lines[1]).toMatch(/^10 +a\.txt +5 B +2026-11-22 09:30:00 +0 +clean +http:\/\/fake\.test\/download\/tok$/)
    expect(lines[2]).toMatch(/ 0 +- +http:/)
    expect(lines[3]).toMatch(/ 0 +pending +http:/)
    scanOfList = [null, null]
    const off = await fshare('ls')
    expect(off.stdout.split('\n')[0]).toMatch(/^ *ID +NAME +SIZE +UPLOADED \(UTC\) +DOWNLOADS +LINK$/)
    expect(off.stdout).not.toContain('SCAN')
    scanOfList = [SCANS.skipped]
    expect((await fshare('ls', '--all')).stdout).toMatch(/ +skipped +http:/)
  })

  it('upload: the line ends in the scan status; --json has the record with its scan', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fileshare-scan-cli-'))
    const path = join(dir, 'hello.txt')
    writeFileSync(path, 'hello')
    const human = await fshare('upload', '--no-progress', path)
    expect(human.code).toBe(0)
    expect(human.stdout).toMatch(/^uploaded .*hello\.txt: id 7, 5 B, http:\/\/fake\.test\/download\/tok, scan pending$/m)
    const line = JSON.parse((await fshare('upload', '--json', path)).stdout) as { ok: boolean; file: { scan: FileScan } }
    expect(line).toMatchObject({ ok: true, file: { scan: SCANS.pending } })
    rmSync(dir, { recursive: true, force: true })
  })
})
