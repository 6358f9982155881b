import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openSqlite, type DatabaseHandle } from '../../src/db/dialect.js'
import { migrateToLatest } from '../../src/db/migrate.js'
import { AccountsRepository } from '../../src/db/repositories/accounts-repository.js'
import { FilesRepository } from '../../src/db/repositories/files-repository.js'
import type { BlobStore } from '../../src/storage/blob-store.js'
import { FileService } from '../../src/services/files.js'
import { ServiceUnavailableError } from '../../src/errors.js'

/**
 * FileService.list reads pages past the middle from the oldest end (and reverses them), so that
 * deep pages do not walk the whole index. Every page must still be exactly its slice of the
 * newest-first order, ties (same upload time) broken by the highest id.
 */
describe('FileService.list pages', () => {
  let handle: DatabaseHandle
  let service: FileService
  let accountId: number
  let newestFirst: number[]

  beforeAll(async () => {
    handle = openSqlite(':memory:')
    await migrateToLatest(handle)
    const accounts = new AccountsRepository(handle.db)
    const files = new FilesRepository(handle.db)
    service = new FileService(files, accounts, {} as BlobStore)
    accountId = (await accounts.create('pages@example.test', 'pro', 0)).id
    const other = (await accounts.create('other@example.test', 'pro', 0)).id
    const rows = []
    for (let i = 0; i < 23; i++) {
      // Times repeat (i % 4), so ties are common; another account's rows sit in between.
      const at = Date.UTC(2025, 0, 1) + (i % 4) * 1000 + Math.floor(i / 8) * 60_000
      rows.push(await files.insert(row(accountId, i, at)))
      if (i % 5 === 0) await files.insert(row(other, 100 + i, at))
    }
    newestFirst = rows.sort((a, b) => b.created_at - a.created_at || b.id - a.id).map((file) => file.id)
  })
  afterAll(() => handle.db.destroy())

  it('gives every page, at every limit, as its slice of the newest-first order', async () => {
    for (let limit = 1; limit <= 24; limit++) {
      const pages = Math.ceil(newestFirst.length / limit)
      for (let page = 1; page <= pages + 1; page++) {
        const { files, total } = await service.list(accountId, page, limit)
        expect(total).toBe(newestFirst.length)
        expect(
          files.map((file) => file.id),
          `page ${page}, limit ${limit}`,
        ).toEqual(newestFirst.slice((page - 1) * limit, page * limit))
      }
    }
  })
})

function row(accountId: number, n: number, createdAt: number) {
  return {
    account_id: accountId,
    token: `token-${accountId}-${n}-padding-padding`,
    filename: `f${n}.bin`,
    size: n,
    content_type: 'application/octet-stream',
    sha256: '0'.repeat(64),
    storage_key: n.toString(16).padStart(32, '0'),
    created_at: createdAt,
  }
}

/**
 * FileService.commit: a failed insert drops the upload's bytes, except when the database stopped
 * answering (503): it may still apply the insert once back, so the bytes stay for the collector,
 * which removes them only if no row names them.
 */
describe('FileService.commit when the insert fails', () => {
  const blob = { key: 'a'.repeat(32), size: 3, sha256: '0'.repeat(64) }

  async function commitFailingWith(error: Error) {
    const deleted: string[] = []
    let released = 0
    const files = { insertTakingUploadSlot: () => Promise.reject(error) } as unknown as FilesRepository
    const store = { delete: async (key: string) => void deleted.push(key) } as unknown as BlobStore
    const service = new FileService(files, {} as AccountsRepository, store)
    const reservation = { id: 1, settle: () => {}, release: async () => void released++ }
    const owner = { accountId: 1, limits: { maxFileSize: 10, dailyUploads: 5 } }
    await expect(service.commit({ owner, blob, filename: 'a.txt', reservation } as never)).rejects.toBe(error)
    return { deleted, released }
  }

  it('keeps the bytes when the database is unavailable (the insert may still land)', async () => {
    expect(await commitFailingWith(new ServiceUnavailableError('The database is unavailable.'))).toEqual({ deleted: [], released: 1 })
  })

  it('drops the bytes on any other failure', async () => {
    expect(await commitFailingWith(new Error('constraint'))).toEqual({ deleted: [blob.key], released: 1 })
  })
})
