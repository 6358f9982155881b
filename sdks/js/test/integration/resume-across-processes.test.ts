// Issue 30, point 3: a resumable upload outlives the process that started it. One node process
// uploads from a path, tells the URL through onUploadCreated, and is killed (SIGKILL) midway; a
// second process continues the same upload from that URL (uploadUrl) and finishes it.
import { spawn } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { afterAll, describe, expect, it } from 'vitest'
import { NotFoundError } from '../../src/index.js'
import { client, randomBytes, server, sha256Hex, tempDir } from '../helpers/env.js'

const tmp = tempDir()
afterAll(() => tmp.remove())

const SDK = new URL('../../dist/index.js', import.meta.url).href
const MiB = 1024 * 1024

/**
 * The uploading process: prints `created <url>` from onUploadCreated and `at <bytes>` as the server
 * confirms chunks; with STALL_AT it freezes (Atomics.wait, so no event runs) once that many bytes
 * are in, and waits to be killed. Prints `done <json>` when the upload ends.
 */
const UPLOADER = `
import { Fileshare } from ${JSON.stringify(SDK)}
const client = new Fileshare({ baseUrl: process.env.BASE_URL, apiKey: process.env.API_KEY, maxRetries: 0 })
const stallAt = Number(process.env.STALL_AT || Infinity)
let first
const file = await client.files.upload(process.env.SOURCE, {
  resumable: true,
  chunkSize: ${MiB},
  uploadUrl: process.env.UPLOAD_URL || undefined,
  onUploadCreated: (url) => console.log('created ' + url),
  onProgress: (sent) => {
    first ??= sent
    if (sent % ${MiB} === 0) console.log('at ' + sent)
    if (sent >= stallAt) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 60_000)
  },
})
console.log('done ' + JSON.stringify({ file_id: file.file_id, size: file.size, sha256: file.sha256, first }))
`

function runUploader(env: Record<string, string>, until?: (line: string) => boolean) {
  const child = spawn(process.execPath, ['--input-type=module', '-e', UPLOADER], {
    env: { ...process.env, BASE_URL: server().base_url, API_KEY: server().keys.pro, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const lines: string[] = []
  let stderr = ''
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  return new Promise<{ lines: string[]; code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) => {
    let buffered = ''
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString()
      let newline
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, newline)
        buffered = buffered.slice(newline + 1)
        lines.push(line)
        if (until?.(line)) child.kill('SIGKILL')
      }
    })
    child.on('close', (code, signal) => resolve({ lines, code, signal, stderr }))
  })
}

describe('a resumable upload continued by another process', () => {
  it('is finished by a second process after the first was killed midway', async () => {
    const data = randomBytes(6 * MiB + 123, 30)
    const source = tmp.file('crash.bin')
    writeFileSync(source, data)

    const first = await runUploader({ SOURCE: source, STALL_AT: String(3 * MiB) }, (line) => line === `at ${3 * MiB}`)
    expect(first.signal, first.stderr).toBe('SIGKILL')
    const url = first.lines.find((l) => l.startsWith('created '))?.slice('created '.length)
    expect(url).toMatch(/\/api\/v1\/uploads\//)
    expect(first.lines.some((l) => l.startsWith('done '))).toBe(false)

    // The upload is still there, part done: nothing deleted it.
    const head = await fetch(url!, { method: 'HEAD', headers: { authorization: `Bearer ${server().keys.pro}`, 'tus-resumable': '1.0.0' } })
    expect(head.status).toBe(200)
    const held = Number(head.headers.get('upload-offset'))
    expect(held).toBeGreaterThanOrEqual(2 * MiB) // onProgress counts bytes sent; the server confirmed the chunks before
    expect(held).toBeLessThan(data.length)

    const second = await runUploader({ SOURCE: source, UPLOAD_URL: url! })
    expect(second.code, second.stderr).toBe(0)
    expect(second.lines[0]).toBe(`created ${url}`) // told again: the URL of the upload it continues
    const done = JSON.parse(second.lines.find((l) => l.startsWith('done '))!.slice('done '.length)) as {
      file_id: number
      size: number
      sha256: string
      first: number
    }
    expect(done.size).toBe(data.length)
    expect(done.sha256).toBe(sha256Hex(data))
    expect(done.first).toBe(held) // the bytes the server held were not sent again
    const stored = await client('pro').files.get(done.file_id)
    expect(stored.sha256).toBe(sha256Hex(data))
  })

  it('keepOnFailure: false deletes a failed upload; an upload that is gone is a NotFoundError', async () => {
    const fs = client('pro')
    const controller = new AbortController()
    let url: string | undefined
    const data = randomBytes(3 * MiB, 31)
    const failed = await fs.files
      .upload(data, {
        resumable: true,
        chunkSize: MiB,
        keepOnFailure: false,
        onUploadCreated: (created) => void (url = created),
        onProgress: (sent) => sent >= MiB && controller.abort(),
        signal: controller.signal,
      })
      .catch((e: unknown) => e)
    expect(failed).toMatchObject({ name: 'AbortError' })
    expect(url).toBeDefined()
    const again = await fs.files.upload(data, { uploadUrl: url, chunkSize: MiB }).catch((e: unknown) => e)
    expect(again).toBeInstanceOf(NotFoundError)
  })

  it('by default an aborted upload with onUploadCreated is kept, and uploadUrl finishes it in this process', async () => {
    const fs = client('pro')
    const controller = new AbortController()
    let url: string | undefined
    const data = randomBytes(3 * MiB + 5, 32)
    await fs.files
      .upload(data, {
        resumable: true,
        chunkSize: MiB,
        onUploadCreated: (created) => void (url = created),
        onProgress: (sent) => sent >= MiB && controller.abort(),
        signal: controller.signal,
      })
      .catch(() => {})
    const file = await fs.files.upload(data, { uploadUrl: url, chunkSize: MiB })
    expect(file.sha256).toBe(sha256Hex(data))
    // A source of another length is refused before anything changes.
    const other = await fs.files.upload(data.subarray(1), { uploadUrl: url }).catch((e: unknown) => e)
    expect(other).toMatchObject({ name: expect.stringMatching(/ConfigurationError|NotFoundError/) })
  })
})
