import { Secret, TOTP } from 'otpauth'
import type { TestApp } from './test-app.js'

/** The dashboard password every holder of these helpers has. */
export const HOLDER_PASSWORD = 'correct horse battery staple'

/** The TOTP code of `secret` at `timestamp` (epoch ms), as an authenticator app shows it. */
export function totpAt(secret: string, timestamp: number): string {
  return TOTP.generate({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30, timestamp })
}

/** The app's clock as the test sees it: moved with the app's (t.advanceClock), so that codes are those of the app's time. */
export class AppClock {
  private offset = 0
  constructor(private readonly t: TestApp) {}
  now(): number {
    return Date.now() + this.offset
  }
  advance(ms: number): void {
    this.offset += ms
    this.t.advanceClock(ms)
  }
}

/**
 * A holder with a password and two-factor sign-in on (enrolled through the services at the app's
 * time); the clock then moves a 30-second step on, so that a code of `clock.now()` has not been
 * used. Returns the account, its email and the secret (base32).
 */
export async function holderWithTwoFactor(t: TestApp, clock: AppClock, email: string) {
  const { accountId } = await t.createAccount('pro', email)
  await t.app.services.accountHolders.setPassword(accountId, HOLDER_PASSWORD)
  const { secret } = await t.app.services.twoFactor.startEnrolment(accountId, email)
  await t.app.services.twoFactor.confirmEnrolment(accountId, totpAt(secret, clock.now()), { type: 'session', id: accountId })
  clock.advance(30_000)
  return { accountId, email, secret }
}

/** Both steps of a dashboard sign-in over HTTP: the password, then `code`; the second step's answer. */
export async function signInWithCode(t: TestApp, email: string, code: string): Promise<Response> {
  const post = (path: string, body: unknown) =>
    fetch(`${t.url}/dashboard/api/${path}`, {
      method: 'POST',
      headers: { origin: t.url, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
  const first = await post('sign-in', { email, password: HOLDER_PASSWORD })
  const { challenge } = (await first.json()) as { challenge?: string }
  if (first.status !== 200 || challenge === undefined) throw new Error(`The password step answered ${first.status} without a challenge.`)
  return post('sign-in/two-factor', { challenge, code })
}
