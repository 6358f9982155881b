import { createHash, randomBytes } from 'node:crypto'
import fs from 'node:fs/promises'
import path from 'node:path'
import { Readable } from 'node:stream'
import { setTimeout as sleep } from 'node:timers/promises'
import { S3Client } from '@aws-sdk/client-s3'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { openPostgres, openSqlite, type DatabaseHandle } from '../../src/db/dialect.js'
import { migrateToLatest } from '../../src/db/migrate.js'
import { AccountsRepository } from '../../src/db/repositories/accounts-repository.js'
import { FilesRepository } from '../../src/db/repositories/files-repository.js'
import { UploadsRepository } from '../../src/db/repositories/uploads-repository.js'
import { ChecksumMismatchError, ServiceUnavailableError } from '../../src/errors.js'
import type { Owner } from '../../src/services/files.js'
import { ResumableUploadService } from '../../src/services/resumable-uploads.js'
import { UploadHashes } from '../../src/services/upload-hashes.js'
import type { BlobStore } from '../../src/storage/blob-store.js'
import { FsBlobStore } from '../../src/storage/fs-blob-store.js'
import type { ResumableBlobStore } from '../../src/storage/resumable.js'
import { S3BlobStore } from '../../src/storage/s3-blob-store.js'
import { chunkedSource, readAll } from '../helpers/blob-store-contract.js'
import { createPgSchema, dropPgSchema, isPostgresReachable, PG_URL, S3RVER_CREDENTIALS, startS3rver } from '../helpers/scale-out-env.js'
import { makeTempDir } from '../helpers/test-app.js'

/**
 * The SHA-256 a resumable upload records is the file's on every path: hashed as the bytes arrive
 * and kept in the writer's memory (UploadHashes), or, when that hash is not where the upload is
 * (another process, a restart), read back from the store once at completion. Each case counts the
 * store's reads to show which path it took.
 */

const KIB = 1024
const MIB = 1024 * KIB
type Store = BlobStore & ResumableBlobStore
const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex')

/** A client that sends `before` as a network does, pauses, and goes away: the store had time to commit what it could. */
function cutSource(before: Buffer): Readable {
  return Readable.from(
    (async function* () {
      for (let offset = 0; offset < before.length; offset += 16 * KIB) yield before.subarray(offset, offset + 16 * KIB)
      await sleep(200)
      throw new Error('cut')
    })(),
  )
}

interface Backend {
  handle: DatabaseHandle
  store: Store
  /** Bytes between two commits of an append: a cut past this many keeps a commit made inside the chunk. */
  commitBytes: number
  close(): Promise<void>
}

async function folderAndSqlite(): Promise<Backend> {
  const dir = await makeTempDir('fileshare-hash-')
  const handle = openSqlite(path.join(dir, 'fileshare.sqlite'))
  await migrateToLatest(handle)
  const commitBytes = 64 * KIB
  return {
    handle,
    store: await new FsBlobStore(path.join(dir, 'blobs'), { resumableCommitBytes: commitBytes }).init(),
    commitBytes,
    async close() {
      await handle.db.destroy()
      await fs.rm(dir, { recursive: true, force: true })
    },
  }
}

async function s3AndPostgres(): Promise<Backend> {
  const [schema, s3] = await Promise.all([createPgSchema(), startS3rver('fileshare-hash')])
  const handle = openPostgres(PG_URL, { searchPath: schema })
  await migrateToLatest(handle)
  const client = new S3Client({ region: 'us-east-1', endpoint: s3.endpoint, forcePathStyle: true, credentials: S3RVER_CREDENTIALS })
  const partSize = 5 * MIB
  return {
    handle,
    store: new S3BlobStore(client, { bucket: s3.bucket, prefix: 'blobs/', partSize, queueSize: 2 }),
    commitBytes: partSize,
    async close() {
      client.destroy()
      await handle.db.destroy()
      await Promise.all([dropPgSchema(schema), s3.close()])
    },
  }
}

const postgresReachable = await isPostgresReachable()
if (!postgresReachable) console.warn(`SKIPPING the S3 + PostgreSQL part of ${import.meta.filename}: no PostgreSQL at ${PG_URL}.`)

const backends = [
  { name: 'a folder store (64 KiB commits) and SQLite', open: folderAndSqlite, skip: false },
  { name: 'S3 (s3rver, 5 MiB parts) and PostgreSQL', open: s3AndPostgres, skip: !postgresReachable },
]

for (const backend of backends) {
  describe.skipIf(backend.skip)(`the SHA-256 of a resumable upload, on ${backend.name}`, () => {
    let b: Backend
    let owner: Owner
    /** Blobs read back from the store: how many completions hashed from the store. */
    let reads: number
    /** Fails the next completions of the store when above 0. */
    let failCompletions: number
    /** Bytes the next read-back stops at without an error (a store that ends short), when set. */
    let shortRead: number | undefined
    /** Fails the next append with 503, as a backend that stopped answering does, when set. */
    let failAppend: boolean
    let store: Store

    beforeEach(async () => {
      b = await backend.open()
      reads = 0
      failCompletions = 0
      shortRead = undefined
      failAppend = false
      const inner = b.store
      // Counts reads and can fail completions; the rest is the real store.
      store = Object.assign(Object.create(inner) as Store, {
        get: async (...args: Parameters<Store['get']>) => {
          reads++
          if (shortRead === undefined) return inner.get(...args)
          const cut = shortRead
          shortRead = undefined
          return Readable.from([(await readAll(await inner.get(...args))).subarray(0, cut)])
        },
        append: (...args: Parameters<Store['append']>) => {
          if (!failAppend) return inner.append(...args)
          failAppend = false
          args[2].resume()
          return Promise.reject(new ServiceUnavailableError('The database is unavailable.'))
        },
        completeResumable: (...args: Parameters<Store['completeResumable']>) => {
          if (failCompletions > 0) {
            failCompletions--
            return Promise.reject(new Error('completion failed'))
          }
          return inner.completeResumable(...args)
        },
      })
      const { id } = await new AccountsRepository(b.handle.db).create('hash@example.test', 'pro', Date.now())
      owner = { accountId: id, limits: { maxFileSize: 1024 ** 3, dailyUploads: 100 } }
    })
    afterEach(async () => {
      await b.close()
    })

    /** A service of its own, as one process has: a second one on the same database and store is another instance. */
    function instance(hashes = new UploadHashes(), now = Date.now, uploads = new UploadsRepository(b.handle.db)) {
      const { db } = b.handle
      return new ResumableUploadService(
        uploads,
        new AccountsRepository(db),
        new FilesRepository(db),
        store,
        { expiryMs: 3_600_000 },
        undefined,
        now,
        undefined,
        undefined,
        undefined,
        undefined,
        hashes,
      )
    }

    async function expectFile(service: ResumableUploadService, id: string, content: Buffer) {
      const upload = await service.status(owner.accountId, id)
      expect(upload.file).toMatchObject({ size: content.length, sha256: sha256(content) })
      expect((await readAll(await b.store.get(upload.file!.storage_key))).equals(content)).toBe(true)
    }

    const create = (service: ResumableUploadService, length: number) =>
      service.create(owner, { length, metadata: '', filename: 'hashed.bin' }).then((upload) => upload.id)
    const send = (service: ResumableUploadService, id: string, content: Buffer, from: number, to = content.length) =>
      service.append(owner, id, { offset: from, source: chunkedSource(content.subarray(from, to)) })

    it('one PATCH: hashed as it arrives, not read back; the entry goes with the completion', async () => {
      const hashes = new UploadHashes()
      const service = instance(hashes)
      const content = randomBytes(b.commitBytes * 2 + 12_345)
      const id = await create(service, content.length)
      const { upload } = await send(service, id, content, 0)
      expect(upload.file?.sha256).toBe(sha256(content))
      expect(reads).toBe(0)
      expect(hashes.size).toBe(0)
      await expectFile(service, id, content)
    })

    it('many PATCHes of uneven sizes, across commit points: hashed as they arrive', async () => {
      const service = instance()
      const sizes = [1, 1000, b.commitBytes - 1, b.commitBytes + 2, 3, b.commitBytes * 2, 77]
      const content = randomBytes(sizes.reduce((sum, size) => sum + size, 0))
      const id = await create(service, content.length)
      let offset = 0
      for (const size of sizes) {
        const { upload } = await send(service, id, content, offset, offset + size)
        offset += size
        expect(upload.offset).toBe(offset)
      }
      expect(reads).toBe(0)
      await expectFile(service, id, content)
    })

    for (const [where, cutAt] of [
      ['before the first commit point', (commitBytes: number) => Math.floor(commitBytes / 3)],
      ['past a commit point', (commitBytes: number) => commitBytes + Math.floor(commitBytes / 3)],
    ] as const) {
      it(`a PATCH cut ${where}, then resumed from the offset the server gives: the kept hash matches it`, async () => {
        const hashes = new UploadHashes()
        const service = instance(hashes)
        const content = randomBytes(b.commitBytes * 3)
        const id = await create(service, content.length)
        const cut = cutAt(b.commitBytes)
        await expect(service.append(owner, id, { offset: 0, source: cutSource(content.subarray(0, cut)) })).rejects.toThrow('cut')
        const { offset } = await service.status(owner.accountId, id)
        expect(offset).toBeLessThanOrEqual(cut)
        // Past a commit point, at least that commit stays.
        if (cut > b.commitBytes) expect(offset).toBeGreaterThanOrEqual(b.commitBytes)
        // Whatever was kept, the hash is at exactly that offset.
        if (offset > 0) expect(hashes.digest(id, offset)).toBe(sha256(content.subarray(0, offset)))
        await send(service, id, content, offset)
        expect(reads).toBe(0)
        await expectFile(service, id, content)
      })
    }

    it('a PATCH on another instance: the hash is lost there, the completion reads the file back once', async () => {
      const a = instance()
      const other = instance()
      const third = b.commitBytes + 99
      const content = randomBytes(third * 3)
      const id = await create(a, content.length)
      await send(a, id, content, 0, third)
      await send(other, id, content, third, 2 * third)
      // Back on the first: its hash stopped at the first third, so it does not hash the rest.
      const { upload } = await send(a, id, content, 2 * third)
      expect(upload.file?.sha256).toBe(sha256(content))
      expect(reads).toBe(1)
      await expectFile(a, id, content)
    })

    it('a read-back that ends short without an error records nothing; the retry reads it whole', async () => {
      const a = instance()
      const other = instance()
      const half = b.commitBytes + 7
      const content = randomBytes(half * 2)
      const id = await create(a, content.length)
      await send(a, id, content, 0, half)
      shortRead = content.length - 1
      await expect(send(other, id, content, half)).rejects.toThrow(/gave \d+ bytes, not its \d+/)
      expect(reads).toBe(1)
      // The next HEAD completes it, reading the whole file this time.
      await expectFile(other, id, content)
      expect(reads).toBe(2)
    })

    it('a restart between PATCHes, and a row of the version that saved hash-wasm states: read back once', async () => {
      const content = randomBytes(b.commitBytes + 5000)
      const id = await create(instance(), content.length)
      await send(instance(), id, content, 0, 4000)
      // What the previous version left in the row: a saved hash-wasm state (it is not resumed).
      await b.handle.db.updateTable('uploads').set({ hash_state: 'EWhhc2gtd2FzbUA0LjEzLjA=' }).where('id', '=', id).execute()
      const restarted = instance()
      await send(restarted, id, content, 4000, 6000)
      expect((await b.handle.db.selectFrom('uploads').select('hash_state').where('id', '=', id).executeTakeFirstOrThrow()).hash_state).toBe(
        '',
      )
      await send(restarted, id, content, 6000)
      expect(reads).toBe(1)
      await expectFile(restarted, id, content)
    })

    it('an evicted entry is a lost hash too: read back once', async () => {
      const hashes = new UploadHashes(1)
      const service = instance(hashes)
      const content = randomBytes(3000)
      const id = await create(service, content.length)
      await send(service, id, content, 0, 1000)
      const otherId = await create(service, 10)
      await send(service, otherId, randomBytes(10), 0, 5)
      await send(service, id, content, 1000)
      expect(reads).toBe(1)
      await expectFile(service, id, content)
    })

    it('a chunk refused for its checksum keeps nothing and leaves the kept hash where it was', async () => {
      const service = instance()
      const content = randomBytes(b.commitBytes + 3000)
      const id = await create(service, content.length)
      await send(service, id, content, 0, 1000)
      const rest = content.subarray(1000)
      const wrong = createHash('sha256').update(Buffer.from('not these bytes')).digest()
      await expect(
        service.append(owner, id, { offset: 1000, source: chunkedSource(rest), checksum: { algorithm: 'sha256', digest: wrong } }),
      ).rejects.toBeInstanceOf(ChecksumMismatchError)
      expect((await service.status(owner.accountId, id)).offset).toBe(1000)
      const right = createHash('sha256').update(rest).digest()
      const { upload } = await service.append(owner, id, {
        offset: 1000,
        source: chunkedSource(rest),
        checksum: { algorithm: 'sha256', digest: right },
      })
      expect(upload.file?.sha256).toBe(sha256(content))
      expect(reads).toBe(0)
    })

    it('a completion that fails is retried with the kept hash (HEAD), or by another instance from the store', async () => {
      const hashes = new UploadHashes()
      const service = instance(hashes)
      const content = randomBytes(5000)
      const id = await create(service, content.length)
      failCompletions = 1
      await expect(send(service, id, content, 0)).rejects.toThrow('completion failed')
      expect(hashes.size).toBe(1)
      await expectFile(service, id, content)
      expect(reads).toBe(0)
      expect(hashes.size).toBe(0)

      const second = await create(service, content.length)
      failCompletions = 1
      await expect(send(service, second, content, 0)).rejects.toThrow('completion failed')
      await expectFile(instance(), second, content)
      expect(reads).toBe(1)
    })

    it('a file row that fails after the file was read back: the retry uses the hash read, not the store again', async () => {
      let failRows = 1
      class FailingUploads extends UploadsRepository {
        override complete(...args: Parameters<UploadsRepository['complete']>) {
          if (failRows-- > 0) return Promise.reject(new Error('file row failed'))
          return super.complete(...args)
        }
      }
      const content = randomBytes(5000)
      const id = await create(instance(), content.length)
      await send(instance(), id, content, 0, 1000)
      const other = instance(new UploadHashes(), Date.now, new FailingUploads(b.handle.db))
      await expect(send(other, id, content, 1000)).rejects.toThrow('file row failed')
      expect(reads).toBe(1)
      await expectFile(other, id, content)
      expect(reads).toBe(1)
    })

    it('a PATCH that fails with 503 answers without waiting for its lease to be released (the database may be what failed)', async () => {
      let releases = 0
      const stalledRelease = Object.assign(Object.create(new UploadsRepository(b.handle.db)) as UploadsRepository, {
        releaseLease: () => {
          releases++
          return new Promise<never>(() => {})
        },
      })
      const service = instance(new UploadHashes(), Date.now, stalledRelease)
      const content = randomBytes(3000)
      const id = await create(service, content.length)
      failAppend = true
      await expect(send(service, id, content, 0)).rejects.toBeInstanceOf(ServiceUnavailableError)
      expect(releases).toBe(1)
    })

    it('termination and expiry drop the kept hash', async () => {
      const hashes = new UploadHashes()
      let clock = Date.now()
      const service = instance(hashes, () => clock)
      const content = randomBytes(2000)
      const terminated = await create(service, content.length)
      await send(service, terminated, content, 0, 1000)
      const expiring = await create(service, content.length)
      await send(service, expiring, content, 0, 1000)
      expect(hashes.size).toBe(2)
      await service.terminate(owner.accountId, terminated)
      expect(hashes.size).toBe(1)
      clock += 2 * 3_600_000
      expect(await service.expireDue()).toBe(1)
      expect(hashes.size).toBe(0)
    })
  })
}
