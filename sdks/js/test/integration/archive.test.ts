// files.downloadArchive() against the real server: the ZIP's names and bytes (read back with
// Python's zipfile, an unzipper independent of the server's), duplicates, not found, scope, a
// stream destination, and a connection cut mid-archive through a proxy.
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { Writable } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ConfigurationError, NotFoundError, PermissionDeniedError, type FileRecord } from '../../src/index.js'
import { client, newAccount, randomBytes, server, sha256Hex, tempDir } from '../helpers/env.js'
import { startCuttingProxy, type CuttingProxy } from '../helpers/proxy.js'

const tmp = tempDir()
afterAll(() => tmp.remove())

const fs = client('pro')

interface Entry {
  name: string
  size: number
  sha256: string
  /** 0: stored */
  method: number
}

/** The entries of a ZIP as Python's zipfile reads them (it checks every CRC-32 on the way). */
function unzip(path: string): Entry[] {
  const script = [
    'import hashlib, json, sys, zipfile',
    'z = zipfile.ZipFile(sys.argv[1])',
    'print(json.dumps([{"name": i.filename, "size": i.file_size, "method": i.compress_type,',
    '  "sha256": hashlib.sha256(z.read(i)).hexdigest()} for i in z.infolist()]))',
  ].join('\n')
  return JSON.parse(execFileSync('/usr/bin/python3', ['-c', script, path], { encoding: 'utf8' })) as Entry[]
}

describe('files.downloadArchive', () => {
  const data = randomBytes(200_000, 7)
  let files: FileRecord[]
  beforeAll(async () => {
    files = [
      await fs.files.upload(data, { filename: 'data.bin' }),
      await fs.files.upload(new TextEncoder().encode('one'), { filename: 'same.txt' }),
      await fs.files.upload(new TextEncoder().encode('two'), { filename: 'SAME.txt' }),
      await fs.files.upload(new Uint8Array(0), { filename: 'Ünïcödé – empty.txt' }),
    ]
  })

  it('writes the files as one ZIP to a path: names, order and bytes exact, stored', async () => {
    const progress: Array<[number, number | undefined]> = []
    const target = tmp.file('all.zip')
    const result = await fs.files.downloadArchive(
      files.map((file) => file.file_id),
      target,
      { onProgress: (done, total) => progress.push([done, total]) },
    )
    expect(result.filename).toMatch(/^files-\d{8}-\d{6}\.zip$/)
    expect(result.size).toBe(readFileSync(target).length)
    expect(progress.at(-1)).toEqual([result.size, result.size])
    expect(unzip(target)).toEqual([
      { name: 'data.bin', size: data.length, sha256: sha256Hex(data), method: 0 },
      { name: 'same.txt', size: 3, sha256: sha256Hex(new TextEncoder().encode('one')), method: 0 },
      { name: 'SAME (2).txt', size: 3, sha256: sha256Hex(new TextEncoder().encode('two')), method: 0 },
      { name: 'Ünïcödé – empty.txt', size: 0, sha256: sha256Hex(new Uint8Array(0)), method: 0 },
    ])
  })

  it('writes to a Node Writable, ids as strings too', async () => {
    const chunks: Buffer[] = []
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        chunks.push(chunk)
        done()
      },
    })
    const result = await fs.files.downloadArchive([String(files[1]!.file_id)], sink)
    expect(Buffer.concat(chunks).length).toBe(result.size)
    expect(Buffer.concat(chunks).subarray(0, 4)).toEqual(Buffer.from('PK\x03\x04', 'latin1'))
  })

  it("a missing or another account's id: NotFoundError before any byte, and no file left", async () => {
    const other = await newAccount('archive-other')
    const theirs = await other.client.files.upload(new TextEncoder().encode('theirs'), { filename: 'theirs.txt' })
    const target = tmp.file('refused.zip')
    const error = await fs.files.downloadArchive([files[0]!.file_id, theirs.file_id], target).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(NotFoundError)
    expect((error as NotFoundError).message).toContain(`${theirs.file_id}`)
    expect(existsSync(target)).toBe(false)
  })

  it('needs files:read and links:write: a key without either gets PermissionDeniedError insufficient_scope naming it', async () => {
    const error = await client('auditor')
      .files.downloadArchive([files[0]!.file_id], tmp.file('scope.zip'))
      .catch((e: unknown) => e)
    expect(error).toBeInstanceOf(PermissionDeniedError)
    expect((error as PermissionDeniedError).code).toBe('insufficient_scope')
    expect((error as PermissionDeniedError).requiredScope).toBe('files:read')
    // files:read (with links:read and stats:read) reads metadata only: no file's bytes for a read-only key.
    const readOnly = await client('read_only')
      .files.downloadArchive([files[1]!.file_id], tmp.file('read-only.zip'))
      .catch((e: unknown) => e)
    expect(readOnly).toBeInstanceOf(PermissionDeniedError)
    expect((readOnly as PermissionDeniedError).requiredScope).toBe('links:write')
    expect(existsSync(tmp.file('read-only.zip'))).toBe(false)
  })

  it('refuses no ids, too many and non-ids before any request', async () => {
    await expect(fs.files.downloadArchive([], tmp.file('x.zip'))).rejects.toBeInstanceOf(ConfigurationError)
    await expect(fs.files.downloadArchive([0], tmp.file('x.zip'))).rejects.toBeInstanceOf(ConfigurationError)
    await expect(
      fs.files.downloadArchive(
        Array.from({ length: 1001 }, (_, i) => i + 1),
        tmp.file('x.zip'),
      ),
    ).rejects.toBeInstanceOf(ConfigurationError)
  })

  describe('through a proxy that cuts the connection', () => {
    let proxy: CuttingProxy
    beforeAll(async () => {
      proxy = await startCuttingProxy(server().server_url)
    })
    afterAll(async () => {
      await proxy.close()
    })

    it('a cut mid-archive to a path: the archive is fetched again from its start, and is whole', async () => {
      const viaProxy = client('pro', { fetch: (input, init) => fetch(String(input).replace(server().server_url, proxy.url), init) })
      const cuts = proxy.cuts
      proxy.cutDownstreamAfter(100_000)
      const target = tmp.file('cut.zip')
      const result = await viaProxy.files.downloadArchive([files[0]!.file_id], target)
      expect(proxy.cuts).toBe(cuts + 1)
      expect(result.size).toBe(readFileSync(target).length)
      expect(unzip(target)).toEqual([{ name: 'data.bin', size: data.length, sha256: sha256Hex(data), method: 0 }])
    })

    it('a cut mid-archive with no retries left: APIConnectionError, and the partial file is removed', async () => {
      const viaProxy = client('pro', {
        maxRetries: 0,
        fetch: (input, init) => fetch(String(input).replace(server().server_url, proxy.url), init),
      })
      proxy.cutDownstreamAfter(100_000)
      const target = tmp.file('cut-for-good.zip')
      const error = await viaProxy.files.downloadArchive([files[0]!.file_id], target).catch((e: unknown) => e)
      expect((error as Error).constructor.name).toBe('APIConnectionError')
      expect(existsSync(target)).toBe(false)
    })
  })
})
