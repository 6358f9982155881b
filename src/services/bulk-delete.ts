import { NotFoundError } from '../errors.js'
import type { Actor } from './audit.js'

/** The most files one bulk delete takes: a page of the listing at its largest. */
export const MAX_BULK_DELETE = 100

export interface BulkDeleteResult {
  /** The ids deleted by this call, in the order given. */
  deleted: number[]
  /** The ids that name no file of the account (never one, another account's, deleted or expired), in the order given. */
  notFound: number[]
}

/**
 * Deletes several of an account's files, one after the other, each exactly as DELETE /files/{id}
 * does: its row, its audit row and its webhook message in one transaction of its own, then its
 * bytes. So each file is deleted wholly or not at all, and what a failure part-way leaves is plain:
 * the files before it are gone, the rest are not (the call answers the error; sent again, the
 * files already gone come back as not found).
 */
export class BulkDeleteService {
  constructor(private readonly files: { delete(accountId: number, fileId: number, actor: Actor): Promise<void> }) {}

  async deleteMany(accountId: number, fileIds: readonly number[], actor: Actor): Promise<BulkDeleteResult> {
    const result: BulkDeleteResult = { deleted: [], notFound: [] }
    for (const fileId of fileIds) {
      try {
        await this.files.delete(accountId, fileId, actor)
        result.deleted.push(fileId)
      } catch (error) {
        if (!(error instanceof NotFoundError)) throw error
        result.notFound.push(fileId)
      }
    }
    return result
  }
}
