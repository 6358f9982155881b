import type { Readable } from 'node:stream'
import { FileTooLargeError } from '../errors.js'

/**
 * Where a resumable write stands, as the store left it at a commit. `state` is opaque outside the
 * store: the caller keeps it (with `offset`) and hands it back on the next call, in any process.
 */
export interface ResumableCommit {
  /** Bytes the upload durably holds. */
  offset: number
  state: string
}

export interface AppendOptions {
  /** The most bytes the whole upload may hold: the first byte over it rejects with FileTooLargeError. */
  maxBytes: number
  /**
   * Called at each durable point, in order, with the new offset and state. The caller records them
   * (the next append starts from what it recorded) and resolves; the store then drops what the
   * previous state needed and no longer does. A commit that throws stops the append, which rejects
   * with that error; it may still have been recorded (a database that stopped answering can apply
   * it after the caller gave up), so the store keeps what either state needs: the next append may
   * start from either, and completion or abort removes what is left over.
   */
  onCommit(commit: ResumableCommit): Promise<void>
  /**
   * Sees each byte the store takes, once and in order, before the commit that covers it: a commit
   * at offset X comes when exactly X - committedOffset bytes went through here. A hash fed here and
   * saved in onCommit therefore always matches the committed bytes (one fed before the store, in
   * the stream, would run ahead of them).
   */
  onData?(chunk: Buffer): void
  /**
   * true (the default): commit along the way and, when the source fails (a cut connection), the
   * bytes received before the cut. false: commit once, after the source has ended, so the caller
   * can refuse the whole append in that last onCommit (a checksum that does not match); a cut then
   * keeps nothing of this append.
   */
  partialCommits?: boolean
  /**
   * Where a stalled writer may still be running when another takes over (several processes, a
   * lease that expired): gives each new S3 part its number, higher than any before and never the
   * same twice for one upload (a fenced counter of the caller), so that the stalled writer cannot
   * overwrite a part the other one commits. Without it, numbers follow the state. The folder store
   * has no parts and does not call it.
   */
  reservePartNumber?: () => Promise<number>
}

export interface CompleteOptions {
  /** As in AppendOptions: the S3 store turns its tail into one last part. */
  reservePartNumber?: () => Promise<number>
}

/** What a resumable write that was never completed or aborted left behind, for garbage collection. */
export interface ResumableLeftover {
  /** Names it for removeResumableLeftover; means nothing outside the store. */
  id: string
  /** The key of the blob whose upload it belongs to (see createResumable). */
  key: string
  lastWrittenAt: Date
  size: number
}

/**
 * Writes a blob over many requests (tus): bytes are appended at the committed offset, then the
 * upload is completed into a blob that `get(key)` serves, or aborted. Memory stays bounded
 * whatever the file or chunk size. Callers must not run two appends on one upload at once.
 * Implementations must pass test/helpers/resumable-store-contract.ts.
 */
export interface ResumableBlobStore {
  /** Starts an empty upload. `key` is the blob's key once completed. */
  createResumable(): Promise<{ key: string; state: string }>
  /**
   * Streams `source` onto the upload at `committedOffset`, the offset of the last commit the caller
   * recorded, with its `state`. Whatever an earlier append wrote past that offset (a crash between
   * writing and committing) is dropped first. Resolves with the last commit (or the given one when
   * the source was empty). Rejects with the source's error, FileTooLargeError, or the store's
   * error; the commits made before stay valid and a later append continues from the last one.
   */
  append(state: string, committedOffset: number, source: Readable, options: AppendOptions): Promise<ResumableCommit>
  /**
   * Turns the committed bytes into the blob `key`, with the durability of put. Idempotent: a
   * second call (after a crash, say) resolves too.
   */
  completeResumable(state: string, options?: CompleteOptions): Promise<{ key: string; size: number }>
  /** Removes every byte of an upload that will not be completed; aborting twice is not an error. */
  abortResumable(state: string): Promise<void>
  /**
   * What resumable writes keep on the side: the folder store's upload files, the S3 store's tail
   * objects. Open uploads show here too, and so do the remains of a superseded state until their
   * upload is completed or aborted: callers skip the keys of open uploads. On S3 the multipart
   * upload itself is listed by BlobStore.listUnfinishedWrites (it is one), not here; callers skip
   * open uploads' keys there too.
   */
  listResumableLeftovers(): AsyncIterable<ResumableLeftover>
  /** Removes one leftover; removing one that is gone, or an id that is none, is not an error. */
  removeResumableLeftover(id: string): Promise<void>
}

/**
 * Hands each chunk of `source` to `write`, one at a time, for an upload that holds `offset` bytes
 * before it. Rejects with FileTooLargeError before a chunk that would carry the upload past
 * `maxBytes`, and with the error of `write`. Resolves at the end of the source, or with the
 * source's error when the source itself failed (a cut connection), so that the caller can still
 * commit what it received before throwing it.
 */
export async function forEachChunk(
  source: Readable,
  offset: number,
  maxBytes: number,
  write: (chunk: Buffer) => Promise<void>,
): Promise<{ sourceError?: unknown }> {
  let total = offset
  // Not destroyed when we stop early: the caller's error reply may still need the connection.
  const chunks = source.iterator({ destroyOnReturn: false }) as AsyncIterator<Buffer | string>
  for (;;) {
    let next: IteratorResult<Buffer | string>
    try {
      next = await chunks.next()
    } catch (error) {
      return { sourceError: error }
    }
    if (next.done) return {}
    const chunk = typeof next.value === 'string' ? Buffer.from(next.value) : next.value
    try {
      if (total + chunk.length > maxBytes) throw new FileTooLargeError(maxBytes)
      await write(chunk)
    } catch (error) {
      await chunks.return?.()
      source.resume() // let the rest drain, as put does
      throw error
    }
    total += chunk.length
  }
}
