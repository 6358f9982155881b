// Virus scanning (issue 35) against real servers: the launcher's main server does not scan (every
// file's scan is null); its `scanning` server scans every upload with clamd in required mode. There
// the EICAR test string ends infected (bytes, links and list entry gone, get() still answers), and
// a clean file ends clean and downloads. Skipped, shown as skipped, when the launcher has no
// scanning server (clamd not installed).
import { readFileSync } from 'node:fs'
import { afterAll, describe, expect, it } from 'vitest'
import { FILE_FIELDS, Fileshare, LimitExceededError, NotFoundError, type FileRecord, type FileScanStatus } from '../../src/index.js'
import { client, randomBytes, server, sha256Hex, tempDir } from '../helpers/env.js'

const tmp = tempDir()
afterAll(() => tmp.remove())

/** files.get(id) until its scan is no longer pending (the launcher's clamd answers in ~50 ms). */
async function verdict(fs: Fileshare, fileId: number, timeoutMs = 30_000): Promise<FileRecord> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const file = await fs.files.get(fileId)
    if (file.scan?.status !== 'pending') return file
    if (Date.now() > deadline) throw new Error(`file ${fileId} still pending after ${timeoutMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

async function listedIds(fs: Fileshare): Promise<number[]> {
  const ids: number[] = []
  for await (const file of fs.files.iterate({ limit: 100 })) ids.push(file.file_id)
  return ids
}

describe('the main server does not scan', () => {
  const fs = client('pro')

  it('scan is null in the upload answer, get(), list() and the resumable upload answer', async () => {
    const data = randomBytes(10_000, 35)
    const uploaded = await fs.files.upload(data, { filename: 'unscanned.bin' })
    expect(Object.keys(uploaded).sort()).toEqual([...FILE_FIELDS].sort())
    expect(uploaded.scan).toBeNull()
    expect((await fs.files.get(uploaded.file_id)).scan).toBeNull()
    const page = await fs.files.list({ limit: 100 })
    const listed = page.files.find((f) => f.file_id === uploaded.file_id)
    expect(listed).toBeDefined()
    expect(listed!.scan).toBeNull()
    const resumable = await fs.files.upload(data, { filename: 'unscanned-tus.bin', resumable: true })
    expect(resumable.scan).toBeNull()
    await fs.files.delete(uploaded.file_id)
    await fs.files.delete(resumable.file_id)
  })
})

describe('the scanning server (FILESHARE_SCAN=required, clamd with the EICAR test signature)', () => {
  const scanning = server().scanning
  const fs = scanning ? new Fileshare({ baseUrl: scanning.base_url, apiKey: scanning.keys.pro }) : undefined
  const skipUnless = (context: { skip: (note: string) => void }) => {
    if (!scanning) context.skip('the launcher has no scanning server (clamd is not installed, or the launcher predates it)')
  }

  it('the launcher says how it scans', (context) => {
    skipUnless(context)
    expect(scanning).toMatchObject({ mode: 'required', signature: expect.any(String) })
    expect(scanning!.eicar).toHaveLength(68)
    expect(scanning!.base_url).toMatch(/\/api\/v1$/)
  })

  it('the EICAR test string ends infected; its link answers 404, the list drops it, get() still answers; delete removes the record', async (context) => {
    skipUnless(context)
    const before = await fs!.stats()
    const uploaded = await fs!.files.upload(new TextEncoder().encode(scanning!.eicar), { filename: 'eicar.com' })
    expect(uploaded.scan).not.toBeNull()
    expect((['pending', 'infected'] as (FileScanStatus | undefined)[]).includes(uploaded.scan?.status)).toBe(true)
    if (uploaded.scan?.status === 'pending') expect(uploaded.scan).toEqual({ status: 'pending', signature: null, scanned_at: null })

    const infected = await verdict(fs!, uploaded.file_id)
    expect(infected.scan).toEqual({ status: 'infected', signature: scanning!.signature, scanned_at: expect.any(String) })
    expect(infected.scan!.scanned_at).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/)
    expect(infected).toMatchObject({ file_id: uploaded.file_id, filename: 'eicar.com', sha256: uploaded.sha256 })

    // Its links are gone: the public link answers 404 to anyone, and download() says NotFoundError.
    const raw = await fetch(uploaded.public_link)
    expect(raw.status).toBe(404)
    await raw.body?.cancel()
    const post = await fetch(uploaded.public_link, { method: 'POST', redirect: 'manual', headers: { accept: 'application/json' } })
    expect(post.status).toBe(404)
    await post.body?.cancel()
    await expect(fs!.download(uploaded, tmp.file('eicar.com'))).rejects.toBeInstanceOf(NotFoundError)
    const links = await fs!.links.list(uploaded.file_id).catch((e: unknown) => e)
    if (links instanceof Error) expect(links).toBeInstanceOf(NotFoundError)
    else expect((links as { status: string }[]).filter((l) => l.status === 'active')).toEqual([])

    // Gone from the list, the count and the stats; get() still answers it for its owner.
    expect(await listedIds(fs!)).not.toContain(uploaded.file_id)
    const after = await fs!.stats()
    expect(after.stats.total_files).toBe(before.stats.total_files)
    expect(after.stats.total_size).toBe(before.stats.total_size)
    expect((await fs!.files.get(uploaded.file_id)).scan?.status).toBe('infected')

    // The audit log has scan.infected by the system.
    const { events } = await fs!.auditEvents.list({ action: 'scan.infected', limit: 100 })
    const event = events.find((e) => e.target?.id === uploaded.file_id)
    expect(event).toBeDefined()
    expect(event).toMatchObject({
      action: 'scan.infected',
      actor: { type: 'system', id: null },
      target: { type: 'file', id: uploaded.file_id },
      details: { filename: 'eicar.com', size: uploaded.size, signature: scanning!.signature },
    })

    // delete() removes the record (as any delete), then 404.
    await fs!.files.delete(uploaded.file_id)
    await expect(fs!.files.get(uploaded.file_id)).rejects.toBeInstanceOf(NotFoundError)
  })

  it('a clean file ends clean, is listed and downloads (download() waits out a scan_pending)', async (context) => {
    skipUnless(context)
    const data = randomBytes(200_000, 36)
    const uploaded = await fs!.files.upload(data, { filename: 'clean.bin' })
    expect(uploaded.scan).not.toBeNull()
    // Straight away: if the scan is not done yet the link answers 409 scan_pending, which download() waits out.
    const early = await fs!.download(uploaded, tmp.file('clean-early.bin'))
    expect(early.sha256).toBe(sha256Hex(data))
    const clean = await verdict(fs!, uploaded.file_id)
    expect(clean.scan).toEqual({ status: 'clean', signature: null, scanned_at: expect.any(String) })
    expect(await listedIds(fs!)).toContain(uploaded.file_id)
    const listed = (await fs!.files.list({ limit: 100 })).files.find((f) => f.file_id === uploaded.file_id)
    expect(listed?.scan?.status).toBe('clean')
    const result = await fs!.download(clean, tmp.file('clean.bin'), { resume: false })
    expect(result.sha256).toBe(sha256Hex(data))
    expect(sha256Hex(readFileSync(tmp.file('clean.bin')))).toBe(sha256Hex(data))
    await fs!.files.delete(uploaded.file_id)
  })

  it('a clean file sent resumably (tus) is scanned too', async (context) => {
    skipUnless(context)
    const data = randomBytes(1_500_000, 37)
    const uploaded = await fs!.files.upload(data, { filename: 'clean-tus.bin', resumable: true, chunkSize: 512 * 1024 })
    expect(uploaded.scan).not.toBeNull()
    expect((await verdict(fs!, uploaded.file_id)).scan?.status).toBe('clean')
    await fs!.files.delete(uploaded.file_id)
  })

  it('a file larger than FILESHARE_SCAN_MAX_BYTES (25 MiB by default) is refused: 403 file_not_scannable, a LimitExceededError', async (context) => {
    skipUnless(context)
    const limits = (await fs!.stats()).limits
    const size = 25 * 1024 * 1024 + 1
    if (limits.max_file_size < size) return context.skip(`the plan's max_file_size (${limits.max_file_size}) is below the scan limit`)
    const error = await fs!.files.upload(new Uint8Array(size), { filename: 'too-big.bin', resumable: false }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(LimitExceededError)
    expect(error).toMatchObject({ status: 403, code: 'file_not_scannable' })
  })
})
