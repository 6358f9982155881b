import { Transform, type Readable } from 'node:stream'
import { StorageQuotaExceededError } from '../errors.js'
import type { StorageReservationsRepository } from '../db/repositories/storage-reservations-repository.js'
import { randomToken } from '../lib/random-token.js'

/** A multipart upload's reservation lives this long past its holder's last sign of life. */
export const RESERVATION_LEASE_MS = 5 * 60_000
/** How often a running upload renews its reservation's lease. */
const RENEW_EVERY_MS = 60_000
/** A body of unknown length reserves in steps of this much, not once per chunk. */
const RESERVATION_STEP = 8 * 1024 * 1024

/**
 * The bytes one multipart upload holds against its account's storage quota while it runs
 * (../shared/spec/api-semantics.md, Storage quotas): the declared size up front, or, without one,
 * growing with the bytes as they stream. The upload's record takes it over (commit) or it is given
 * back; a holder that dies stops renewing it and the collector gives it back.
 */
export class UploadReservation {
  reserved = 0
  private readonly renewal: NodeJS.Timeout
  private released = false

  constructor(
    private readonly reservations: StorageReservationsRepository,
    readonly id: string,
    readonly accountId: number,
    private readonly quota: number | null,
    private readonly now: () => number,
    private readonly onBackgroundError: (error: unknown) => void,
  ) {
    this.renewal = setInterval(() => {
      this.reservations.extend(this.id, this.now() + RESERVATION_LEASE_MS).catch(this.onBackgroundError)
    }, RENEW_EVERY_MS)
    this.renewal.unref()
  }

  /** Reserves `bytes` more; refuses with 403 storage_quota_exceeded when the quota has no room. */
  async grow(bytes: number): Promise<void> {
    if (bytes <= 0) return
    const room = await this.reservations.reserve(
      { id: this.id, accountId: this.accountId, expiresAt: this.now() + RESERVATION_LEASE_MS },
      bytes,
      this.quota,
    )
    if (!room) throw new StorageQuotaExceededError(this.quota ?? 0)
    this.reserved += bytes
  }

  /**
   * `source` with its bytes reserved before they pass: in steps while there is room, then exactly
   * what each chunk needs, so that an upload that fits is never refused for a step.
   */
  meter(source: Readable): Readable {
    let seen = 0
    const metered = new Transform({
      transform: (chunk: Buffer, _encoding, done) => {
        seen += chunk.length
        const missing = seen - this.reserved
        if (missing <= 0) return done(null, chunk)
        this.grow(Math.max(missing, RESERVATION_STEP))
          .catch((error: unknown) => {
            // Only "does not fit" is worth a smaller try: a database that failed would fail (and wait) again.
            if (error instanceof StorageQuotaExceededError) return this.grow(missing)
            throw error
          })
          .then(
            () => done(null, chunk),
            (error: unknown) => done(error as Error),
          )
      },
    })
    source.on('error', (error) => metered.destroy(error))
    // The store may attach to `metered` only after an await of its own: a client gone before then
    // must not make an 'error' no one listens to (Node would end the process); the store still
    // sees it, as `metered` is destroyed with it.
    metered.on('error', () => {})
    return source.pipe(metered)
  }

  /** Stops renewing: the upload's record took the reservation over, or it was given back. */
  settle(): void {
    clearInterval(this.renewal)
    this.released = true
  }

  /** Gives the reserved bytes back (an upload that failed or was refused). */
  async release(): Promise<void> {
    if (this.released) return
    this.settle()
    await this.reservations.release(this.id)
  }
}

export class StorageQuota {
  constructor(
    private readonly reservations: StorageReservationsRepository,
    private readonly now: () => number = Date.now,
    private readonly onBackgroundError: (error: unknown) => void = () => {},
  ) {}

  /**
   * Opens the reservation of a multipart upload. With a declared size, `declared.upTo` (the whole
   * body) is reserved at once, or, when that does not fit, `declared.atLeast` (the least the file
   * can be) and the rest as the bytes come: an upload that cannot fit is refused before its body is
   * read, and one that just fits is not refused for the framing around it.
   */
  async open(accountId: number, quota: number | null, declared?: { upTo: number; atLeast: number }): Promise<UploadReservation> {
    const reservation = new UploadReservation(this.reservations, randomToken(16), accountId, quota, this.now, this.onBackgroundError)
    try {
      if (declared)
        await reservation.grow(declared.upTo).catch((error: unknown) => {
          if (error instanceof StorageQuotaExceededError) return reservation.grow(declared.atLeast)
          throw error
        })
    } catch (error) {
      reservation.settle()
      throw error
    }
    return reservation
  }

  /** Gives back the reservations whose holders died (the collector's sweep). */
  releaseAbandoned(): Promise<number> {
    return this.reservations.releaseExpired(this.now())
  }
}
