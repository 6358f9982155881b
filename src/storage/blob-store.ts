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
  /** When its bytes were last written. */
  modifiedAt: Date
  size: number
}

/**
 * What a write that never finished (a crash, a kill -9 mid-upload) left behind: a temporary file
 * of the folder store, an open multipart upload of the S3 store. It holds no blob anyone can read.
 */
export interface UnfinishedWrite {
  /** Names it for removeUnfinishedWrite; means nothing outside the store. */
  id: string
  /** The last time bytes reached it: a write still in progress keeps this recent. */
  lastWrittenAt: Date
  /** Bytes it holds. */
  size: number
  /**
   * The blob key it was writing, when the store knows it (an S3 multipart upload): a resumable
   * upload's multipart upload is one of these, and callers skip the keys of uploads still open.
   */
  key?: string
}

/**
 * Where file bytes live. Knows nothing of accounts or HTTP; keys are chosen by the store.
 * Implementations must pass test/helpers/blob-store-contract.ts.
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
  /** Every stored blob, for garbage collection. Leftovers of unfinished writes are not blobs. */
  list(): AsyncIterable<BlobEntry>
  /**
   * Leftovers of writes that never finished, for garbage collection. A put still running shows
   * here too, with a recent lastWrittenAt: callers judge by age.
   */
  listUnfinishedWrites(): AsyncIterable<UnfinishedWrite>
  /** Removes one leftover of listUnfinishedWrites; removing one that is gone is not an error. */
  removeUnfinishedWrite(id: string): Promise<void>
  /** Resolves when the store can be written and read; rejects otherwise. */
  check(): Promise<void>
  /** Releases what the store holds open (connections); the store is not used afterwards. */
  close(): Promise<void>
}
