// Resumes: a partial download continued with Range + If-Range and checked against the ETag, a
// download cut mid-way, and a resumable upload whose connection drops in the middle of a chunk.
import { readFileSync, writeFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { APIConnectionError, Fileshare, IntegrityError, type FileRecord } from '../../src/index.js'
import { client, randomBytes, server, sha256Hex, tempDir } from '../helpers/env.js'
import { startCuttingProxy, type CuttingProxy } from '../helpers/proxy.js'

const tmp = tempDir()
let proxy: CuttingProxy
beforeAll(async () => {
  proxy = await startCuttingProxy(server().server_url)
})
afterAll(async () => {
  await proxy.close()
  tmp.remove()
})

describe('download resume', () => {
  const fs = client('pro')
  const data = randomBytes(3 * 1024 * 1024 + 17, 11)
  let file: FileRecord
  beforeAll(async () => {
    file = await fs.files.upload(data, { filename: 'resume.bin' })
  })

  it('continues a partial file with Range + If-Range (one download: the grant) and verifies the ETag', async () => {
    writeFileSync(tmp.file('partial.bin'), data.subarray(0, 1_000_000))
    const progress: number[] = []
    const result = await fs.download(file, tmp.file('partial.bin'), { onProgress: (n) => progress.push(n) })
    expect(result).toEqual({ size: data.length, sha256: sha256Hex(data), resumedFrom: 1_000_000 })
    expect(sha256Hex(readFileSync(tmp.file('partial.bin')))).toBe(sha256Hex(data))
    expect(progress[0]).toBe(1_000_000)
    // One download: the POST to the link; the grant's Range request counts nothing more.
    expect((await fs.files.get(file.file_id)).download_count).toBe(1)
  })

  it('resumes from a link alone (HEAD for the ETag), and restarts with resume: false', async () => {
    writeFileSync(tmp.file('link.bin'), data.subarray(0, 2_000_000))
    const resumed = await fs.download(file.public_link, tmp.file('link.bin'))
    expect(resumed.resumedFrom).toBe(2_000_000)
    writeFileSync(tmp.file('fresh.bin'), data.subarray(0, 2_000_000))
    const fresh = await fs.download(file, tmp.file('fresh.bin'), { resume: false })
    expect(fresh.resumedFrom).toBe(0)
    expect(sha256Hex(readFileSync(tmp.file('fresh.bin')))).toBe(sha256Hex(data))
  })

  it('a destination that cannot be written fails with its own error at once, not as a lost connection', async () => {
    const error = await fs.download(file, tmp.file('no-such-folder/file.bin')).catch((e: unknown) => e)
    expect(error).not.toBeInstanceOf(APIConnectionError)
    expect(error).toMatchObject({ code: 'ENOENT' })
  })

  it('IntegrityError when the partial file holds other bytes than the file', async () => {
    const wrong = Uint8Array.from(data.subarray(0, 500_000))
    wrong[10] = wrong[10]! ^ 0xff
    writeFileSync(tmp.file('wrong.bin'), wrong)
    const error = await fs.download(file, tmp.file('wrong.bin')).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(IntegrityError)
    expect(error).toMatchObject({ expected: sha256Hex(data) })
  })

  it('continues after the connection drops in the middle of the body', async () => {
    // Every request through the proxy: the link's POST, and the grant (an absolute URL on the server).
    const viaProxy = new Fileshare({
      baseUrl: server().base_url,
      apiKey: server().keys.pro,
      sleep: async () => {},
      fetch: (input, init) => fetch(String(input).replace(server().server_url, proxy.url), init),
    })
    proxy.cutDownstreamAfter(1_500_000)
    const cutsBefore = proxy.cuts
    const result = await viaProxy.download(file.public_link, tmp.file('cut.bin'))
    expect(proxy.cuts).toBe(cutsBefore + 1)
    expect(result.size).toBe(data.length)
    expect(sha256Hex(readFileSync(tmp.file('cut.bin')))).toBe(sha256Hex(data))
  })
})

describe('resumable upload resume', () => {
  it('resumes an upload whose connection drops mid-chunk, from the offset the server holds', async () => {
    const MiB = 1024 * 1024
    const data = randomBytes(40 * MiB, 12)
    writeFileSync(tmp.file('tus-cut.bin'), data)
    const fs = new Fileshare({ baseUrl: `${proxy.url}/api/v1`, apiKey: server().keys.pro, sleep: async () => {} })
    const startBytes = proxy.upstreamBytes
    proxy.cutUpstreamAfter(20 * MiB) // inside the second 16 MiB chunk
    const progress: number[] = []
    const file = await fs.files.upload(tmp.file('tus-cut.bin'), { resumable: true, onProgress: (n) => progress.push(n) })
    expect(proxy.cuts).toBeGreaterThanOrEqual(1)
    expect(file).toMatchObject({ size: data.length, sha256: sha256Hex(data), filename: 'tus-cut.bin' })
    // Resumed, not restarted: the first chunk went up once.
    const sent = proxy.upstreamBytes - startBytes
    expect(sent).toBeGreaterThan(40 * MiB + 4 * MiB) // the cut part of chunk 2 went twice
    expect(sent).toBeLessThan(40 * MiB + 16 * MiB)
    expect(progress.at(-1)).toBe(data.length)
  })
})
