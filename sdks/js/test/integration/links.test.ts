// client.links, files.update, the upload's expires_in and download() through the POST-and-grant
// flow, against the real server (the shared launcher's; another account's links on a launcher of
// this file's own, whose "limited" account the suite's limit tests do not spend).
import { readFileSync, writeFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  AuthenticationError,
  BadRequestError,
  Fileshare,
  LimitExceededError,
  NotFoundError,
  RateLimitError,
  type FileRecord,
} from '../../src/index.js'
import { client, randomBytes, server, sha256Hex, tempDir } from '../helpers/env.js'
import { startLauncher, stopLauncher, type LauncherInfo } from '../helpers/launcher.js'
import { startCuttingProxy, type CuttingProxy } from '../helpers/proxy.js'

const tmp = tempDir()
afterAll(() => tmp.remove())

const fs = client('pro')
/** Seconds between an API time (`YYYY-MM-DD HH:MM:SS`, UTC) and now. */
const fromNow = (time: string | null) => (Date.parse(`${time!.replace(' ', 'T')}Z`) - Date.now()) / 1000

async function upload(data: Uint8Array, filename: string): Promise<FileRecord> {
  return fs.files.upload(data, { filename })
}

describe('client.links', () => {
  let file: FileRecord
  beforeAll(async () => {
    file = await upload(new TextEncoder().encode('links of a file\n'), 'linked.txt')
  })

  it('create, get, list, update (null clears), rotate, delete: every call', async () => {
    const expiresAt = new Date(Date.now() + 86_400_000)
    const created = await fs.links.create(file.file_id, {
      label: 'for the auditors',
      expires_at: expiresAt,
      max_downloads: 3,
      password: 'correct horse battery',
    })
    expect(created).toMatchObject({
      file_id: file.file_id,
      default: false,
      label: 'for the auditors',
      expires_at: expiresAt.toISOString().slice(0, 19).replace('T', ' '),
      max_downloads: 3,
      download_count: 0,
      password_protected: true,
      status: 'active',
    })
    expect(created.url).toMatch(new RegExp(`^${server().server_url}/download/[\\w-]{20,}$`))
    expect(created.url).not.toBe(file.public_link)
    expect(created.downloads_left).toBe(3)
    expect(created.expiry?.getTime()).toBe(Math.floor(expiresAt.getTime() / 1000) * 1000)
    expect(Math.abs(created.created.getTime() - Date.now())).toBeLessThan(60_000)
    expect(Object.keys(created).sort()).toEqual(
      [
        'created_at',
        'default',
        'download_count',
        'expires_at',
        'file_id',
        'label',
        'link_id',
        'max_downloads',
        'password_protected',
        'status',
        'url',
      ].sort(),
    )

    const plain = await fs.links.create(file.file_id)
    expect(plain).toMatchObject({ label: null, expires_at: null, max_downloads: null, password_protected: false, status: 'active' })
    const inAnHour = await fs.links.create(file.file_id, { expires_in: 3600 })
    expect(fromNow(inAnHour.expires_at)).toBeGreaterThan(3500)
    expect(fromNow(inAnHour.expires_at)).toBeLessThanOrEqual(3601)

    expect({ ...(await fs.links.get(created.link_id)) }).toEqual({ ...created })

    // The default link first (the file's public_link), then the newest first.
    const listed = await fs.links.list(file.file_id)
    expect(listed.map((l) => l.link_id)).toEqual([listed[0]!.link_id, inAnHour.link_id, plain.link_id, created.link_id])
    expect(listed[0]).toMatchObject({ default: true, url: file.public_link, max_downloads: null })

    const changed = await fs.links.update(created.link_id, { label: 'renamed', max_downloads: 5 })
    expect(changed).toMatchObject({ label: 'renamed', max_downloads: 5, password_protected: true, expires_at: created.expires_at })
    const cleared = await fs.links.update(created.link_id, { label: null, max_downloads: null, password: null, expires_at: null })
    expect(cleared).toMatchObject({ label: null, max_downloads: null, password_protected: false, expires_at: null, downloads_left: null })
    // Nothing given: nothing changes.
    expect({ ...(await fs.links.update(created.link_id, {})) }).toEqual({ ...cleared })

    const rotated = await fs.links.rotate(plain.link_id)
    expect(rotated).toMatchObject({ link_id: plain.link_id, status: 'active' })
    expect(rotated.url).not.toBe(plain.url)

    await fs.links.delete(plain.link_id)
    expect(await fs.links.get(plain.link_id)).toMatchObject({ status: 'revoked' })
    expect((await fs.links.list(file.file_id)).find((l) => l.link_id === plain.link_id)?.status).toBe('revoked')
    await expect(fs.download(rotated, tmp.file('revoked.txt'))).rejects.toBeInstanceOf(NotFoundError)
  })

  it('every field rule is a 400 invalid_parameter naming the field; unknown fields too', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ max_downloads: 0 }, 'max_downloads'],
      [{ max_downloads: 1_000_001 }, 'max_downloads'],
      [{ expires_in: 0 }, 'expires_in'],
      [{ expires_in: 315_360_001 }, 'expires_in'],
      [{ expires_at: '2001-01-01 00:00:00' }, 'expires_at'],
      [{ expires_at: 'tomorrow' }, 'expires_at'],
      [{ password: 'short' }, 'password'],
      [{ label: 'two\nlines' }, 'label'],
      [{ label: 'x'.repeat(101) }, 'label'],
      [{ expires_in: 60, expires_at: '2099-01-01 00:00:00' }, 'expires_'],
      [{ colour: 'blue' }, 'colour'],
    ]
    for (const [options, field] of cases) {
      const error = await fs.links.create(file.file_id, options as never).catch((e: unknown) => e)
      expect(error, JSON.stringify(options)).toBeInstanceOf(BadRequestError)
      expect(error).toMatchObject({ status: 400, code: 'invalid_parameter' })
      expect((error as Error).message).toContain(field)
    }
    const link = await fs.links.create(file.file_id, { max_downloads: 2 })
    await expect(fs.links.update(link.link_id, { expires_in: null as never })).rejects.toMatchObject({
      status: 400,
      code: 'invalid_parameter',
    })
    await expect(fs.files.update(file.file_id, { expires_in: -5 })).rejects.toMatchObject({ status: 400, code: 'invalid_parameter' })
  })

  it("the default link cannot be deleted (409 default_link_required); rotating it changes the file's public_link", async () => {
    const [defaultLink] = await fs.links.list(file.file_id)
    const error = await fs.links.delete(defaultLink!.link_id).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(BadRequestError)
    expect(error).toMatchObject({ status: 409, code: 'default_link_required' })
    const rotated = await fs.links.rotate(defaultLink!.link_id)
    expect((await fs.files.get(file.file_id)).public_link).toBe(rotated.url)
    await expect(fs.download(file.public_link, tmp.file('old-default.txt'))).rejects.toBeInstanceOf(NotFoundError)
    file = await fs.files.get(file.file_id)
  })

  it('unknown links and files are 404', async () => {
    await expect(fs.links.get(987_654_321)).rejects.toBeInstanceOf(NotFoundError)
    await expect(fs.links.list(987_654_321)).rejects.toBeInstanceOf(NotFoundError)
    await expect(fs.links.create(987_654_321)).rejects.toBeInstanceOf(NotFoundError)
  })

  it('a file has at most 100 links that are not revoked: the next is a LimitExceededError', async () => {
    const crowded = await upload(new Uint8Array([1]), 'crowded.bin')
    for (let i = 1; i < 100; i++) await fs.links.create(crowded.file_id, { label: `#${i}` })
    const error = await fs.links.create(crowded.file_id).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(LimitExceededError)
    expect(error).toMatchObject({ status: 403, code: 'link_limit_exceeded' })
    const last = (await fs.links.list(crowded.file_id))[1]!
    await fs.links.delete(last.link_id)
    await expect(fs.links.create(crowded.file_id)).resolves.toMatchObject({ status: 'active' })
    await fs.files.delete(crowded.file_id)
  })
})

describe("another account's files and links", () => {
  let own: { info: LauncherInfo; stop: () => Promise<unknown> }
  beforeAll(async () => {
    const launched = await startLauncher()
    own = { info: launched.info, stop: () => stopLauncher(launched.child) }
  }, 60_000)
  afterAll(async () => {
    await own?.stop()
  })

  it('are 404 to every links call, as unknown ones', async () => {
    const owner = new Fileshare({ baseUrl: own.info.base_url, apiKey: own.info.keys.pro })
    const other = new Fileshare({ baseUrl: own.info.base_url, apiKey: own.info.keys.limited, maxRetries: 0 })
    const file = await owner.files.upload(new Uint8Array([1, 2, 3]), { filename: 'mine.bin' })
    const link = await owner.links.create(file.file_id, { max_downloads: 1 })
    const calls = [
      () => other.links.list(file.file_id),
      () => other.links.create(file.file_id),
      () => other.links.get(link.link_id),
      () => other.links.update(link.link_id, { max_downloads: 9 }),
      () => other.links.rotate(link.link_id),
      () => other.links.delete(link.link_id),
      () => other.files.update(file.file_id, { expires_in: 60 }),
    ]
    for (const call of calls) await expect(call()).rejects.toMatchObject({ name: 'NotFoundError', status: 404, code: 'not_found' })
    // Nothing changed.
    expect({ ...(await owner.links.get(link.link_id)) }).toEqual({ ...link })
  })
})

describe('download through a link', () => {
  const data = randomBytes(2 * 1024 * 1024 + 99, 51)
  let file: FileRecord
  let proxy: CuttingProxy
  beforeAll(async () => {
    file = await upload(data, 'limited.bin')
    proxy = await startCuttingProxy(server().server_url)
  })
  afterAll(async () => {
    await proxy.close()
  })

  it('a limited link counts one download per download(), and dies when used up', async () => {
    const link = await fs.links.create(file.file_id, { max_downloads: 2 })
    const grants: string[] = []
    const first = await fs.download(link, tmp.file('one.bin'), { onGrant: (url) => grants.push(url) })
    expect(first.sha256).toBe(sha256Hex(data))
    expect(grants).toHaveLength(1)
    expect(grants[0]!.startsWith(`${link.url}/`)).toBe(true)
    expect(await fs.links.get(link.link_id)).toMatchObject({ download_count: 1, status: 'active', downloads_left: 1 })
    await fs.download(link.url, tmp.file('two.bin'))
    expect(await fs.links.get(link.link_id)).toMatchObject({ download_count: 2, status: 'exhausted', downloads_left: 0 })
    await expect(fs.download(link, tmp.file('three.bin'))).rejects.toBeInstanceOf(NotFoundError)
    // The file's count is the sum over its links.
    expect((await fs.files.get(file.file_id)).download_count).toBeGreaterThanOrEqual(2)
  })

  it('a connection dropped mid-file is resumed through the same grant: one download counted', async () => {
    const link = await fs.links.create(file.file_id, { max_downloads: 1 })
    // Every request goes through the proxy, the grant URL (absolute, on the server) too.
    const viaProxy = new Fileshare({
      baseUrl: server().base_url,
      apiKey: server().keys.pro,
      sleep: async () => {},
      fetch: (input, init) => fetch(String(input).replace(server().server_url, proxy.url), init),
    })
    const cuts = proxy.cuts
    proxy.cutDownstreamAfter(1_000_000)
    const result = await viaProxy.download(link, tmp.file('cut.bin'))
    expect(proxy.cuts).toBe(cuts + 1)
    expect(result).toMatchObject({ size: data.length, sha256: sha256Hex(data) })
    expect(sha256Hex(readFileSync(tmp.file('cut.bin')))).toBe(sha256Hex(data))
    expect(await fs.links.get(link.link_id)).toMatchObject({ download_count: 1, status: 'exhausted' })
  })

  it('an interrupted download is resumed later from its grant URL without counting again', async () => {
    const link = await fs.links.create(file.file_id, { max_downloads: 1 })
    const controller = new AbortController()
    let grant: string | undefined
    const stopped = await fs
      .download(link, tmp.file('later.bin'), {
        onGrant: (url) => void (grant = url),
        onProgress: (done) => done > 600_000 && controller.abort(),
        signal: controller.signal,
      })
      .catch((e: unknown) => e)
    expect(stopped).toMatchObject({ name: 'AbortError' })
    const kept = readFileSync(tmp.file('later.bin')).length
    expect(kept).toBeGreaterThan(0)
    expect(kept).toBeLessThan(data.length)
    // The link is used up; its grant still serves the rest (Range), and counts nothing.
    await expect(fs.download(link, tmp.file('again.bin'))).rejects.toBeInstanceOf(NotFoundError)
    const resumed = await fs.download(grant!, tmp.file('later.bin'))
    expect(resumed).toMatchObject({ size: data.length, sha256: sha256Hex(data), resumedFrom: kept })
    expect(await fs.links.get(link.link_id)).toMatchObject({ download_count: 1 })
  })

  it('a password-protected link: the right password downloads, a wrong or missing one is invalid_password', async () => {
    const link = await fs.links.create(file.file_id, { password: 'correct horse battery' })
    for (const password of ['wrong horse battery', undefined]) {
      const error = await fs.download(link, tmp.file('pw.bin'), { password }).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(AuthenticationError)
      expect(error).toMatchObject({ status: 401, code: 'invalid_password' })
    }
    const result = await fs.download(link.url, tmp.file('pw.bin'), { password: 'correct horse battery', resume: false })
    expect(result.sha256).toBe(sha256Hex(data))
    expect(await fs.links.get(link.link_id)).toMatchObject({ download_count: 1 })
  })

  it('ten wrong passwords from one address on one link: then a RateLimitError, thrown at once', async () => {
    const link = await fs.links.create(file.file_id, { password: 'correct horse battery' })
    for (let i = 0; i < 10; i++) {
      await expect(fs.download(link, tmp.file('guess.bin'), { password: `guess number ${i}` })).rejects.toMatchObject({
        code: 'invalid_password',
      })
    }
    const started = Date.now()
    const error = await fs.download(link, tmp.file('guess.bin'), { password: 'correct horse battery' }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(RateLimitError)
    expect(error).toMatchObject({ status: 429, code: 'rate_limited' })
    expect((error as RateLimitError).retryAfter).toBeGreaterThan(60)
    expect(Date.now() - started).toBeLessThan(5000)
    expect(await fs.links.get(link.link_id)).toMatchObject({ download_count: 0 })
  })

  it('a file record downloads through its default link; a complete partial file counts nothing', async () => {
    writeFileSync(tmp.file('whole.bin'), data)
    const before = (await fs.files.get(file.file_id)).download_count
    const result = await fs.download(file, tmp.file('whole.bin'))
    expect(result.resumedFrom).toBe(data.length)
    expect((await fs.files.get(file.file_id)).download_count).toBe(before)
  })
})

describe('file expiry', () => {
  it('files.update sets, moves and removes the expiry, and renames', async () => {
    const file = await upload(new TextEncoder().encode('expiring'), 'expiring.txt')
    expect(file.expires_at).toBeNull()
    expect(file.expiry).toBeNull()
    const inADay = await fs.files.update(file.file_id, { expires_in: 86_400 })
    expect(fromNow(inADay.expires_at)).toBeGreaterThan(86_300)
    expect(inADay.expiry).toBeInstanceOf(Date)
    const at = new Date(Date.now() + 7 * 86_400_000)
    const moved = await fs.files.update(file.file_id, { expires_at: at, filename: 'renamed.txt' })
    expect(moved).toMatchObject({ expires_at: at.toISOString().slice(0, 19).replace('T', ' '), filename: 'renamed.txt' })
    const kept = await fs.files.update(file.file_id, { expires_at: null })
    expect(kept.expires_at).toBeNull()
    expect((await fs.files.get(file.file_id)).expires_at).toBeNull()
  })

  it('the upload option expires_in, multipart and resumable, is the file expires_at', async () => {
    const multipart = await fs.files.upload(new TextEncoder().encode('a week'), { filename: 'week.txt', expires_in: 604_800 })
    const resumable = await fs.files.upload(new TextEncoder().encode('an hour'), {
      filename: 'hour.txt',
      expires_in: 3600,
      resumable: true,
    })
    expect(fromNow(multipart.expires_at)).toBeGreaterThan(604_700)
    expect(fromNow(resumable.expires_at)).toBeGreaterThan(3500)
    expect(fromNow(resumable.expires_at)).toBeLessThanOrEqual(3601)
    expect((await fs.files.get(resumable.file_id)).expires_at).toBe(resumable.expires_at)
    await expect(fs.files.upload(new Uint8Array([1]), { filename: 'x.bin', expires_in: 0 })).rejects.toMatchObject({
      status: 400,
      code: 'invalid_parameter',
    })
  })

  it('an expired file is gone: its record, its links and their downloads are 404', async () => {
    const file = await fs.files.upload(new TextEncoder().encode('short-lived'), { filename: 'brief.txt', expires_in: 1 })
    const link = await fs.links.create(file.file_id)
    // The API's times are whole seconds: wait until the second after expires_at has begun.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, file.expiry!.getTime() + 1100 - Date.now())))
    await expect(fs.files.get(file.file_id)).rejects.toBeInstanceOf(NotFoundError)
    await expect(fs.links.get(link.link_id)).rejects.toBeInstanceOf(NotFoundError)
    await expect(fs.download(link, tmp.file('brief.txt'))).rejects.toBeInstanceOf(NotFoundError)
    await expect(fs.download(file.public_link, tmp.file('brief.txt'))).rejects.toBeInstanceOf(NotFoundError)
  })
})
