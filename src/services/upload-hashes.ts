import { createHash, type Hash } from 'node:crypto'

/** Uploads whose hash one process keeps at most; a node:crypto SHA-256 state is a few hundred bytes. */
export const UPLOAD_HASHES_CAP = 10_000

interface KeptHash {
  /** The SHA-256 of exactly the upload's first `offset` bytes; never updated in place. */
  hash: Hash
  offset: number
}

/**
 * The SHA-256 of each resumable upload this process wrote, kept between its PATCHes in memory, as
 * node:crypto cannot save a hash's state (it hashes about six times faster than hash-wasm, which can: 1.65 GiB/s against 280 MiB/s of CPU here).
 * An entry is only ever replaced by a copy taken at a durable commit of this process, so it always
 * matches the committed bytes it names; a writer works on a copy of its own, so that two requests
 * of one process (a stalled writer and its successor) never feed the same hash. Bounded: the least
 * recently committed entries go past `cap`; an upload whose entry is gone is hashed from the store
 * once at completion (ResumableUploadService).
 */
export class UploadHashes {
  /** In order of last commit, oldest first (a Map keeps insertion order). */
  private readonly entries = new Map<string, KeptHash>()

  constructor(private readonly cap = UPLOAD_HASHES_CAP) {}

  /**
   * A hash of the upload's first `offset` bytes for a writer to go on with: a new one at offset 0,
   * a copy of the kept one at its offset, undefined when this process does not know those bytes.
   */
  resume(id: string, offset: number): Hash | undefined {
    if (offset === 0) return createHash('sha256')
    const kept = this.entries.get(id)
    return kept?.offset === offset ? kept.hash.copy() : undefined
  }

  /**
   * Keeps a copy of `hash`, the SHA-256 of the upload's first `offset` bytes, once they are
   * committed. An entry further on (a later commit that a slower one overtook) stays.
   */
  keep(id: string, offset: number, hash: Hash): void {
    const kept = this.entries.get(id)
    if (kept && kept.offset > offset) return
    this.entries.delete(id)
    this.entries.set(id, { hash: hash.copy(), offset })
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= this.cap) break
      this.entries.delete(oldest)
    }
  }

  /** The hex SHA-256 of the upload's first `offset` bytes when this process knows it; the entry stays (a completion may fail and be retried). */
  digest(id: string, offset: number): string | undefined {
    return this.resume(id, offset)?.digest('hex')
  }

  forget(id: string): void {
    this.entries.delete(id)
  }

  get size(): number {
    return this.entries.size
  }
}
