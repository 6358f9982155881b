import type { Kysely } from 'kysely'
import type { Database, IdempotencyKeyRow } from '../schema.js'

/** What a request with an Idempotency-Key finds when it starts. */
export type IdempotencyClaim = { kind: 'claimed' } | { kind: 'replay'; row: IdempotencyKeyRow } | { kind: 'running' } | { kind: 'reused' }

/** The stored answer of the first request with a key. */
export interface StoredAnswer {
  status: number
  headers: Record<string, string>
  body: string | null
}

/**
 * Idempotency keys (../shared/spec/api-semantics.md), per account. Every step is one conditional
 * statement, so that two requests with one key, on any instances, never both run.
 */
export class IdempotencyKeysRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * Claims `key` for a request with `fingerprint`: inserts it as running with a lease, unless a
   * request with it exists. An expired key is forgotten first; a running key whose lease lapsed
   * (its instance died) is taken over.
   */
  async claim(accountId: number, key: string, fingerprint: string, now: number, leaseMs: number, ttlMs: number): Promise<IdempotencyClaim> {
    for (let attempt = 0; attempt < 2; attempt++) {
      const inserted = await this.db
        .insertInto('idempotency_keys')
        .values({
          account_id: accountId,
          key,
          fingerprint,
          state: 'running',
          locked_until: now + leaseMs,
          created_at: now,
          expires_at: now + ttlMs,
        })
        .onConflict((conflict) => conflict.columns(['account_id', 'key']).doNothing())
        .returning('key')
        .executeTakeFirst()
      if (inserted) return { kind: 'claimed' }
      const row = await this.db
        .selectFrom('idempotency_keys')
        .selectAll()
        .where('account_id', '=', accountId)
        .where('key', '=', key)
        .executeTakeFirst()
      if (!row) continue
      if (row.expires_at <= now) {
        await this.db
          .deleteFrom('idempotency_keys')
          .where('account_id', '=', accountId)
          .where('key', '=', key)
          .where('expires_at', '<=', now)
          .execute()
        continue
      }
      if (row.fingerprint !== fingerprint) return { kind: 'reused' }
      if (row.state === 'done') return { kind: 'replay', row }
      if (row.locked_until > now) return { kind: 'running' }
      const taken = await this.db
        .updateTable('idempotency_keys')
        .set({ locked_until: now + leaseMs })
        .where('account_id', '=', accountId)
        .where('key', '=', key)
        .where('state', '=', 'running')
        .where('locked_until', '=', row.locked_until)
        .executeTakeFirst()
      return taken.numUpdatedRows > 0n ? { kind: 'claimed' } : { kind: 'running' }
    }
    return { kind: 'running' }
  }

  /** Extends the lease of a running request. */
  async renew(accountId: number, key: string, until: number): Promise<void> {
    await this.db
      .updateTable('idempotency_keys')
      .set({ locked_until: until })
      .where('account_id', '=', accountId)
      .where('key', '=', key)
      .where('state', '=', 'running')
      .execute()
  }

  /** Stores the first request's 2xx answer: later requests with the key replay it. */
  async complete(accountId: number, key: string, answer: StoredAnswer): Promise<void> {
    await this.db
      .updateTable('idempotency_keys')
      .set({ state: 'done', status: answer.status, headers: JSON.stringify(answer.headers), body: answer.body })
      .where('account_id', '=', accountId)
      .where('key', '=', key)
      .execute()
  }

  /** Frees a key whose request did not succeed: a retry with it runs again. */
  async forget(accountId: number, key: string): Promise<void> {
    await this.db
      .deleteFrom('idempotency_keys')
      .where('account_id', '=', accountId)
      .where('key', '=', key)
      .where('state', '=', 'running')
      .execute()
  }

  /** Removes keys past their 24 hours; returns how many. */
  async purgeExpired(now: number): Promise<number> {
    const result = await this.db.deleteFrom('idempotency_keys').where('expires_at', '<=', now).executeTakeFirst()
    return Number(result.numDeletedRows)
  }
}
