import { IdempotencyInProgressError, IdempotencyKeyReusedError, InvalidParameterError } from '../errors.js'
import type { IdempotencyKeysRepository, StoredAnswer } from '../db/repositories/idempotency-keys-repository.js'

/** A key is kept this long from its first request (api-semantics.md). */
export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000
/** A running request's claim lapses this long after its last renewal (its instance died). */
export const IDEMPOTENCY_LEASE_MS = 60_000
/** How often a running request renews its claim. */
export const IDEMPOTENCY_RENEW_MS = 20_000

const KEY_PATTERN = /^[\x20-\x7e]{1,255}$/

/** Refuses a key that is empty, longer than 255 characters or not printable ASCII. */
export function checkIdempotencyKey(key: string): string {
  if (!KEY_PATTERN.test(key)) {
    throw new InvalidParameterError('Idempotency-Key must be 1 to 255 printable ASCII characters.')
  }
  return key
}

/** A request that holds its key while it runs. */
export interface HeldKey {
  accountId: number
  key: string
  /** Stores the answer (2xx) or frees the key (anything else), and stops renewing. */
  finish(answer: StoredAnswer | undefined): Promise<void>
}

/**
 * Safe retries of creating requests: the first request with a key runs, a later one with the same
 * key and fingerprint replays its stored 2xx answer, one that comes while it runs is told to wait.
 */
export class IdempotencyService {
  constructor(
    private readonly keys: IdempotencyKeysRepository,
    private readonly now: () => number = Date.now,
    private readonly onBackgroundError: (error: unknown) => void = () => {},
  ) {}

  /**
   * Starts a request with `key`: the stored answer to replay, or the key held by this request.
   * 409 idempotency_in_progress while another request with it runs; 422 idempotency_key_reused
   * when the key was used for a request with another fingerprint.
   */
  /**
   * `scope`: a caller inside the account with keys of its own (a guest of an upload request); its
   * keys are stored apart (after a newline, which no key may hold), so they never meet the account's.
   */
  async begin(accountId: number, key: string, fingerprint: string, scope?: string): Promise<{ replay: StoredAnswer } | { held: HeldKey }> {
    checkIdempotencyKey(key)
    const stored = scope === undefined ? key : `${scope}\n${key}`
    const claim = await this.keys.claim(accountId, stored, fingerprint, this.now(), IDEMPOTENCY_LEASE_MS, IDEMPOTENCY_TTL_MS)
    if (claim.kind === 'running') throw new IdempotencyInProgressError()
    if (claim.kind === 'reused') throw new IdempotencyKeyReusedError()
    if (claim.kind === 'replay') {
      const { status, headers, body } = claim.row
      return { replay: { status: status ?? 200, headers: headers ? (JSON.parse(headers) as Record<string, string>) : {}, body } }
    }
    const renewal = setInterval(() => {
      this.keys.renew(accountId, stored, this.now() + IDEMPOTENCY_LEASE_MS).catch(this.onBackgroundError)
    }, IDEMPOTENCY_RENEW_MS)
    renewal.unref()
    let finished = false
    return {
      held: {
        accountId,
        key: stored,
        finish: async (answer) => {
          if (finished) return
          finished = true
          clearInterval(renewal)
          if (answer && answer.status >= 200 && answer.status < 300) await this.keys.complete(accountId, stored, answer)
          else await this.keys.forget(accountId, stored)
        },
      },
    }
  }

  /** Removes keys past their 24 hours (the collector's sweep). */
  purgeExpired(): Promise<number> {
    return this.keys.purgeExpired(this.now())
  }
}
