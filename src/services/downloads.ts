import type { Readable } from 'node:stream'
import { BlobNotFoundError, NotFoundError } from '../errors.js'
import type { FilesRepository } from '../db/repositories/files-repository.js'
import type { FileRow } from '../db/schema.js'
import type { BlobStore, ByteRange } from '../storage/blob-store.js'

const TOKEN_PATTERN = /^[A-Za-z0-9_-]{16,64}$/

export class DownloadService {
  constructor(
    private readonly files: FilesRepository,
    private readonly store: BlobStore,
  ) {}

  async find(token: string): Promise<FileRow> {
    const file = TOKEN_PATTERN.test(token) ? await this.files.findByToken(token) : undefined
    if (!file) throw new NotFoundError('No file behind this link.')
    return file
  }

  async open(file: FileRow, range?: ByteRange): Promise<Readable> {
    try {
      return await this.store.get(file.storage_key, range)
    } catch (error) {
      if (error instanceof BlobNotFoundError) throw new NotFoundError('No file behind this link.')
      throw error
    }
  }

  /** Counts a download that starts at the first byte. */
  async count(file: FileRow): Promise<void> {
    await this.files.countDownload(file)
  }
}
