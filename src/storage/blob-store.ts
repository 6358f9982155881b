import type { Readable } from 'node:stream'

export interface StoredBlob {
  key: string
  size: number
  /** Lower-case hex SHA-256 of the content. */
  sha256: string
}

/** Inclusive byte range, as in an HTTP Range header. */
export interface ByteRange {
  start: number
  end: number
}

export interface BlobEntry {
  key: string
  modifiedAt: Date
}

/**
 * Where file bytes live. Knows nothing of accounts or HTTP; keys are chosen by the store.
 * Implementations must pass test/storage/blob-store-contract.ts.
 */
export interface BlobStore {
  /**
   * Streams `source` into a new blob and resolves once the bytes are durable. Rejects with
   * FileTooLargeError at the first byte past `maxBytes`, or with the source's error; either way
   * nothing is left behind.
   */
  put(source: Readable, options: { maxBytes: number }): Promise<StoredBlob>
  /** A stream of the blob's bytes (or of one range). Rejects with BlobNotFoundError. */
  get(key: string, range?: ByteRange): Promise<Readable>
  /** Removes the blob; removing a missing blob is not an error. */
  delete(key: string): Promise<void>
  /** Every stored blob, for garbage collection. */
  list(): AsyncIterable<BlobEntry>
  /** Resolves when the store can be written and read; rejects otherwise. */
  check(): Promise<void>
}
