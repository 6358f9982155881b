import { randomBytes } from 'node:crypto'
import fs from 'node:fs/promises'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import SQLite from 'better-sqlite3'
import { afterAll, describe, expect, it } from 'vitest'
import { runCommand } from '../helpers/cli.js'
import { SERVER, startServerProcess, stopServerProcess, type ServerProcess } from '../helpers/server-process.js'
import { makeTempDir } from '../helpers/test-app.js'
import { sha256Hex as sha256 } from '../../src/lib/sha256-hex.js'

/**
 * Crash safety with real processes: uploads and deletes run against a server that is killed with
 * SIGKILL at a random moment, then restarted on the same data, several times over. Whatever the
 * moment of the kill, every upload the server acknowledged (201) must download intact, every
 * delete it acknowledged (200) must stay deleted, and after `fileshare gc --grace-seconds 0` the
 * store must hold exactly the blobs of the database's rows.
 */

const ROUNDS = 3
/** Concurrent clients, each uploading and deleting in a loop until the kill. */
const CLIENTS = 6
/** The kill comes this long (random, in ms) after the load starts. */
const KILL_AFTER_MS = [300, 900] as const

const between = (low: number, high: number) => low + Math.floor(Math.random() * (high - low + 1))

interface AcknowledgedUpload {
  fileId: number
  token: string
  size: number
  sha256: string
}

const tempDirs: string[] = []
const servers: ServerProcess[] = []
afterAll(async () => {
  await Promise.all(servers.map((server) => stopServerProcess(server)))
  await Promise.all(tempDirs.map((dir) => fs.rm(dir, { recursive: true, force: true })))
})

describe('kill -9 during uploads and deletes, then restart', () => {
  it('loses no acknowledged upload or delete, and gc leaves the store exactly matching the database', { timeout: 60_000 }, async () => {
    await fs.access(SERVER).catch(() => {
      throw new Error(`${SERVER} is missing: run \`npm run build\` first (npm test does).`)
    })
    const dataDir = await makeTempDir('fileshare-crash-')
    tempDirs.push(dataDir)
    const env = {
      FILESHARE_LOG_LEVEL: 'warn',
      FILESHARE_PUBLIC_URL: 'http://files.example.test',
      // The server's own sweeps stay off: what the crashes leave is for the gc command below.
      FILESHARE_GC_INTERVAL_MS: '0',
      FILESHARE_DOWNLOADS_PER_MINUTE: '100000',
      // No rate or daily limit gets in the way.
      FILESHARE_PLANS: JSON.stringify({ pro: { requests_per_minute: 1e9, requests_per_day: 1e9, daily_uploads: 1e9 } }),
    }
    // The commands run in this process (test/helpers/cli.ts), between the server's lives: the
    // processes whose crashes matter here are the servers'.
    const cli = async (...args: string[]) => {
      const result = await runCommand(args, { FILESHARE_DATA_DIR: dataDir, ...env })
      expect(result, `fileshare ${args.join(' ')}`).toMatchObject({ code: 0, stderr: '' })
      return result.stdout
    }
    await cli('migrate') // creates the database, which the other commands only open
    const { account_id: accountId, api_key: apiKey } = JSON.parse(
      await cli('account', 'create', '--email', 'crash@example.test', '--plan', 'pro', '--json'),
    ) as { account_id: number; api_key: string }
    const auth = { authorization: `Bearer ${apiKey}` }

    const uploads = new Map<number, AcknowledgedUpload>()
    /** Acknowledged uploads that no delete was sent for: the pool deletes draw from. */
    const live: number[] = []
    const deleted = new Set<number>()
    /** Deletes sent whose answer was lost in the kill: they may or may not have happened. */
    const maybeDeleted = new Set<number>()
    /** Any HTTP answer other than the expected one: a bug, whatever the crash. */
    const unexpected: string[] = []
    let killedMidRequest = 0

    async function upload(server: ServerProcess): Promise<void> {
      // Mostly small files, some of a few MiB, so that writes are under way when the kill comes.
      const content = randomBytes(Math.random() < 0.25 ? between(1, 3) * 1024 * 1024 : between(0, 200_000))
      const form = new FormData()
      form.append('file', new Blob([content]), 'crash.bin')
      let status: number
      let body: { file_id: number; public_link: string; size: number; sha256: string }
      try {
        const response = await fetch(`${server.api}/files/upload`, { method: 'POST', headers: auth, body: form })
        status = response.status
        body = (await response.json()) as typeof body
      } catch {
        killedMidRequest++ // no answer: it may or may not have been stored
        return
      }
      if (status !== 201) {
        unexpected.push(`upload: ${status} ${JSON.stringify(body)}`)
        return
      }
      expect(body).toMatchObject({ size: content.length, sha256: sha256(content) })
      uploads.set(body.file_id, {
        fileId: body.file_id,
        token: body.public_link.split('/').at(-1)!,
        size: content.length,
        sha256: sha256(content),
      })
      live.push(body.file_id)
    }

    async function remove(server: ServerProcess): Promise<void> {
      const fileId = live.splice(between(0, live.length - 1), 1)[0]!
      try {
        const response = await fetch(`${server.api}/files/${fileId}`, { method: 'DELETE', headers: auth })
        const body = await response.text()
        if (response.status === 200) deleted.add(fileId)
        else unexpected.push(`delete ${fileId}: ${response.status} ${body}`)
      } catch {
        killedMidRequest++
        maybeDeleted.add(fileId)
      }
    }

    for (let round = 1; round <= ROUNDS; round++) {
      const server = await startServerProcess({ dataDir, env })
      servers.push(server)
      let killed = false
      const clients = Array.from({ length: CLIENTS }, async () => {
        while (!killed) await (live.length > 0 && Math.random() < 0.3 ? remove(server) : upload(server))
      })
      await sleep(between(...KILL_AFTER_MS))
      server.child.kill('SIGKILL')
      expect(await server.exited).toEqual({ code: null, signal: 'SIGKILL' })
      killed = true
      await Promise.all(clients)
    }

    // Back up once more: everything acknowledged before any of the kills must be there.
    const server = await startServerProcess({ dataDir, env })
    servers.push(server)
    expect(unexpected).toEqual([])
    expect(uploads.size).toBeGreaterThan(0)
    for (const upload of uploads.values()) {
      const download = await fetch(`${server.url}/download/${upload.token}`)
      const bytes = Buffer.from(await download.arrayBuffer())
      const details = await fetch(`${server.api}/files/${upload.fileId}`, { headers: auth })
      if (deleted.has(upload.fileId)) {
        expect([download.status, details.status], `acknowledged delete of file ${upload.fileId}`).toEqual([404, 404])
      } else if (maybeDeleted.has(upload.fileId) && download.status === 404) {
        expect(details.status, `file ${upload.fileId}, deleted while the server was killed`).toBe(404)
      } else {
        expect(download.status, `acknowledged upload of file ${upload.fileId}`).toBe(200)
        expect({ size: bytes.length, sha256: sha256(bytes) }, `bytes of file ${upload.fileId}`).toEqual({
          size: upload.size,
          sha256: upload.sha256,
        })
        expect(details.status).toBe(200)
      }
    }
    await stopServerProcess(server, { signal: 'SIGTERM' })

    // What the crashes left: blobs without a row (stored before the kill, or whose row was deleted) and temp files.
    const blobDir = path.join(dataDir, 'blobs')
    const objectsOnDisk = async () =>
      (await fs.readdir(path.join(blobDir, 'objects'), { recursive: true, withFileTypes: true }))
        .filter((entry) => entry.isFile())
        .map((entry) => path.join(entry.parentPath, entry.name))
    const tempFilesBefore = (await fs.readdir(path.join(blobDir, 'tmp'))).length
    const objectsBefore = (await objectsOnDisk()).length

    const report = JSON.parse(await cli('gc', '--grace-seconds', '0', '--json')) as {
      blobs_scanned: number
      blobs_removed: number
      unfinished_writes_removed: number
      failures: number
    }

    const database = new SQLite(path.join(dataDir, 'fileshare.sqlite'), { readonly: true, fileMustExist: true })
    let rows: Array<{ id: number; storage_key: string; size: number; sha256: string }>
    let account: { total_files: number; total_size: number }
    try {
      rows = database.prepare('select id, storage_key, size, sha256 from files').all() as typeof rows
      account = database.prepare('select total_files, total_size from accounts where id = ?').get(accountId) as typeof account
    } finally {
      database.close()
    }

    // Exactly the rows' blobs, each whole, and nothing else.
    const blobs = new Map<string, Buffer>()
    for (const file of await objectsOnDisk()) blobs.set(path.basename(file), await fs.readFile(file))
    expect([...blobs.keys()].sort()).toEqual(rows.map((row) => row.storage_key).sort())
    for (const row of rows) {
      const bytes = blobs.get(row.storage_key)!
      expect({ size: bytes.length, sha256: sha256(bytes) }, `blob of row ${row.id}`).toEqual({ size: row.size, sha256: row.sha256 })
    }
    expect(await fs.readdir(path.join(blobDir, 'tmp'))).toEqual([])
    expect(report).toMatchObject({
      blobs_scanned: objectsBefore,
      blobs_removed: objectsBefore - rows.length,
      unfinished_writes_removed: tempFilesBefore,
      failures: 0,
    })
    // Every acknowledged upload that was not (maybe) deleted has its row; no acknowledged delete does.
    const rowIds = new Set(rows.map((row) => row.id))
    for (const fileId of uploads.keys()) {
      if (deleted.has(fileId)) expect(rowIds.has(fileId), `row of deleted file ${fileId}`).toBe(false)
      else if (!maybeDeleted.has(fileId)) expect(rowIds.has(fileId), `row of file ${fileId}`).toBe(true)
    }
    // The account's kept counters moved in the same transactions as the rows.
    expect(account).toEqual({ total_files: rows.length, total_size: rows.reduce((sum, row) => sum + row.size, 0) })

    console.info(
      `crash-safety: ${ROUNDS} kills; ${uploads.size} uploads and ${deleted.size} deletes acknowledged, ` +
        `${killedMidRequest} requests cut by a kill; gc removed ${report.blobs_removed} blobs without a row ` +
        `and ${report.unfinished_writes_removed} temp files.`,
    )
  })
})
