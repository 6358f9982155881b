import { createHash, randomBytes, randomInt } from 'node:crypto'
import fs from 'node:fs/promises'
import path from 'node:path'
import { Readable } from 'node:stream'
import { DeleteObjectCommand, PutObjectCommand, GetObjectCommand, S3Client } from '@aws-sdk/client-s3'
import SQLite from 'better-sqlite3'
import { afterAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { openBackends } from '../../src/backends.js'
import { loadConfig } from '../../src/config.js'
import { createDatabase, runCommand } from '../helpers/cli.js'
import {
  createPgSchema,
  dropPgSchema,
  isPostgresReachable,
  PG_URL,
  S3RVER_CREDENTIALS,
  scaleOutEnv,
  startS3rver,
} from '../helpers/scale-out-env.js'
import { startServerProcess, stopServerProcess, type CliResult } from '../helpers/server-process.js'
import { bearer, fileForm, makeTempDir } from '../helpers/test-app.js'

const tempDirs: string[] = []
afterAll(async () => {
  await Promise.all(tempDirs.map((dir) => fs.rm(dir, { recursive: true, force: true })))
})
async function tempDir(): Promise<string> {
  const dir = await makeTempDir('fileshare-backup-')
  tempDirs.push(dir)
  return dir
}

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex')

/** The manifest.json of a backup, as docs/cli.md describes it. */
interface Manifest {
  format: string
  version: number
  created_at: string
  database: { file: string; size: number; sha256: string }
  blobs: Array<{ key: string; size: number; sha256: string }>
  resumable_uploads: Array<{ key: string; size: number; sha256: string }>
}

const readManifest = async (dir: string) => JSON.parse(await fs.readFile(path.join(dir, 'manifest.json'), 'utf8')) as Manifest

/** A failure as the CLI reports it: exit 1, stdout empty, exactly one line on stderr. */
function expectOneLineFailure(result: CliResult, message: RegExp): void {
  expect(result.code, result.stderr).toBe(1)
  expect(result.stdout).toBe('')
  expect(result.stderr.trimEnd().split('\n')).toEqual([expect.stringMatching(message)])
}

/** Every file and folder below `dir` with its content's hash: to show that nothing changed. */
async function snapshot(dir: string): Promise<Record<string, string>> {
  const state: Record<string, string> = {}
  for (const entry of await fs.readdir(dir, { recursive: true, withFileTypes: true }).catch(() => [])) {
    const full = path.join(entry.parentPath, entry.name)
    state[path.relative(dir, full)] = entry.isFile() ? sha256(await fs.readFile(full)) : 'folder'
  }
  return state
}

/** The rows of the files table of a SQLite database, read directly. */
function fileRows(databaseFile: string): Array<{ id: number; token: string; sha256: string; size: number; storage_key: string }> {
  const database = new SQLite(databaseFile, { readonly: true, fileMustExist: true })
  try {
    return database.prepare('select id, token, sha256, size, storage_key from files order by id').all() as ReturnType<typeof fileRows>
  } finally {
    database.close()
  }
}

/** An account through the CLI, as an operator makes one, without rate limits in the way. */
async function unlimitedAccount(env: Record<string, string>): Promise<string> {
  const created = await runCommand(
    ['account', 'create', '--email', `backup-${randomInt(1e9)}@example.test`, '--plan', 'pro', '--json'],
    env,
  )
  expect(created).toMatchObject({ code: 0, stderr: '' })
  const { account_id, api_key } = JSON.parse(created.stdout) as { account_id: number; api_key: string }
  const limits = ['--requests-per-minute', '1000000', '--requests-per-day', '1000000', '--daily-uploads', '1000000']
  expect(await runCommand(['account', 'set-limits', String(account_id), ...limits, '--max-storage', 'unlimited'], env)).toMatchObject({
    code: 0,
  })
  return api_key
}

describe('fileshare backup and restore', () => {
  it(
    'a backup taken while 8 clients upload and delete restores into an instance where every file downloads with its SHA-256',
    { timeout: 60_000 },
    async () => {
      const root = await tempDir()
      const source = { FILESHARE_DATA_DIR: path.join(root, 'source') }
      await createDatabase(source)
      const apiKey = await unlimitedAccount(source)
      const serverEnv = { FILESHARE_LOG_LEVEL: 'warn', FILESHARE_DOWNLOADS_PER_MINUTE: '1000000' }
      const server = await startServerProcess({ dataDir: source.FILESHARE_DATA_DIR, env: serverEnv })

      // What the clients were told, with the time they were told it.
      const uploaded = new Map<number, { sha256: string; startedAt: number; at: number }>()
      const deleted = new Map<number, { startedAt: number; at: number }>()
      let stop = false
      const client = async () => {
        const mine: number[] = []
        while (!stop) {
          if (mine.length > 2 && Math.random() < 0.4) {
            const id = mine.splice(randomInt(mine.length), 1)[0]!
            const startedAt = performance.now()
            const response = await fetch(`${server.api}/files/${id}`, { method: 'DELETE', headers: bearer(apiKey) })
            expect(response.status).toBe(200)
            await response.arrayBuffer()
            deleted.set(id, { startedAt, at: performance.now() })
          } else {
            const content = randomBytes(randomInt(1, 48 * 1024))
            const startedAt = performance.now()
            const response = await fetch(`${server.api}/files/upload`, { method: 'POST', headers: bearer(apiKey), body: fileForm(content) })
            expect(response.status).toBe(201)
            const body = (await response.json()) as { file_id: number }
            uploaded.set(body.file_id, { sha256: sha256(content), startedAt, at: performance.now() })
            mine.push(body.file_id)
          }
        }
      }
      const backupDir = path.join(root, 'backup')
      let backupStarted = 0
      let backupEnded = 0
      try {
        const clients = Array.from({ length: 8 }, client)
        while (uploaded.size < 24) await new Promise((resolve) => setTimeout(resolve, 10))
        backupStarted = performance.now()
        const backup = await runCommand(['backup', backupDir, '--json'], source)
        backupEnded = performance.now()
        expect(backup, backup.stderr).toMatchObject({ code: 0, stderr: '' })
        // Let the clients go on a little after the backup, then stop them.
        const target = uploaded.size + 8
        while (uploaded.size < target) await new Promise((resolve) => setTimeout(resolve, 10))
        stop = true
        await Promise.all(clients)
        // Uploads whose request was under way while the backup ran.
        const uploadsDuringBackup = [...uploaded.values()].filter(
          ({ startedAt, at }) => startedAt < backupEnded && at > backupStarted,
        ).length
        expect(uploadsDuringBackup, 'uploads went on while the backup ran').toBeGreaterThan(0)
      } finally {
        stop = true
        await stopServerProcess(server)
      }

      // The backup's files: its database copy's rows, each with its blob in the manifest.
      const manifest = await readManifest(backupDir)
      expect(manifest).toMatchObject({ format: 'fileshare-backup', version: 1, database: { file: 'fileshare.sqlite' } })
      const backedUp = fileRows(path.join(backupDir, 'fileshare.sqlite'))
      expect(backedUp.map((row) => row.storage_key).sort()).toEqual(manifest.blobs.map((blob) => blob.key).sort())
      const ids = new Set(backedUp.map((row) => row.id))
      for (const [id, { at }] of uploaded) {
        // Acknowledged before the backup began, and no delete asked for before it ended: in it.
        const deletion = deleted.get(id)
        if (at < backupStarted && (deletion === undefined || deletion.startedAt > backupEnded)) expect(ids.has(id), `file ${id}`).toBe(true)
        // Deleted before the backup began: not in it.
        if (deletion !== undefined && deletion.at < backupStarted) expect(ids.has(id), `deleted file ${id}`).toBe(false)
      }
      for (const row of backedUp) expect(row.sha256).toBe(uploaded.get(row.id)?.sha256)

      // Restored into a new data folder, served by a new instance: every file downloads whole.
      const restored = { FILESHARE_DATA_DIR: path.join(root, 'restored') }
      const restore = await runCommand(['restore', backupDir, '--json'], restored)
      expect(restore, restore.stderr).toMatchObject({ code: 0, stderr: '' })
      expect(JSON.parse(restore.stdout)).toMatchObject({ files: backedUp.length })
      const verify = await runCommand(['verify', '--grace-seconds', '0', '--json'], restored)
      expect(verify, verify.stdout).toMatchObject({ code: 0, stderr: '' })
      expect(JSON.parse(verify.stdout)).toMatchObject({ ok: true, files_checked: backedUp.length, blobs_listed: backedUp.length })
      // In this process (a second server process would cost seconds): the same app, on the restored folder.
      const instance = await buildApp(loadConfig({ ...restored, FILESHARE_LOG_LEVEL: 'silent' }))
      try {
        for (const row of backedUp) {
          const response = await instance.inject({ method: 'GET', url: `/download/${row.token}` })
          expect(response.statusCode, `file ${row.id}`).toBe(200)
          expect(sha256(response.rawPayload), `file ${row.id}`).toBe(row.sha256)
        }
      } finally {
        await instance.close()
      }
    },
  )

  /** A data folder with `count` files and a backup of it. */
  async function backedUpData(count = 3) {
    const root = await tempDir()
    const env = { FILESHARE_DATA_DIR: path.join(root, 'data') }
    await createDatabase(env)
    const { services, close } = await openBackends(loadConfig(env))
    const { account } = await services.accounts.create(`restore-${randomInt(1e9)}@example.test`, 'pro')
    const owner = { accountId: account.id, limits: { maxFileSize: 1_000_000, dailyUploads: 100 } }
    const files = []
    for (let index = 0; index < count; index++) {
      files.push(await services.files.commit(await services.files.stage(owner, Readable.from([randomBytes(1000 + index)]), 'f.bin')))
    }
    await close()
    const backupDir = path.join(root, 'backup')
    const backup = await runCommand(['backup', backupDir], env)
    expect(backup, backup.stderr).toMatchObject({ code: 0, stderr: '' })
    expect(backup.stdout).toContain(`Backed up ${count} files`)
    return { root, env, files, backupDir, blobPath: (key: string) => path.join(backupDir, 'blobs', 'objects', key.slice(0, 2), key) }
  }

  it('restores into an absent data folder; the backup refuses a target that is not empty, the restore a data folder that is not', async () => {
    const data = await backedUpData()
    // Into the backup folder again: refused, nothing changed.
    const before = await snapshot(data.backupDir)
    expectOneLineFailure(await runCommand(['backup', data.backupDir], data.env), /^fileshare: The backup folder .* is not empty/)
    expect(await snapshot(data.backupDir)).toEqual(before)
    // A target that is a file: refused.
    const file = path.join(data.root, 'a-file')
    await fs.writeFile(file, 'x')
    expectOneLineFailure(await runCommand(['backup', file], data.env), /^fileshare: The backup folder .* is not a folder/)
    expect(await fs.readFile(file, 'utf8')).toBe('x')
    // Into the running instance's own data folder: refused.
    const dataBefore = await snapshot(data.env.FILESHARE_DATA_DIR)
    expectOneLineFailure(
      await runCommand(['restore', data.backupDir], data.env),
      /^fileshare: The data folder \(FILESHARE_DATA_DIR\) .* is not empty/,
    )
    expect(await snapshot(data.env.FILESHARE_DATA_DIR)).toEqual(dataBefore)

    // Into an empty folder: the same files, the same bytes.
    const empty = { FILESHARE_DATA_DIR: path.join(data.root, 'empty') }
    await fs.mkdir(empty.FILESHARE_DATA_DIR)
    const restored = await runCommand(['restore', data.backupDir], empty)
    expect(restored).toMatchObject({ code: 0, stderr: '' })
    expect(restored.stdout).toMatch(/^Restored 3 files \(3003 bytes\), each checked against the manifest/)
    expect(fileRows(path.join(empty.FILESHARE_DATA_DIR, 'fileshare.sqlite')).map((row) => row.id)).toEqual(data.files.map((f) => f.id))
    expect(await runCommand(['verify', '--grace-seconds', '0'], empty)).toMatchObject({ code: 0, stderr: '' })
  })

  it('an open resumable upload resumes after a restore, with the bytes it had when the backup was taken', async () => {
    const root = await tempDir()
    const env = { FILESHARE_DATA_DIR: path.join(root, 'data') }
    await createDatabase(env)
    const content = randomBytes(5000)
    const source = await openBackends(loadConfig(env))
    const { account } = await source.services.accounts.create(`resumable-${randomInt(1e9)}@example.test`, 'pro')
    const owner = { accountId: account.id, limits: { maxFileSize: 1_000_000, dailyUploads: 100 } }
    const upload = await source.services.resumableUploads.create(owner, { length: content.length, metadata: '', filename: 'r.bin' })
    await source.services.resumableUploads.append(owner, upload.id, { offset: 0, source: Readable.from([content.subarray(0, 3000)]) })
    await source.close()

    const backupDir = path.join(root, 'backup')
    const backup = await runCommand(['backup', backupDir, '--json'], env)
    expect(backup, backup.stderr).toMatchObject({ code: 0, stderr: '' })
    expect(JSON.parse(backup.stdout)).toMatchObject({ files: 0, resumable_uploads: 1 })
    expect((await readManifest(backupDir)).resumable_uploads).toEqual([
      { key: expect.stringMatching(/^[a-f0-9]{32}$/), size: 3000, sha256: sha256(content.subarray(0, 3000)) },
    ])

    const restored = { FILESHARE_DATA_DIR: path.join(root, 'restored') }
    expect(await runCommand(['restore', backupDir], restored)).toMatchObject({ code: 0, stderr: '' })
    const instance = await openBackends(loadConfig(restored))
    try {
      const { upload: done } = await instance.services.resumableUploads.append(owner, upload.id, {
        offset: 3000,
        source: Readable.from([content.subarray(3000)]),
      })
      expect(done.file?.sha256).toBe(sha256(content))
    } finally {
      await instance.close()
    }
  })

  it('a blob missing from the live data folder: the backup leaves its file out and names it', async () => {
    const data = await backedUpData(2)
    const [lost] = data.files
    await fs.rm(path.join(data.env.FILESHARE_DATA_DIR, 'blobs', 'objects', lost!.storage_key.slice(0, 2), lost!.storage_key))
    const again = path.join(data.root, 'again')
    const backup = await runCommand(['backup', again, '--json'], data.env)
    expect(backup, backup.stderr).toMatchObject({ code: 0, stderr: '' })
    expect(JSON.parse(backup.stdout)).toMatchObject({
      files: 1,
      files_deleted_meanwhile: 0,
      missing_in_data: [{ file_id: lost!.id, storage_key: lost!.storage_key }],
    })
    expect(fileRows(path.join(again, 'fileshare.sqlite')).map((row) => row.id)).toEqual([data.files[1]!.id])
  })

  it.each([
    ['not JSON', (text: string) => text.slice(0, -20), /is damaged: it is not valid JSON/],
    ['of another format', (text: string) => text.replace('"fileshare-backup"', '"other"'), /is damaged: "format" is not/],
    [
      'with a bad key',
      (text: string) => text.replace(/"key": "[a-f0-9]{32}"/, '"key": "../../etc/passwd"'),
      /blobs\[0\] is not a blob key/,
    ],
    [
      'with a changed SHA-256',
      (text: string) => text.replace(/("key": "[a-f0-9]{32}",\s*"size": \d+,\s*"sha256": ")[a-f0-9]/, '$1x'),
      /blobs\[0\]/,
    ],
  ])('a manifest %s: one line, exit 1, the data folder untouched', async (_what, damage, message) => {
    const data = await backedUpData(2)
    const manifestFile = path.join(data.backupDir, 'manifest.json')
    await fs.writeFile(manifestFile, damage(await fs.readFile(manifestFile, 'utf8')))
    const target = { FILESHARE_DATA_DIR: path.join(data.root, 'target') }
    expectOneLineFailure(await runCommand(['restore', data.backupDir], target), message)
    await expect(fs.stat(target.FILESHARE_DATA_DIR)).rejects.toMatchObject({ code: 'ENOENT' })
  })

  it('a flipped byte or a missing blob in the backup: one line naming the blob, exit 1, the data folder left empty', async () => {
    const data = await backedUpData()
    const [first, second] = data.files
    // A copy with one byte flipped replaces the hard link (the live blob keeps its bytes).
    const bytes = await fs.readFile(data.blobPath(first!.storage_key))
    bytes[500] = bytes[500]! ^ 0x01
    await fs.writeFile(`${data.blobPath(first!.storage_key)}.new`, bytes)
    await fs.rename(`${data.blobPath(first!.storage_key)}.new`, data.blobPath(first!.storage_key))
    const target = { FILESHARE_DATA_DIR: path.join(data.root, 'target') }
    await fs.mkdir(target.FILESHARE_DATA_DIR)
    expectOneLineFailure(
      await runCommand(['restore', data.backupDir], target),
      new RegExp(
        `^fileshare: The backup is damaged: blob ${first!.storage_key} has 1000 bytes with SHA-256 [a-f0-9]{64}; the manifest records`,
      ),
    )
    expect(await fs.readdir(target.FILESHARE_DATA_DIR)).toEqual([])

    await fs.rm(data.blobPath(second!.storage_key))
    await fs.writeFile(
      data.blobPath(first!.storage_key),
      await fs.readFile(path.join(data.env.FILESHARE_DATA_DIR, 'blobs', 'objects', first!.storage_key.slice(0, 2), first!.storage_key)),
    )
    expectOneLineFailure(
      await runCommand(['restore', data.backupDir], target),
      new RegExp(`^fileshare: The backup is damaged: blob ${second!.storage_key} is missing\\.$`),
    )
    expect(await fs.readdir(target.FILESHARE_DATA_DIR)).toEqual([])
    // A folder that holds no backup at all.
    expectOneLineFailure(
      await runCommand(['restore', target.FILESHARE_DATA_DIR], { FILESHARE_DATA_DIR: path.join(data.root, 'x') }),
      /No backup at .*: it has no manifest\.json/,
    )
  })

  it.each([
    [['backup'], /^fileshare: backup needs DIR/],
    [['backup', 'a', 'b'], /^fileshare: Unexpected argument "b": backup takes DIR/],
    [['restore'], /^fileshare: restore needs DIR/],
    [['verify', '--sample', '0'], /^fileshare: --sample must be a positive integer, got "0"/],
    [['verify', 'extra'], /^fileshare: Unknown command "verify extra"/],
    [['verify', '--grace-seconds', '-1'], /--grace-seconds/],
  ])('fileshare %j is a usage error (exit 2, one line)', async (args, message) => {
    const result = await runCommand(args, { FILESHARE_DATA_DIR: await tempDir() })
    expect(result.code).toBe(2)
    expect(result.stdout).toBe('')
    expect(result.stderr.trimEnd().split('\n')).toEqual([expect.stringMatching(message)])
  })

  it('backup and restore refuse the scale-out stack, pointing to docs/scale-out.md', async () => {
    const env = {
      FILESHARE_DATA_DIR: await tempDir(),
      FILESHARE_DATABASE_URL: PG_URL,
      FILESHARE_STORAGE: 's3',
      FILESHARE_S3_BUCKET: 'bucket',
    }
    for (const command of ['backup', 'restore']) {
      expectOneLineFailure(
        await runCommand([command, path.join(env.FILESHARE_DATA_DIR, 'x')], env),
        /works on the embedded stack .* docs\/scale-out\.md/,
      )
    }
  })

  it('fileshare help lists backup, restore and verify', async () => {
    const result = await runCommand(['help'], { FILESHARE_DATA_DIR: await tempDir() })
    for (const line of ['backup DIR [--json]', 'restore DIR [--json]', 'verify [--sample N] [--grace-seconds N] [--json]']) {
      expect(result.stdout).toContain(line)
    }
  })
})

/** What `fileshare verify --json` prints. */
interface VerifyJson {
  ok: boolean
  sampled: boolean
  files_checked: number
  bytes_checked: number
  blobs_listed: number
  grace_seconds: number
  damaged: Array<{
    file_id: number
    storage_key: string
    recorded_size: number
    actual_size: number
    recorded_sha256: string
    actual_sha256: string
  }>
  missing: Array<{ file_id: number; storage_key: string }>
  orphans: Array<{ storage_key: string; size: number }>
  recent_unreferenced_blobs: number
}

/** How a test damages one stack's store: a byte flipped in a blob, a blob removed, an orphan added. */
interface Damage {
  flipByte(key: string): Promise<void>
  remove(key: string): Promise<void>
  /** Stores a blob no row refers to and returns its key. */
  addOrphan(): Promise<string>
}

/**
 * Three files, then one flipped byte, one missing blob and one orphan: verify names each (file id
 * and storage key, never a token) and exits 1; a sample finds what it samples.
 */
async function verifyFindsDamage(env: Record<string, string>, damage: Damage): Promise<void> {
  const { services, close } = await openBackends(loadConfig(env))
  const { account } = await services.accounts.create(`verify-${randomInt(1e9)}@example.test`, 'pro')
  const owner = { accountId: account.id, limits: { maxFileSize: 1_000_000, dailyUploads: 100 } }
  const files = []
  for (const size of [2000, 3000, 4000]) {
    files.push(await services.files.commit(await services.files.stage(owner, Readable.from([randomBytes(size)]), 'f.bin')))
  }
  await close()
  const verify = (args: string[] = []) => runCommand(['verify', ...args], env)

  const clean = await verify(['--grace-seconds', '0', '--json'])
  expect(clean, clean.stderr).toMatchObject({ code: 0, stderr: '' })
  expect(JSON.parse(clean.stdout)).toMatchObject({ ok: true, files_checked: 3, bytes_checked: 9000, blobs_listed: 3, orphans: [] })

  const [flipped, kept, removed] = files
  await damage.flipByte(flipped!.storage_key)
  await damage.remove(removed!.storage_key)
  const orphan = await damage.addOrphan()

  const found = await verify(['--grace-seconds', '0', '--json'])
  expect(found.code, found.stderr).toBe(1)
  expect(found.stderr).toBe('')
  const report = JSON.parse(found.stdout) as VerifyJson
  expect(report).toEqual<VerifyJson>({
    ok: false,
    sampled: false,
    files_checked: 2,
    bytes_checked: 5000,
    blobs_listed: 3,
    grace_seconds: 0,
    damaged: [
      {
        file_id: flipped!.id,
        storage_key: flipped!.storage_key,
        recorded_size: 2000,
        actual_size: 2000,
        recorded_sha256: flipped!.sha256,
        actual_sha256: expect.not.stringMatching(flipped!.sha256) as unknown as string,
      },
    ],
    missing: [{ file_id: removed!.id, storage_key: removed!.storage_key }],
    orphans: [{ storage_key: orphan, size: 100 }],
    recent_unreferenced_blobs: 0,
  })
  for (const file of files) expect(found.stdout).not.toContain(file.token)

  // In words: a line per finding, then the summary.
  const text = await verify(['--grace-seconds', '0'])
  expect(text.code).toBe(1)
  expect(text.stdout.trimEnd().split('\n')).toEqual([
    expect.stringMatching(new RegExp(`^damaged: file ${flipped!.id}, storage key ${flipped!.storage_key}: 2000 bytes with SHA-256 `)),
    `missing: file ${removed!.id}, storage key ${removed!.storage_key}: no blob stored`,
    `orphan: storage key ${orphan} (100 bytes): no file refers to it`,
    'Checked 2 files (5000 bytes) and 3 stored blobs: 1 damaged, 1 missing, 1 orphan.',
  ])

  // Within the default grace period (an hour) the new orphan may be an upload in flight: not judged.
  const young = JSON.parse((await verify(['--json'])).stdout) as VerifyJson
  expect(young).toMatchObject({ orphans: [], recent_unreferenced_blobs: 1, damaged: [{ file_id: flipped!.id }] })

  // A sample of one: one file read, whichever it was.
  const sampled = JSON.parse((await verify(['--sample', '1', '--grace-seconds', '0', '--json'])).stdout) as VerifyJson
  expect(sampled.sampled).toBe(true)
  expect(sampled.files_checked + sampled.missing.length).toBe(1)
  expect(kept).toBeDefined()
}

const postgresReachable = await isPostgresReachable()
if (!postgresReachable) console.warn(`SKIPPING the S3 + PostgreSQL test of test/cli/backup.test.ts: no PostgreSQL at ${PG_URL}.`)

describe('fileshare verify', () => {
  it('on the folder store: finds a flipped byte, a missing blob and an orphan, each named, and exits 1', async () => {
    const env = { FILESHARE_DATA_DIR: await tempDir() }
    await createDatabase(env)
    const blobFile = (key: string) => path.join(env.FILESHARE_DATA_DIR, 'blobs', 'objects', key.slice(0, 2), key)
    await verifyFindsDamage(env, {
      async flipByte(key) {
        const bytes = await fs.readFile(blobFile(key))
        bytes[1234] = bytes[1234]! ^ 0x80
        await fs.writeFile(blobFile(key), bytes)
      },
      remove: (key) => fs.rm(blobFile(key)),
      async addOrphan() {
        const key = randomBytes(16).toString('hex')
        await fs.mkdir(path.dirname(blobFile(key)), { recursive: true })
        await fs.writeFile(blobFile(key), randomBytes(100))
        return key
      },
    })
  })

  it.skipIf(!postgresReachable)('on S3 and PostgreSQL: the same, through the BlobStore interface', async () => {
    const [schema, s3] = await Promise.all([createPgSchema(), startS3rver('fileshare-verify-cli')])
    const client = new S3Client({ region: 'us-east-1', endpoint: s3.endpoint, forcePathStyle: true, credentials: S3RVER_CREDENTIALS })
    try {
      process.env.AWS_ACCESS_KEY_ID ??= S3RVER_CREDENTIALS.accessKeyId
      process.env.AWS_SECRET_ACCESS_KEY ??= S3RVER_CREDENTIALS.secretAccessKey
      const env = { FILESHARE_DATA_DIR: await tempDir(), ...scaleOutEnv({ schema, bucket: s3.bucket, s3Endpoint: s3.endpoint }) }
      const object = (key: string) => ({ Bucket: s3.bucket, Key: `blobs/${key}` })
      await verifyFindsDamage(env, {
        async flipByte(key) {
          const stored = await client.send(new GetObjectCommand(object(key)))
          const bytes = Buffer.from(await stored.Body!.transformToByteArray())
          bytes[1234] = bytes[1234]! ^ 0x80
          await client.send(new PutObjectCommand({ ...object(key), Body: bytes }))
        },
        remove: async (key) => void (await client.send(new DeleteObjectCommand(object(key)))),
        async addOrphan() {
          const key = randomBytes(16).toString('hex')
          await client.send(new PutObjectCommand({ ...object(key), Body: randomBytes(100) }))
          return key
        },
      })
    } finally {
      client.destroy()
      await Promise.all([dropPgSchema(schema), s3.close()])
    }
  })
})
