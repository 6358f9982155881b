import { randomBytes } from 'node:crypto'
import fs from 'node:fs/promises'
import path from 'node:path'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEFAULT_PLANS } from '../../src/config.js'
import type { DatabaseHandle } from '../../src/db/dialect.js'
import { openDatabase } from '../../src/db/open-database.js'
import { AccountsRepository } from '../../src/db/repositories/accounts-repository.js'
import { ApiKeysRepository } from '../../src/db/repositories/api-keys-repository.js'
import { sha256Hex } from '../../src/lib/sha256-hex.js'
import { ApiKeyService } from '../../src/services/api-keys.js'
import { AuditEventsRepository } from '../../src/db/repositories/audit-events-repository.js'
import { AuditLogService, AuditTrail } from '../../src/services/audit.js'
import { bearer, makeTempDir, startTestApp } from '../helpers/test-app.js'

/**
 * API keys at the service level, with the clock in the test's hands (`authenticate(key, now)`):
 * lookups go by hash only, and revoked or expired keys stop working within the cache bound.
 */

/** Every call the service makes to the key repository, with its arguments. */
function recordingRepository(db: DatabaseHandle['db']) {
  const calls: { method: string; args: unknown[] }[] = []
  const repository = new Proxy(new ApiKeysRepository(db), {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown
      if (typeof value !== 'function') return value
      return (...args: unknown[]) => {
        calls.push({ method: String(property), args })
        return (value as (...a: unknown[]) => unknown).apply(target, args)
      }
    },
  })
  return { repository, calls }
}

const wellFormedKey = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((bytes) => `fsk_${Buffer.from(bytes).toString('base64url')}`)

describe('API key lookup, revocation and expiry', () => {
  let dataDir: string
  let database: DatabaseHandle
  let accounts: AccountsRepository
  let accountId: number

  beforeAll(async () => {
    dataDir = await makeTempDir()
    database = await openDatabase({ sqlitePath: path.join(dataDir, 'keys.sqlite'), databaseUrl: undefined, databaseSchema: undefined })
    accounts = new AccountsRepository(database.db)
    accountId = (await accounts.create('keys@example.test', 'pro', Date.now())).id
  })
  afterAll(async () => {
    await database?.db.destroy()
    await fs.rm(dataDir, { recursive: true, force: true })
  })

  const service = (repository: ApiKeysRepository, cacheTtlMs: number) => {
    const trail = new AuditTrail({ auditIp: 'truncated' })
    const auditLog = new AuditLogService(new AuditEventsRepository(database.db), trail, { auditRetentionMs: 86_400_000 })
    return new ApiKeyService(repository, accounts, { plans: DEFAULT_PLANS, cacheTtlMs }, trail, auditLog)
  }

  it('looks keys up by SHA-256 only: the secret never reaches the database, nor is it stored', async () => {
    const { repository, calls } = recordingRepository(database.db)
    const keys = service(repository, 0)
    const { apiKey } = await keys.create(accountId, 'hashed')
    const secret = apiKey.slice('fsk_'.length + 6) // the part not shown by `key list`

    const candidates = fc.oneof(
      { weight: 3, arbitrary: wellFormedKey },
      fc.constant(apiKey),
      // Malformed keys are refused before any lookup.
      fc.string({ maxLength: 60 }),
      fc.constant(`${apiKey}x`),
      fc.constant(apiKey.slice(0, -1)),
    )
    await fc.assert(
      fc.asyncProperty(candidates, async (candidate) => {
        calls.length = 0
        const principal = await keys.authenticate(candidate)
        expect(principal !== undefined).toBe(candidate === apiKey)
        const lookups = calls.filter((call) => call.method === 'findByHash')
        if (/^fsk_[A-Za-z0-9_-]{43}$/.test(candidate)) {
          // Exactly one lookup, by the hex SHA-256 of the whole key: the database compares hashes,
          // so how long a comparison takes says nothing about the secret's bytes.
          expect(lookups.map((call) => call.args)).toEqual([[sha256Hex(candidate)]])
          expect(sha256Hex(candidate)).toMatch(/^[0-9a-f]{64}$/)
        } else {
          expect(calls).toEqual([])
        }
        // No repository call ever carries the key or its secret part.
        for (const call of calls) {
          const text = JSON.stringify(call.args)
          expect(text).not.toContain(candidate.length > 12 ? candidate.slice(10) : '\u0000never')
          expect(text).not.toContain(secret)
        }
      }),
      { numRuns: 300 },
    )

    // What the database holds: a hash and the shown prefix, never the key or its secret part.
    const rows = await database.db.selectFrom('api_keys').selectAll().execute()
    const stored = JSON.stringify(rows)
    expect(stored).not.toContain(secret)
    expect(stored).toContain(sha256Hex(apiKey))
  })

  it('an expired key fails at once, from the first millisecond of its expiry, even while cached', async () => {
    const scenario = fc.record({
      cacheTtlMs: fc.integer({ min: 0, max: 5_000 }),
      lifetimeMs: fc.integer({ min: 1, max: 20_000 }),
      // When the key is used, relative to its creation.
      uses: fc.array(fc.integer({ min: 0, max: 30_000 }), { minLength: 1, maxLength: 12 }).map((times) => [...times].sort((a, b) => a - b)),
    })
    await fc.assert(
      fc.asyncProperty(scenario, async ({ cacheTtlMs, lifetimeMs, uses }) => {
        const keys = service(new ApiKeysRepository(database.db), cacheTtlMs)
        const createdAt = Date.now()
        const expiresAt = createdAt + lifetimeMs
        const { apiKey } = await keys.create(accountId, 'expiring', { expiresAt })
        for (const offset of uses) {
          const now = createdAt + offset
          const principal = await keys.authenticate(apiKey, now)
          expect(principal !== undefined, `used ${offset} ms after creation, lifetime ${lifetimeMs} ms, cache ${cacheTtlMs} ms`).toBe(
            now < expiresAt,
          )
        }
      }),
      { numRuns: 100 },
    )
  })

  it('a key revoked by another process (the CLI) fails within the cache bound; revoked here, at once', async () => {
    const scenario = fc.record({
      cacheTtlMs: fc.integer({ min: 0, max: 5_000 }),
      usesBefore: fc.array(fc.integer({ min: 0, max: 10_000 }), { maxLength: 6 }),
      revokeAt: fc.integer({ min: 0, max: 10_000 }),
      usesAfter: fc.array(fc.integer({ min: 0, max: 10_000 }), { minLength: 1, maxLength: 6 }),
      revokedHere: fc.boolean(),
    })
    await fc.assert(
      fc.asyncProperty(scenario, async ({ cacheTtlMs, usesBefore, revokeAt, usesAfter, revokedHere }) => {
        const server = service(new ApiKeysRepository(database.db), cacheTtlMs)
        const cli = service(new ApiKeysRepository(database.db), cacheTtlMs)
        const start = Date.now()
        const { key, apiKey } = await server.create(accountId, 'revoked')
        for (const offset of [...usesBefore].sort((a, b) => a - b).filter((offset) => offset < revokeAt)) {
          expect(await server.authenticate(apiKey, start + offset)).toBeDefined()
        }
        await (revokedHere ? server : cli).revoke(key.id)
        for (const after of [...usesAfter].sort((a, b) => a - b)) {
          const now = start + revokeAt + after
          const principal = await server.authenticate(apiKey, now)
          // The documented bound: at most cacheTtlMs late, and not late at all in the revoking process.
          if (revokedHere || after >= cacheTtlMs) expect(principal, `${after} ms after revocation, cache ${cacheTtlMs} ms`).toBeUndefined()
          expect(await cli.authenticate(apiKey, now)).toBeUndefined()
        }
      }),
      { numRuns: 100 },
    )
  })

  it('near-miss and random keys never authenticate, even while the real key is cached', async () => {
    const keys = service(new ApiKeysRepository(database.db), 5_000)
    const { apiKey } = await keys.create(accountId, 'cached')
    expect(await keys.authenticate(apiKey)).toBeDefined()
    // The cache is keyed by hash: a key that differs in any one character misses it and the lookup.
    for (let i = 4; i < apiKey.length; i++) {
      const flipped = apiKey.slice(0, i) + (apiKey[i] === 'A' ? 'B' : 'A') + apiKey.slice(i + 1)
      expect(await keys.authenticate(flipped), `character ${i}`).toBeUndefined()
    }
    for (let i = 0; i < 50; i++) expect(await keys.authenticate(`fsk_${randomBytes(32).toString('base64url')}`)).toBeUndefined()
  })
})

describe('API keys over HTTP with a 5 s key cache', () => {
  it('a cached key that expires, or is revoked by this server, answers 401 on the very next request', async () => {
    const t = await startTestApp({ FILESHARE_CACHE_TTL_MS: '5000' })
    try {
      const { accountId } = await t.createAccount('pro')
      const stats = (key: string) => fetch(`${t.api}/stats`, { headers: bearer(key) })

      const revoked = await t.app.services.apiKeys.create(accountId, 'to revoke')
      expect((await stats(revoked.apiKey)).status).toBe(200) // now cached for 5 s
      await t.app.services.apiKeys.revoke(revoked.key.id)
      const afterRevoke = await stats(revoked.apiKey)
      expect(afterRevoke.status).toBe(401)
      expect(await afterRevoke.json()).toMatchObject({ success: false, error: { code: 'unauthorized' } })

      const expiresAt = Date.now() + 400
      const expiring = await t.app.services.apiKeys.create(accountId, 'expiring', { expiresAt })
      expect((await stats(expiring.apiKey)).status).toBe(200) // cached, but only until expiresAt
      while (Date.now() < expiresAt) await new Promise((resolve) => setTimeout(resolve, expiresAt - Date.now() + 1))
      const afterExpiry = await stats(expiring.apiKey)
      expect(afterExpiry.status).toBe(401)
      expect(afterExpiry.headers.get('www-authenticate')).toMatch(/^Bearer/)
    } finally {
      await t.close()
    }
  })
})
