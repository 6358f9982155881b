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

  /**
   * Opens the bytes to send (the whole file, or one range) and counts the download when they start
   * at the first byte: a resumed or seeking client does not count again, a ranged first read does.
   */
  async open(file: FileRow, range?: ByteRange): Promise<Readable> {
    let body: Readable
    try {
      body = await this.store.get(file.storage_key, range)
    } catch (error) {
      if (error instanceof BlobNotFoundError) throw new NotFoundError('No file behind this link.')
      throw error
    }
    if (!range || range.start === 0) {
      try {
        await this.files.countDownload(file)
      } catch (error) {
        body.destroy()
        throw error
      }
    }
    return body
  }
}
