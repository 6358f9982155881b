import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TwoFactorSecretBox } from '../../src/services/two-factor-secret.js'
import { startTestApp, type TestApp } from '../helpers/test-app.js'
import { AppClock, holderWithTwoFactor, signInWithCode, totpAt } from '../helpers/two-factor.js'

/**
 * A stored two-factor secret the server cannot read (FILESHARE_TWO_FACTOR_KEY changed, or unset
 * after secrets were encrypted) on both stacks: the sign-in answers 503 service_unavailable, not a
 * 500 nor a wrong code, and the server's log says which account and what the operator can do,
 * without the secret or the key (review R3 b).
 */
const KEY = 'a1'.repeat(32)
const OTHER_KEY = '5c'.repeat(32)

describe('a two-factor secret that does not decrypt with the server’s key', () => {
  let t: TestApp
  let clock: AppClock
  const logLines: string[] = []
  beforeAll(async () => {
    t = await startTestApp(
      { FILESHARE_TWO_FACTOR_KEY: KEY, FILESHARE_LOG_LEVEL: 'error' },
      { logStream: { write: (line: string) => void logLines.push(line) } },
    )
    clock = new AppClock(t)
  })
  afterAll(async () => {
    await t?.close()
  })

  it('answers the code step 503 service_unavailable and logs an actionable line naming the account, no secret', async () => {
    const holder = await holderWithTwoFactor(t, clock, `wrong-key-${Date.now()}@example.test`)
    // As a server with another key would have stored it.
    await t.app.database.db
      .updateTable('account_two_factor')
      .set({ secret: new TwoFactorSecretBox(OTHER_KEY).seal(holder.secret, holder.accountId) })
      .where('account_id', '=', holder.accountId)
      .execute()

    const answer = await signInWithCode(t, holder.email, totpAt(holder.secret, clock.now()))
    expect(answer.status).toBe(503)
    expect(answer.headers.getSetCookie()).toEqual([])
    const body = (await answer.json()) as { error: { code: string; message: string; request_id?: string } }
    // The registry's message: nothing about the account or the key reaches the client.
    expect(body.error).toEqual({
      code: 'service_unavailable',
      message: 'A backend the service depends on is unavailable.',
      request_id: expect.any(String),
    })

    const line = logLines.find((text) => text.includes('two-factor secret of account'))
    expect(line, logLines.join('')).toBeDefined()
    expect(line).toContain(`The two-factor secret of account ${holder.accountId} does not decrypt with FILESHARE_TWO_FACTOR_KEY`)
    expect(line).toContain(`fileshare account reset-two-factor ${holder.accountId}`)
    expect(line).toContain('fileshare two-factor encrypt-secrets --dry-run')
    expect(line).toContain(body.error.request_id)
    const everything = logLines.join('')
    for (const secret of [holder.secret, KEY, OTHER_KEY]) expect(everything).not.toContain(secret)
    // Not counted as a wrong code: nothing the holder did.
    const failed = await t.app.services.auditLog.list(holder.accountId, { limit: 5, action: 'two_factor.failed' })
    expect(failed.events).toEqual([])
  })
})
