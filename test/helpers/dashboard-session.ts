import { expect } from 'vitest'
import type { TestApp } from './test-app.js'

/**
 * A new account holder with a dashboard password, signed in: its `cookie` header value opens the
 * dashboard's API (/dashboard/api/...), where GET routes need no CSRF token.
 */
export async function signedInHolder(t: TestApp, prefix: string): Promise<{ accountId: number; apiKey: string; cookie: string }> {
  const email = `${prefix}-${Date.now()}-${Math.random().toString(36).slice(2)}@example.test`
  const holder = await t.createAccount('pro', email)
  const password = 'a long enough password'
  await t.app.services.accountHolders.setPassword(holder.accountId, password)
  const signedIn = await fetch(`${t.url}/dashboard/api/sign-in`, {
    method: 'POST',
    headers: { origin: t.url, 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  })
  expect(signedIn.status).toBe(200)
  const cookie = signedIn.headers
    .getSetCookie()
    .find((value) => value.startsWith('fileshare_session='))!
    .split(';')[0]!
  return { ...holder, cookie }
}
