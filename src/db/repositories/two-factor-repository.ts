import type { Kysely } from 'kysely'
import type { AccountRow, AccountTwoFactorRow, Database, NewAuditEventRow } from '../schema.js'
import { recordEventIn } from './audit-events-repository.js'

/** Holders' second factors: TOTP secrets, recovery codes (hashes), and sign-ins waiting for a code. */
export class TwoFactorRepository {
  constructor(private readonly db: Kysely<Database>) {}

  find(accountId: number): Promise<AccountTwoFactorRow | undefined> {
    return this.db.selectFrom('account_two_factor').selectAll().where('account_id', '=', accountId).executeTakeFirst()
  }

  /** Stores a secret waiting for its first code, replacing a waiting one; false when a second factor is on already. */
  async startEnrolment(accountId: number, secret: string, now: number): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('account_two_factor').where('account_id', '=', accountId).where('enabled_at', 'is', null).execute()
      const inserted = await trx
        .insertInto('account_two_factor')
        .values({ account_id: accountId, secret, created_at: now })
        .onConflict((conflict) => conflict.column('account_id').doNothing())
        .returning('account_id')
        .executeTakeFirst()
      return inserted !== undefined
    })
  }

  /**
   * Accepts a code of time step `step` once: raises `last_step` only if it is below `step` (a
   * conditional UPDATE, so two requests with the same code cannot both win). `enabled`: which
   * state the second factor must be in (waiting for its first code, or on). `secret`: the stored
   * secret the code was checked against, when given: false if another replaced it meanwhile.
   */
  async acceptStep(accountId: number, step: number, enabled: boolean, secret?: string): Promise<boolean> {
    let update = this.db
      .updateTable('account_two_factor')
      .set({ last_step: step })
      .where('account_id', '=', accountId)
      .where('last_step', '<', step)
      .where('enabled_at', enabled ? 'is not' : 'is', null)
    if (secret !== undefined) update = update.where('secret', '=', secret)
    const result = await update.executeTakeFirst()
    return Number(result.numUpdatedRows) === 1
  }

  /**
   * Turns the waiting second factor on with its recovery codes' hashes and its event, in one
   * transaction; false (nothing changed) when it is on already or, with `secret`, when the waiting
   * secret is another one: of two confirmations racing, one wins. With `keepTokenHash`, every other
   * session of the account ends in the same transaction (sessions.ts stores SHA-256 of the id).
   */
  async enable(
    accountId: number,
    codeHashes: string[],
    now: number,
    event: NewAuditEventRow,
    options: { secret?: string; keepTokenHash?: string } = {},
  ): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      let update = trx
        .updateTable('account_two_factor')
        .set({ enabled_at: now })
        .where('account_id', '=', accountId)
        .where('enabled_at', 'is', null)
      if (options.secret !== undefined) update = update.where('secret', '=', options.secret)
      const enabled = await update.executeTakeFirst()
      if (Number(enabled.numUpdatedRows) !== 1) return false
      await replaceCodes(trx, accountId, codeHashes)
      if (options.keepTokenHash !== undefined) {
        await trx.deleteFrom('sessions').where('account_id', '=', accountId).where('token_hash', '!=', options.keepTokenHash).execute()
      }
      await recordEventIn(trx, event)
      return true
    })
  }

  /** New recovery codes; every earlier one stops working. */
  async replaceRecoveryCodes(accountId: number, codeHashes: string[], event: NewAuditEventRow): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await replaceCodes(trx, accountId, codeHashes)
      await recordEventIn(trx, event)
    })
  }

  /** Uses a recovery code once (a conditional UPDATE: two requests with the same code cannot both win); with its event. */
  async useRecoveryCode(accountId: number, codeHash: string, now: number, event: (left: number) => NewAuditEventRow): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const used = await trx
        .updateTable('account_recovery_codes')
        .set({ used_at: now })
        .where('account_id', '=', accountId)
        .where('code_hash', '=', codeHash)
        .where('used_at', 'is', null)
        .executeTakeFirst()
      if (Number(used.numUpdatedRows) !== 1) return false
      await recordEventIn(trx, event(await countUnused(trx, accountId)))
      return true
    })
  }

  recoveryCodesLeft(accountId: number): Promise<number> {
    return countUnused(this.db, accountId)
  }

  /** Removes the second factor and its codes (and sign-ins waiting for a code), with its event when given. */
  async remove(accountId: number, event?: NewAuditEventRow): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const removed = await trx.deleteFrom('account_two_factor').where('account_id', '=', accountId).executeTakeFirst()
      await trx.deleteFrom('account_recovery_codes').where('account_id', '=', accountId).execute()
      await trx.deleteFrom('sign_in_challenges').where('account_id', '=', accountId).execute()
      if (event) await recordEventIn(trx, event)
      return Number(removed.numDeletedRows) > 0
    })
  }

  // ---- Sign-ins waiting for their second factor ----

  async createChallenge(accountId: number, tokenHash: string, now: number, expiresAt: number): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('sign_in_challenges').where('expires_at', '<=', now).execute()
      await trx
        .insertInto('sign_in_challenges')
        .values({ account_id: accountId, token_hash: tokenHash, created_at: now, expires_at: expiresAt })
        .execute()
    })
  }

  /** The unexpired challenge stored under `tokenHash`, with its account. */
  async findChallenge(tokenHash: string, now: number): Promise<{ id: number; failures: number; account: AccountRow } | undefined> {
    const challenge = await this.db
      .selectFrom('sign_in_challenges')
      .select(['id', 'account_id', 'failures'])
      .where('token_hash', '=', tokenHash)
      .where('expires_at', '>', now)
      .executeTakeFirst()
    if (!challenge) return undefined
    const account = await this.db.selectFrom('accounts').selectAll().where('id', '=', challenge.account_id).executeTakeFirst()
    return account && { id: challenge.id, failures: challenge.failures, account }
  }

  /**
   * Takes one of the challenge's `maxFailures` tries before its code is checked: a conditional
   * UPDATE, so that concurrent codes cannot all pass a count read before any of them failed. False
   * when none is left, or it expired or is gone: the password is asked again. A right code then
   * ends the challenge, a wrong one leaves its try spent (`dropSpentChallenge`).
   */
  async takeChallengeTry(id: number, maxFailures: number, now: number): Promise<boolean> {
    const result = await this.db
      .updateTable('sign_in_challenges')
      .set((eb) => ({ failures: eb('failures', '+', 1) }))
      .where('id', '=', id)
      .where('failures', '<', maxFailures)
      .where('expires_at', '>', now)
      .executeTakeFirst()
    return Number(result.numUpdatedRows) === 1
  }

  /** Removes the challenge once its tries are spent (takeChallengeTry refuses it anyway; this is tidiness). */
  async dropSpentChallenge(id: number, maxFailures: number): Promise<void> {
    await this.db.deleteFrom('sign_in_challenges').where('id', '=', id).where('failures', '>=', maxFailures).execute()
  }

  /** Uses the challenge up; false when another request did first. */
  async endChallenge(id: number): Promise<boolean> {
    const result = await this.db.deleteFrom('sign_in_challenges').where('id', '=', id).executeTakeFirst()
    return Number(result.numDeletedRows) === 1
  }
}

async function replaceCodes(db: Kysely<Database>, accountId: number, codeHashes: string[]): Promise<void> {
  await db.deleteFrom('account_recovery_codes').where('account_id', '=', accountId).execute()
  await db
    .insertInto('account_recovery_codes')
    .values(codeHashes.map((code_hash) => ({ account_id: accountId, code_hash })))
    .execute()
}

async function countUnused(db: Kysely<Database>, accountId: number): Promise<number> {
  const row = await db
    .selectFrom('account_recovery_codes')
    .select((eb) => eb.fn.countAll<number | string>().as('left'))
    .where('account_id', '=', accountId)
    .where('used_at', 'is', null)
    .executeTakeFirstOrThrow()
  return Number(row.left)
}
