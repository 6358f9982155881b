import { randomBytes } from 'node:crypto'
import fs from 'node:fs/promises'
import path from 'node:path'
import { Readable } from 'node:stream'
import { afterAll, beforeEach, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { openBackends } from '../../src/backends.js'
import { CreateMultipartUploadCommand, ListObjectsV2Command, PutObjectCommand, S3Client, UploadPartCommand } from '@aws-sdk/client-s3'
import {
  createPgSchema,
  dropPgSchema,
  isPostgresReachable,
  PG_URL,
  S3RVER_CREDENTIALS,
  scaleOutEnv,
  startS3rver,
} from '../helpers/scale-out-env.js'
import { runCommand } from '../helpers/cli.js'
import { makeTempDir } from '../helpers/test-app.js'

const HOUR = 3_600_000

/** What `fileshare gc --json` prints. */
interface GcJson {
  dry_run: boolean
  grace_seconds: number
  blobs_scanned: number
  blobs_removed: number
  blob_bytes_removed: number
  recent_blobs_kept: number
  unfinished_writes_removed: number
  unfinished_write_bytes_removed: number
  recent_unfinished_writes_kept: number
  resumable_uploads_expired: number
  files_expired: number
  expired_file_bytes_removed: number
  revoked_links_removed: number
  download_grants_removed: number
  storage_reservations_released: number
  idempotency_keys_removed: number
  audit_events_removed: number
  webhook_messages_removed: number
  open_resumable_upload_writes_kept: number
  bytes_freed: number
  failures: number
}

const tempDirs: string[] = []
afterAll(async () => {
  await Promise.all(tempDirs.map((dir) => fs.rm(dir, { recursive: true, force: true })))
})

// In-process (test/helpers/cli.ts): the binary itself is tested in cli.test.ts.
const gc = (dataDir: string, args: string[] = [], env: Record<string, string> = {}) =>
  runCommand(['gc', ...args], { FILESHARE_DATA_DIR: dataDir, ...env })

async function gcJson(dataDir: string, args: string[] = [], env: Record<string, string> = {}): Promise<GcJson> {
  const result = await gc(dataDir, [...args, '--json'], env)
  expect(result, `fileshare gc ${args.join(' ')}`).toMatchObject({ code: 0, stderr: '' })
  expect(result.stdout.trim().split('\n')).toHaveLength(1)
  return JSON.parse(result.stdout) as GcJson
}

/**
 * A data folder holding, besides one uploaded file, what crashes leave: blobs without a row and
 * temp files of the folder store, some old and some recent.
 */
async function dataWithLeftovers() {
  const dataDir = await makeTempDir('fileshare-gc-cli-')
  tempDirs.push(dataDir)
  const config = loadConfig({ FILESHARE_DATA_DIR: dataDir })
  const { services, close } = await openBackends(config)
  const { account } = await services.accounts.create('gc-cli@example.test', 'pro')
  const owner = { accountId: account.id, limits: { maxFileSize: 1_000_000, dailyUploads: 100 } }
  const content = randomBytes(1234)
  const file = await services.files.commit(await services.files.stage(owner, Readable.from([content]), 'kept.bin'))
  await close()

  const blobs = path.join(dataDir, 'blobs')
  const at = (ageMs: number) => new Date(Date.now() - ageMs)
  const write = async (relative: string, size: number, ageMs: number) => {
    const file = path.join(blobs, relative)
    await fs.mkdir(path.dirname(file), { recursive: true })
    await fs.writeFile(file, randomBytes(size))
    await fs.utimes(file, at(ageMs), at(ageMs))
  }
  const key = () => randomBytes(16).toString('hex')
  const oldOrphan = key()
  const youngOrphan = key()
  await write(`objects/${oldOrphan.slice(0, 2)}/${oldOrphan}`, 500, 2 * HOUR)
  await write(`objects/${youngOrphan.slice(0, 2)}/${youngOrphan}`, 600, 10_000)
  await write(`tmp/${key()}.part`, 70, 3 * HOUR)
  await write(`tmp/${key()}.part`, 80, 5_000)
  // The uploaded file's blob is old too: a row protects it whatever its age.
  await fs.utimes(path.join(blobs, 'objects', file.storage_key.slice(0, 2), file.storage_key), at(100 * HOUR), at(100 * HOUR))

  const state = async () => ({
    objects: (await fs.readdir(path.join(blobs, 'objects'), { recursive: true }))
      .filter((entry) => /[a-f0-9]{32}$/.test(entry))
      .map((entry) => path.basename(entry))
      .sort(),
    tmp: (await fs.readdir(path.join(blobs, 'tmp'))).length,
  })
  return { dataDir, file, content, oldOrphan, youngOrphan, state }
}

describe('fileshare gc', () => {
  let data: Awaited<ReturnType<typeof dataWithLeftovers>>
  beforeEach(async () => {
    data = await dataWithLeftovers()
  })

  it('removes blobs without a row and leftovers older than the grace period (default 1 h), and keeps the rest', async () => {
    const result = await gc(data.dataDir)
    expect(result).toMatchObject({ code: 0, stderr: '' })
    expect(result.stdout.trim().split('\n')).toEqual([
      'Removed 1 unreferenced blob (500 bytes) and 1 unfinished upload (70 bytes): 570 bytes freed.',
      'Scanned 3 blobs; kept 1 blob and 1 unfinished upload younger than the grace period (3600 s).',
    ])
    expect(await data.state()).toEqual({ objects: [data.file.storage_key, data.youngOrphan].sort(), tmp: 1 })
  })

  it('--dry-run reports the same and removes nothing', async () => {
    const before = await data.state()
    const result = await gc(data.dataDir, ['--dry-run'])
    expect(result).toMatchObject({ code: 0, stderr: '' })
    expect(result.stdout).toContain(
      'Dry run, nothing removed: would remove 1 unreferenced blob (500 bytes) and 1 unfinished upload (70 bytes)',
    )
    expect(await data.state()).toEqual(before)
    expect(await gcJson(data.dataDir, ['--dry-run'])).toMatchObject({ dry_run: true, blobs_removed: 1, bytes_freed: 570 })
    expect(await data.state()).toEqual(before)
  })

  it('--json prints the report as one object', async () => {
    expect(await gcJson(data.dataDir)).toEqual<GcJson>({
      dry_run: false,
      grace_seconds: 3600,
      blobs_scanned: 3,
      blobs_removed: 1,
      blob_bytes_removed: 500,
      recent_blobs_kept: 1,
      unfinished_writes_removed: 1,
      unfinished_write_bytes_removed: 70,
      recent_unfinished_writes_kept: 1,
      resumable_uploads_expired: 0,
      files_expired: 0,
      expired_file_bytes_removed: 0,
      revoked_links_removed: 0,
      download_grants_removed: 0,
      storage_reservations_released: 0,
      idempotency_keys_removed: 0,
      audit_events_removed: 0,
      webhook_messages_removed: 0,
      open_resumable_upload_writes_kept: 0,
      bytes_freed: 570,
      failures: 0,
    })
  })

  it('--grace-seconds 0 removes every blob without a row and every leftover, and never the file of a row', async () => {
    expect(await gcJson(data.dataDir, ['--grace-seconds', '0'])).toMatchObject({
      grace_seconds: 0,
      blobs_removed: 2,
      blob_bytes_removed: 1100,
      unfinished_writes_removed: 2,
      bytes_freed: 1250,
    })
    expect(await data.state()).toEqual({ objects: [data.file.storage_key], tmp: 0 })
    // The uploaded file still reads back whole.
    const stored = await fs.readFile(path.join(data.dataDir, 'blobs', 'objects', data.file.storage_key.slice(0, 2), data.file.storage_key))
    expect(stored.equals(data.content)).toBe(true)
  })

  it('takes its default grace period from FILESHARE_GC_GRACE_MS', async () => {
    // 30 minutes: the 2-hour-old orphan and the 3-hour-old temp file go, the younger ones stay.
    expect(await gcJson(data.dataDir, [], { FILESHARE_GC_GRACE_MS: String(HOUR / 2) })).toMatchObject({
      grace_seconds: 1800,
      blobs_removed: 1,
    })
    // One minute: what is seconds old still stays.
    expect(await gcJson(data.dataDir, [], { FILESHARE_GC_GRACE_MS: '60000' })).toMatchObject({
      grace_seconds: 60,
      blobs_removed: 0,
      recent_blobs_kept: 1,
      unfinished_writes_removed: 0,
      recent_unfinished_writes_kept: 1,
    })
  })

  it.each([['-1'], ['abc'], ['1.5'], ['']])('--grace-seconds %j is a usage error (exit 2, one line)', async (value) => {
    const result = await gc(data.dataDir, ['--grace-seconds', value])
    expect(result.code).toBe(2)
    expect(result.stderr.trimEnd().split('\n')).toEqual([expect.stringMatching(/^fileshare: .*--grace-seconds/)])
    expect(result.stdout).toBe('')
  })
})

it('fileshare help lists gc', async () => {
  const dataDir = await makeTempDir('fileshare-gc-cli-')
  tempDirs.push(dataDir)
  const result = await runCommand(['help'], { FILESHARE_DATA_DIR: dataDir })
  expect(result.stdout).toContain('gc [--grace-seconds N] [--dry-run] [--json]')
})

const postgresReachable = await isPostgresReachable()
if (!postgresReachable) console.warn(`SKIPPING the S3 + PostgreSQL test of test/cli/gc.test.ts: no PostgreSQL at ${PG_URL}.`)

it.skipIf(!postgresReachable)(
  'fileshare gc on S3 and PostgreSQL removes unreferenced objects and aborts open multipart uploads, then exits',
  async () => {
    const [schema, s3] = await Promise.all([createPgSchema(), startS3rver('fileshare-gc-cli')])
    const client = new S3Client({ region: 'us-east-1', endpoint: s3.endpoint, forcePathStyle: true, credentials: S3RVER_CREDENTIALS })
    try {
      const dataDir = await makeTempDir('fileshare-gc-cli-')
      tempDirs.push(dataDir)
      const env = { FILESHARE_DATA_DIR: dataDir, ...scaleOutEnv({ schema, bucket: s3.bucket, s3Endpoint: s3.endpoint }) }
      // One file with its row, one object without, one multipart upload left open.
      process.env.AWS_ACCESS_KEY_ID ??= S3RVER_CREDENTIALS.accessKeyId
      process.env.AWS_SECRET_ACCESS_KEY ??= S3RVER_CREDENTIALS.secretAccessKey
      const config = loadConfig(env)
      const { services, close } = await openBackends(config)
      const { account } = await services.accounts.create('gc-s3@example.test', 'pro')
      const owner = { accountId: account.id, limits: { maxFileSize: 1_000_000, dailyUploads: 100 } }
      const file = await services.files.commit(await services.files.stage(owner, Readable.from([randomBytes(300)]), 'kept.bin'))
      await close()
      const orphan = `blobs/${randomBytes(16).toString('hex')}`
      await client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: orphan, Body: randomBytes(400) }))
      const open = `blobs/${randomBytes(16).toString('hex')}`
      const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket: s3.bucket, Key: open }))
      await client.send(new UploadPartCommand({ Bucket: s3.bucket, Key: open, UploadId, PartNumber: 1, Body: randomBytes(500) }))

      // Everything is seconds old: the default grace period keeps it all.
      const kept = await runCommand(['gc', '--json'], env)
      expect(kept).toMatchObject({ code: 0, stderr: '' })
      expect(JSON.parse(kept.stdout)).toMatchObject({
        blobs_scanned: 2,
        recent_blobs_kept: 2,
        recent_unfinished_writes_kept: 1,
        bytes_freed: 0,
      })

      const swept = await runCommand(['gc', '--grace-seconds', '0', '--json'], env)
      expect(swept).toMatchObject({ code: 0, stderr: '' })
      expect(JSON.parse(swept.stdout)).toMatchObject({
        blobs_removed: 1,
        blob_bytes_removed: 400,
        unfinished_writes_removed: 1,
        unfinished_write_bytes_removed: 500,
      })
      const objects = await client.send(new ListObjectsV2Command({ Bucket: s3.bucket }))
      expect((objects.Contents ?? []).map((object) => object.Key)).toEqual([`blobs/${file.storage_key}`])
      expect(await s3.multipartUploadsInProgress()).toEqual([])
    } finally {
      client.destroy()
      await Promise.all([dropPgSchema(schema), s3.close()])
    }
  },
)
