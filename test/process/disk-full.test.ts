import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import fs from 'node:fs/promises'
import http from 'node:http'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ERROR_REGISTRY } from '../../src/errors.js'
import { runCommand } from '../helpers/cli.js'
import { startServerProcess, stopServerProcess, type ServerProcess } from '../helpers/server-process.js'
import { makeTempDir } from '../helpers/test-app.js'
import { sha256Hex as sha256 } from '../../src/lib/sha256-hex.js'

/**
 * A full disk under the data folder: an 8 MiB tmpfs, which needs the right to mount (root in a
 * container usually has it). Without it the tests are skipped, saying so.
 */
const MIB = 1024 * 1024
const mountPoint = await makeTempDir('fileshare-disk-full-')
let mountError: string | undefined
try {
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', mountPoint], { stdio: 'pipe' })
} catch (error) {
  mountError = String((error as { stderr?: Buffer }).stderr ?? error).trim()
  console.warn(`SKIPPING test/process/disk-full.test.ts: cannot mount an 8 MiB tmpfs (${mountError || 'mount failed'}).`)
}

afterAll(async () => {
  if (!mountError) execFileSync('umount', [mountPoint])
  await fs.rm(mountPoint, { recursive: true, force: true })
})

interface ErrorBody {
  success: false
  error: { code: string; message: string; request_id?: string }
}

describe.skipIf(mountError !== undefined)('a full disk under the data folder', () => {
  const dataDir = path.join(mountPoint, 'data')
  let server: ServerProcess
  let auth: Record<string, string>

  beforeAll(async () => {
    expect(await runCommand(['migrate'], { FILESHARE_DATA_DIR: dataDir })).toMatchObject({ code: 0 })
    const created = await runCommand(['account', 'create', '--email', 'full@example.test', '--plan', 'pro', '--json'], {
      FILESHARE_DATA_DIR: dataDir,
    })
    expect(created).toMatchObject({ code: 0, stderr: '' })
    auth = { authorization: `Bearer ${(JSON.parse(created.stdout) as { api_key: string }).api_key}` }
    server = await startServerProcess({ dataDir, env: { FILESHARE_LOG_LEVEL: 'warn', FILESHARE_PUBLIC_URL: 'http://files.example.test' } })
  })
  afterAll(async () => {
    if (server) await stopServerProcess(server)
  })

  type UploadResult = { status: number; body: ErrorBody & { public_link: string; sha256: string } }
  /**
   * Sends one multipart upload with node:http. The server may answer (and close) before the whole
   * body is sent; the answer counts, and the client's write error (EPIPE, ECONNRESET) does not.
   */
  const upload = (content: Uint8Array) =>
    new Promise<UploadResult>((resolve, reject) => {
      const boundary = 'disk-full-test-boundary'
      const body = Buffer.concat([
        Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
        ),
        content,
        Buffer.from(`\r\n--${boundary}--\r\n`),
      ])
      const request = http.request(`${server.api}/files/upload`, {
        method: 'POST',
        headers: { ...auth, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': String(body.length) },
      })
      let writeError: unknown
      let responded = false
      request.on('error', (error) => (writeError = error))
      request.on('response', (response) => {
        responded = true
        const chunks: Buffer[] = []
        response.on('data', (chunk: Buffer) => chunks.push(chunk))
        response.on('error', reject)
        response.on('end', () =>
          resolve({ status: response.statusCode!, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as UploadResult['body'] }),
        )
      })
      request.on('close', () => {
        if (!responded) reject(writeError ?? new Error('the server closed the connection without an answer'))
      })
      request.end(body)
    })
  const downloadSha = async (publicLink: string) => {
    const response = await fetch(`${server.url}/download/${publicLink.split('/').at(-1)}`)
    expect(response.status).toBe(200)
    return sha256(Buffer.from(await response.arrayBuffer()))
  }
  const stats = async () =>
    (
      (await (await fetch(`${server.api}/stats`, { headers: auth })).json()) as {
        stats: { total_files: number; total_size: number; uploads_today: number }
      }
    ).stats
  const blobsOnDisk = async () => ({
    objects: (await fs.readdir(path.join(dataDir, 'blobs', 'objects'), { recursive: true, withFileTypes: true })).filter((entry) =>
      entry.isFile(),
    ).length,
    tmp: await fs.readdir(path.join(dataDir, 'blobs', 'tmp')),
  })
  /** A full disk gives 507 insufficient_storage with the API's JSON error body (5xx: with request_id). */
  const expectCleanStorageError = ({ status, body }: { status: number; body: ErrorBody }) => {
    expect(status).toBe(507)
    expect(body).toEqual({
      success: false,
      error: { code: 'insufficient_storage', message: ERROR_REGISTRY.insufficient_storage.message, request_id: expect.any(String) },
    })
  }

  it('an upload larger than the free space fails with a clean error and leaves nothing behind; the next upload works', async () => {
    const small = randomBytes(100_000)
    const first = await upload(small)
    expect(first.status).toBe(201)
    const before = await stats()

    const failed = await upload(randomBytes(12 * MIB))
    expectCleanStorageError(failed)
    // No row, no counted size, the daily slot given back, no blob, no temp file.
    expect(await stats()).toEqual(before)
    expect(await blobsOnDisk()).toEqual({ objects: 1, tmp: [] })

    // The failed write's space came back with its temp file: a file that fits is stored whole.
    const fits = randomBytes(3 * MIB)
    const stored = await upload(fits)
    expect(stored.status).toBe(201)
    expect(await downloadSha(stored.body.public_link)).toBe(sha256(fits))
    expect(await downloadSha(first.body.public_link)).toBe(sha256(small))
  })

  it('when the disk is filled by something else, uploads fail cleanly, and work again once space is freed', async () => {
    const before = await stats()
    const disk = await blobsOnDisk()
    // Fill what is left of the file system.
    const ballast = path.join(mountPoint, 'ballast')
    const handle = await fs.open(ballast, 'w')
    try {
      for (;;) await handle.write(Buffer.alloc(256 * 1024))
    } catch (error) {
      expect((error as NodeJS.ErrnoException).code).toBe('ENOSPC')
    } finally {
      await handle.close()
    }

    for (const size of [1, 200_000]) expectCleanStorageError(await upload(randomBytes(size)))
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200)

    await fs.rm(ballast)
    expect(await stats()).toEqual(before)
    expect(await blobsOnDisk()).toEqual(disk)
    const content = randomBytes(500_000)
    const stored = await upload(content)
    expect(stored.status).toBe(201)
    expect(await downloadSha(stored.body.public_link)).toBe(sha256(content))
    expect(server.child.exitCode).toBeNull()
  })
})
