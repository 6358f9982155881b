import { createHash, randomBytes } from 'node:crypto'
import fs from 'node:fs/promises'
import path from 'node:path'
import { CreateMultipartUploadCommand, S3Client, UploadPartCommand } from '@aws-sdk/client-s3'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { openPostgres, openSqlite, type DatabaseHandle } from '../../src/db/dialect.js'
import { migrateToLatest } from '../../src/db/migrate.js'
import { AccountsRepository } from '../../src/db/repositories/accounts-repository.js'
import { FilesRepository } from '../../src/db/repositories/files-repository.js'
import { LinksRepository } from '../../src/db/repositories/links-repository.js'
import { UploadsRepository } from '../../src/db/repositories/uploads-repository.js'
import { UploadExpiredError } from '../../src/errors.js'
import { GarbageCollector, type GarbageCollectionReport } from '../../src/services/garbage-collector.js'
import { ResumableUploadService } from '../../src/services/resumable-uploads.js'
import type { Owner } from '../../src/services/files.js'
import type { BlobStore, StoredBlob } from '../../src/storage/blob-store.js'
import { FsBlobStore } from '../../src/storage/fs-blob-store.js'
import type { ResumableBlobStore } from '../../src/storage/resumable.js'
import { S3BlobStore } from '../../src/storage/s3-blob-store.js'
import { createPgSchema, dropPgSchema, isPostgresReachable, PG_URL, S3RVER_CREDENTIALS, startS3rver } from '../helpers/scale-out-env.js'
import { makeTempDir } from '../helpers/test-app.js'
import { chunkedSource, listKeys, listUnfinished, readAll } from '../helpers/blob-store-contract.js'
import { listLeftovers } from '../helpers/resumable-store-contract.js'

const HOUR = 3_600_000
const GRACE = HOUR

/** A store and a database of their own, and a row writer like FileService.commit. */
type Store = BlobStore & ResumableBlobStore

interface Setup {
  handle: DatabaseHandle
  store: Store
  files: FilesRepository
  links: LinksRepository
  uploads: ResumableUploadService
  accountId: number
  close(): Promise<void>
}

async function embeddedSetup(): Promise<Setup & { root: string }> {
  const dir = await makeTempDir('fileshare-gc-')
  const handle = openSqlite(path.join(dir, 'fileshare.sqlite'))
  await migrateToLatest(handle)
  const root = path.join(dir, 'blobs')
  const store = await new FsBlobStore(root).init()
  const { id } = await new AccountsRepository(handle.db).create('gc@example.test', 'pro', Date.now())
  return {
    handle,
    store,
    root,
    files: new FilesRepository(handle.db),
    links: new LinksRepository(handle.db),
    uploads: resumableUploads(handle, store),
    accountId: id,
    async close() {
      await handle.db.destroy()
      await fs.rm(dir, { recursive: true, force: true })
    },
  }
}

function resumableUploads(handle: DatabaseHandle, store: Store, now = Date.now): ResumableUploadService {
  const { db } = handle
  return new ResumableUploadService(
    new UploadsRepository(db),
    new AccountsRepository(db),
    new FilesRepository(db),
    store,
    { expiryMs: 24 * HOUR },
    undefined,
    now,
  )
}

let rowCounter = 0
async function addRow(setup: Setup, blob: StoredBlob): Promise<void> {
  rowCounter++
  await setup.files.insert({
    account_id: setup.accountId,
    token: `token-${rowCounter}-${randomBytes(8).toString('hex')}`,
    filename: `file-${rowCounter}.bin`,
    size: blob.size,
    content_type: 'application/octet-stream',
    sha256: blob.sha256,
    storage_key: blob.key,
    created_at: Date.now(),
  })
}

/** `store` with some of its methods replaced. */
function overriding(store: Store, overrides: Partial<Store>): Store {
  return {
    createResumable: () => store.createResumable(),
    append: (state, offset, source, options) => store.append(state, offset, source, options),
    completeResumable: (state, options) => store.completeResumable(state, options),
    abortResumable: (state) => store.abortResumable(state),
    listResumableLeftovers: () => store.listResumableLeftovers(),
    removeResumableLeftover: (id) => store.removeResumableLeftover(id),
    put: (source, options) => store.put(source, options),
    get: (key, range) => store.get(key, range),
    delete: (key) => store.delete(key),
    list: () => store.list(),
    listUnfinishedWrites: () => store.listUnfinishedWrites(),
    removeUnfinishedWrite: (id) => store.removeUnfinishedWrite(id),
    check: () => store.check(),
    close: () => store.close(),
    ...overrides,
  }
}

const put = (store: BlobStore, size: number) => store.put(chunkedSource(randomBytes(size)), { maxBytes: size })

/** The owner of the setup's uploads, with room for them. */
const ownerOf = (setup: Setup): Owner => ({ accountId: setup.accountId, limits: { maxFileSize: 1024 ** 3, dailyUploads: 100 } })

/** A resumable upload of `length` bytes holding the first `sent` of `content`. */
async function openUpload(setup: Setup, content: Buffer, sent: number, uploads = setup.uploads) {
  const upload = await uploads.create(ownerOf(setup), { length: content.length, metadata: '', filename: 'paused.bin' })
  await uploads.append(ownerOf(setup), upload.id, { offset: 0, source: chunkedSource(content.subarray(0, sent)) })
  return upload
}

/** Sends the rest of `content` and checks that the file it becomes is exactly `content`. */
async function finishAndCheck(setup: Setup, id: string, content: Buffer, sent: number) {
  const { upload } = await setup.uploads.append(ownerOf(setup), id, { offset: sent, source: chunkedSource(content.subarray(sent)) })
  expect(upload.file).toMatchObject({ size: content.length, sha256: createHash('sha256').update(content).digest('hex') })
  expect((await readAll(await setup.store.get(upload.file!.storage_key))).equals(content)).toBe(true)
}

const uploadsToday = async (setup: Setup) => (await new AccountsRepository(setup.handle.db).findById(setup.accountId))!.uploads_today

/** A service whose clock the test moves, with a one-minute expiry. */
function shortLivedUploads(setup: Setup) {
  let offset = 0
  const now = () => Date.now() + offset
  const uploads = new ResumableUploadService(
    new UploadsRepository(setup.handle.db),
    new AccountsRepository(setup.handle.db),
    new FilesRepository(setup.handle.db),
    setup.store,
    { expiryMs: 60_000 },
    undefined,
    now,
  )
  return { uploads, now, advance: (ms: number) => void (offset += ms) }
}

describe('GarbageCollector on a folder store and SQLite', () => {
  let setup: Awaited<ReturnType<typeof embeddedSetup>>
  const errors: unknown[] = []
  const collector = (now = Date.now) =>
    new GarbageCollector(setup.files, setup.links, setup.store, setup.uploads, (error) => errors.push(error), now)

  /** Makes a blob look written `ageMs` ago. */
  async function age(key: string, ageMs: number) {
    const when = new Date(Date.now() - ageMs)
    await fs.utimes(path.join(setup.root, 'objects', key.slice(0, 2), key), when, when)
  }
  /** Leaves a temp file as a put killed mid-way does, written `ageMs` ago. */
  async function leftover(size: number, ageMs: number): Promise<string> {
    const name = `${randomBytes(16).toString('hex')}.part`
    const file = path.join(setup.root, 'tmp', name)
    await fs.writeFile(file, randomBytes(size))
    const when = new Date(Date.now() - ageMs)
    await fs.utimes(file, when, when)
    return name
  }

  beforeEach(async () => {
    setup = await embeddedSetup()
    errors.length = 0
  })
  afterEach(async () => {
    await setup.close()
  })

  it('removes old unreferenced blobs and old leftovers; keeps every referenced blob and everything within the grace period', async () => {
    const referencedOld = await put(setup.store, 100)
    const referencedNew = await put(setup.store, 200)
    for (const blob of [referencedOld, referencedNew]) await addRow(setup, blob)
    await age(referencedOld.key, 30 * 24 * HOUR)
    const orphanOld = await put(setup.store, 300)
    await age(orphanOld.key, GRACE + 60_000)
    const orphanYoung = await put(setup.store, 400) // maybe an upload whose row is about to commit
    await age(orphanYoung.key, GRACE - 60_000)
    const oldLeftover = await leftover(50, 2 * GRACE)
    const youngLeftover = await leftover(60, 60_000) // maybe an upload still arriving

    const report = await collector().collect({ graceMs: GRACE })
    expect(report).toEqual<GarbageCollectionReport>({
      dryRun: false,
      graceMs: GRACE,
      blobsScanned: 4,
      blobsRemoved: 1,
      blobBytesRemoved: 300,
      recentBlobsKept: 2,
      unfinishedWritesRemoved: 1,
      unfinishedWriteBytesRemoved: 50,
      recentUnfinishedWritesKept: 1,
      uploadsExpired: 0,
      filesExpired: 0,
      expiredFileBytesRemoved: 0,
      revokedLinksRemoved: 0,
      grantsRemoved: 0,
      reservationsReleased: 0,
      idempotencyKeysRemoved: 0,
      auditEventsRemoved: 0,
      webhookMessagesRemoved: 0,
      openUploadWritesKept: 0,
      bytesFreed: 350,
      failures: 0,
      interrupted: false,
    })
    expect(await listKeys(setup.store)).toEqual([referencedOld.key, referencedNew.key, orphanYoung.key].sort())
    expect((await listUnfinished(setup.store)).map((write) => write.id)).toEqual([youngLeftover])
    expect(await fs.readdir(path.join(setup.root, 'tmp'))).not.toContain(oldLeftover)
    expect(errors).toEqual([])

    // A second sweep finds nothing more to do.
    expect(await collector().collect({ graceMs: GRACE })).toMatchObject({ blobsRemoved: 0, unfinishedWritesRemoved: 0, bytesFreed: 0 })
  })

  it('a dry run reports the same and removes nothing', async () => {
    const orphan = await put(setup.store, 123)
    await age(orphan.key, 2 * GRACE)
    await leftover(7, 2 * GRACE)
    const report = await collector().collect({ graceMs: GRACE, dryRun: true })
    expect(report).toMatchObject({ dryRun: true, blobsRemoved: 1, blobBytesRemoved: 123, unfinishedWritesRemoved: 1, bytesFreed: 130 })
    expect(await listKeys(setup.store)).toEqual([orphan.key])
    expect(await listUnfinished(setup.store)).toHaveLength(1)
  })

  it('grace 0 removes every unreferenced blob and leftover, and still no referenced blob', async () => {
    const kept = await put(setup.store, 10)
    await addRow(setup, kept)
    await put(setup.store, 20)
    await leftover(5, 0)
    // The clock a moment ahead, so that "written just now" is not "after the cutoff".
    const report = await collector(() => Date.now() + 1_000).collect({ graceMs: 0 })
    expect(report).toMatchObject({ blobsRemoved: 1, unfinishedWritesRemoved: 1, recentBlobsKept: 0, recentUnfinishedWritesKept: 0 })
    expect(await listKeys(setup.store)).toEqual([kept.key])
    expect(await listUnfinished(setup.store)).toEqual([])
  })

  it('judges more blobs than one batch, and keeps exactly the referenced ones', async () => {
    const blobs = await Promise.all(Array.from({ length: 510 }, () => put(setup.store, 1)))
    const referenced = blobs.filter((_, i) => i % 3 === 0)
    for (const blob of referenced) await addRow(setup, blob)
    const report = await collector(() => Date.now() + 2 * GRACE).collect({ graceMs: GRACE })
    expect(report).toMatchObject({ blobsScanned: 510, blobsRemoved: 510 - referenced.length, blobBytesRemoved: 510 - referenced.length })
    expect(await listKeys(setup.store)).toEqual(referenced.map((blob) => blob.key).sort())
  })

  it('a removal that fails is counted and reported; the others go on', async () => {
    const blobs = await Promise.all(Array.from({ length: 5 }, () => put(setup.store, 10)))
    const failing = blobs[2]!.key
    const flaky = overriding(setup.store, {
      delete: async (key) => (key === failing ? Promise.reject(new Error('disk says no')) : setup.store.delete(key)),
    })
    const report = await new GarbageCollector(
      setup.files,
      setup.links,
      flaky,
      setup.uploads,
      (error) => errors.push(error),
      () => Date.now() + 2 * GRACE,
    ).collect({
      graceMs: GRACE,
    })
    expect(report).toMatchObject({ blobsRemoved: 4, blobBytesRemoved: 40, failures: 1 })
    expect(errors).toEqual([new Error('disk says no')])
    expect(await listKeys(setup.store)).toEqual([failing])
  })

  it('an aborted signal stops the sweep before it removes anything more', async () => {
    await put(setup.store, 10)
    const stop = new AbortController()
    stop.abort()
    const report = await collector(() => Date.now() + 2 * GRACE).collect({ graceMs: GRACE, signal: stop.signal })
    expect(report).toMatchObject({ interrupted: true, blobsRemoved: 0 })
    expect(await listKeys(setup.store)).toHaveLength(1)
  })

  it('a blob whose row commits during the sweep is never removed', async () => {
    // Every listed blob is old; rows for the second half commit while the sweep runs, before their batch is judged.
    const blobs = await Promise.all(Array.from({ length: 20 }, () => put(setup.store, 1)))
    const late = new Set(blobs.slice(10).map((blob) => blob.key))
    const committing = overriding(setup.store, {
      async *list() {
        for await (const entry of setup.store.list()) yield entry
        for (const blob of blobs) if (late.has(blob.key)) await addRow(setup, blob)
      },
    })
    const report = await new GarbageCollector(
      setup.files,
      setup.links,
      committing,
      setup.uploads,
      undefined,
      () => Date.now() + 2 * GRACE,
    ).collect({
      graceMs: GRACE,
    })
    expect(report.blobsRemoved).toBe(10)
    expect(await listKeys(setup.store)).toEqual([...late].sort())
  })

  it('keeps the bytes of an open upload idle for longer than the grace period: its file under resumable/', async () => {
    const content = randomBytes(3000)
    const upload = await openUpload(setup, content, 1000)
    const [name] = await fs.readdir(path.join(setup.root, 'resumable'))
    expect(name).toBeDefined()
    const when = new Date(Date.now() - 3 * GRACE)
    await fs.utimes(path.join(setup.root, 'resumable', name!), when, when)

    const report = await collector(() => Date.now() + 2 * GRACE).collect({ graceMs: GRACE })
    expect(report).toMatchObject({ uploadsExpired: 0, openUploadWritesKept: 1, unfinishedWritesRemoved: 0, bytesFreed: 0, failures: 0 })
    expect(await fs.readdir(path.join(setup.root, 'resumable'))).toEqual([name])
    expect((await fs.stat(path.join(setup.root, 'resumable', name!))).size).toBe(1000)
    await finishAndCheck(setup, upload.id, content, 1000)
    // Completed, the upload's file is a blob like any other: referenced, it stays.
    expect(await collector(() => Date.now() + 2 * GRACE).collect({ graceMs: GRACE })).toMatchObject({ blobsRemoved: 0, bytesFreed: 0 })
    expect(await fs.readdir(path.join(setup.root, 'resumable'))).toEqual([])
    expect(errors).toEqual([])
  })

  it("removes an expired upload's bytes and gives its daily slot back; the upload then answers 410", async () => {
    const clock = shortLivedUploads(setup)
    const upload = await openUpload(setup, randomBytes(500), 200, clock.uploads)
    const kept = await openUpload(setup, randomBytes(500), 100, clock.uploads)
    expect(await uploadsToday(setup)).toBe(2)
    clock.advance(30_000)
    // The second one is written to again: its expiry moves.
    await clock.uploads.append(ownerOf(setup), kept.id, { offset: 100, source: chunkedSource(randomBytes(100)) })
    expect(await fs.readdir(path.join(setup.root, 'resumable'))).toHaveLength(2)

    clock.advance(40_000)
    const report = await new GarbageCollector(
      setup.files,
      setup.links,
      setup.store,
      clock.uploads,
      (error) => errors.push(error),
      clock.now,
    ).collect({
      graceMs: GRACE,
    })
    expect(report).toMatchObject({ uploadsExpired: 1, openUploadWritesKept: 0, failures: 0 })
    expect(await fs.readdir(path.join(setup.root, 'resumable'))).toHaveLength(1)
    expect(await uploadsToday(setup)).toBe(1)
    await expect(clock.uploads.status(setup.accountId, upload.id)).rejects.toBeInstanceOf(UploadExpiredError)
    expect((await clock.uploads.status(setup.accountId, kept.id)).offset).toBe(200)
    // A second sweep expires nothing more and gives no slot back twice.
    expect(
      (await new GarbageCollector(setup.files, setup.links, setup.store, clock.uploads, undefined, clock.now).collect({ graceMs: GRACE }))
        .uploadsExpired,
    ).toBe(0)
    expect(await uploadsToday(setup)).toBe(1)
    expect(errors).toEqual([])
  })
})

const postgresReachable = await isPostgresReachable()
if (!postgresReachable)
  console.warn(`SKIPPING the PostgreSQL + S3 part of test/services/garbage-collector.test.ts: no PostgreSQL at ${PG_URL}.`)

describe.skipIf(!postgresReachable)('GarbageCollector on S3 (s3rver) and PostgreSQL', () => {
  it('removes unreferenced objects and aborts open multipart uploads, keeping referenced objects', async () => {
    const [schema, s3] = await Promise.all([createPgSchema(), startS3rver('fileshare-gc')])
    const handle = openPostgres(PG_URL, { searchPath: schema })
    const client = new S3Client({ region: 'us-east-1', endpoint: s3.endpoint, forcePathStyle: true, credentials: S3RVER_CREDENTIALS })
    try {
      await migrateToLatest(handle)
      const store = new S3BlobStore(client, { bucket: s3.bucket, prefix: 'blobs/', partSize: 5 * 1024 * 1024, queueSize: 2 })
      const { id } = await new AccountsRepository(handle.db).create('gc@example.test', 'pro', Date.now())
      const setup: Setup = {
        handle,
        store,
        files: new FilesRepository(handle.db),
        links: new LinksRepository(handle.db),
        uploads: resumableUploads(handle, store),
        accountId: id,
        close: async () => {},
      }
      const kept = await put(store, 1000)
      await addRow(setup, kept)
      await put(store, 2000) // no row: an orphan
      const key = `blobs/${randomBytes(16).toString('hex')}`
      const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket: s3.bucket, Key: key }))
      await client.send(new UploadPartCommand({ Bucket: s3.bucket, Key: key, UploadId, PartNumber: 1, Body: randomBytes(500) }))

      // Within the grace period nothing goes.
      expect(await new GarbageCollector(setup.files, setup.links, store, setup.uploads).collect({ graceMs: GRACE })).toMatchObject({
        blobsScanned: 2,
        recentBlobsKept: 2,
        recentUnfinishedWritesKept: 1,
        bytesFreed: 0,
      })
      const report = await new GarbageCollector(
        setup.files,
        setup.links,
        store,
        setup.uploads,
        undefined,
        () => Date.now() + 2 * GRACE,
      ).collect({
        graceMs: GRACE,
      })
      expect(report).toMatchObject({
        blobsRemoved: 1,
        blobBytesRemoved: 2000,
        unfinishedWritesRemoved: 1,
        unfinishedWriteBytesRemoved: 500,
      })
      expect(await listKeys(store)).toEqual([kept.key])
      expect(await s3.multipartUploadsInProgress()).toEqual([])
      expect((await readAll(await store.get(kept.key))).length).toBe(1000)
    } finally {
      client.destroy()
      await handle.db.destroy()
      await Promise.all([dropPgSchema(schema), s3.close()])
    }
  })
})

describe.skipIf(!postgresReachable)('GarbageCollector and resumable uploads on S3 (s3rver) and PostgreSQL', () => {
  let setup: Setup & { s3: Awaited<ReturnType<typeof startS3rver>>; client: S3Client; bucket: string }
  beforeEach(async () => {
    const [schema, s3] = await Promise.all([createPgSchema(), startS3rver('fileshare-gc')])
    const handle = openPostgres(PG_URL, { searchPath: schema })
    const client = new S3Client({ region: 'us-east-1', endpoint: s3.endpoint, forcePathStyle: true, credentials: S3RVER_CREDENTIALS })
    await migrateToLatest(handle)
    const store = new S3BlobStore(client, { bucket: s3.bucket, prefix: 'blobs/', partSize: 5 * 1024 * 1024, queueSize: 2 })
    const { id } = await new AccountsRepository(handle.db).create('gc@example.test', 'pro', Date.now())
    setup = {
      handle,
      store,
      s3,
      client,
      bucket: s3.bucket,
      files: new FilesRepository(handle.db),
      links: new LinksRepository(handle.db),
      uploads: resumableUploads(handle, store),
      accountId: id,
      async close() {
        client.destroy()
        await handle.db.destroy()
        await Promise.all([dropPgSchema(schema), s3.close()])
      },
    }
  })
  afterEach(async () => {
    await setup.close()
  })

  it('keeps the multipart upload (with its part) and the tail of an open upload idle for longer than the grace period', async () => {
    const content = randomBytes(5 * 1024 * 1024 + 3000)
    const sent = 5 * 1024 * 1024 + 1000 // one part and a tail of 1000 bytes
    const upload = await openUpload(setup, content, sent)
    expect(await setup.s3.multipartUploadsInProgress()).toHaveLength(1)
    expect(await listLeftovers(setup.store)).toHaveLength(1)

    const report = await new GarbageCollector(
      setup.files,
      setup.links,
      setup.store,
      setup.uploads,
      undefined,
      () => Date.now() + 2 * GRACE,
    ).collect({
      graceMs: GRACE,
    })
    expect(report).toMatchObject({ uploadsExpired: 0, openUploadWritesKept: 2, unfinishedWritesRemoved: 0, bytesFreed: 0, failures: 0 })
    expect(await setup.s3.multipartUploadsInProgress()).toHaveLength(1)
    expect(await listLeftovers(setup.store)).toHaveLength(1)
    await finishAndCheck(setup, upload.id, content, sent)
    expect(await setup.s3.multipartUploadsInProgress()).toEqual([])
    expect(await listLeftovers(setup.store)).toEqual([])
  })

  it("removes an expired upload's multipart upload and tail and gives its daily slot back", async () => {
    const clock = shortLivedUploads(setup)
    const upload = await openUpload(setup, randomBytes(500), 200, clock.uploads)
    expect(await setup.s3.multipartUploadsInProgress()).toHaveLength(1)
    expect(await listLeftovers(setup.store)).toHaveLength(1)
    expect(await uploadsToday(setup)).toBe(1)
    clock.advance(61_000)
    const report = await new GarbageCollector(setup.files, setup.links, setup.store, clock.uploads, undefined, clock.now).collect({
      graceMs: GRACE,
    })
    expect(report).toMatchObject({ uploadsExpired: 1, failures: 0 })
    expect(await setup.s3.multipartUploadsInProgress()).toEqual([])
    expect(await listLeftovers(setup.store)).toEqual([])
    expect(await uploadsToday(setup)).toBe(0)
    await expect(clock.uploads.status(setup.accountId, upload.id)).rejects.toBeInstanceOf(UploadExpiredError)
  })
})
