import fs from 'node:fs/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createDatabase, runCommand } from '../helpers/cli.js'
import { makeTempDir } from '../helpers/test-app.js'

/** `fileshare key create` with scopes, addresses and expiry, `key list`, and `fileshare audit` (keys-and-audit.md). */
describe('fileshare key create with a policy, and fileshare audit', () => {
  let dataDir: string
  let accountId: number
  const run = (...args: string[]) => runCommand(args, { FILESHARE_DATA_DIR: dataDir })

  beforeAll(async () => {
    dataDir = await makeTempDir()
    await createDatabase({ FILESHARE_DATA_DIR: dataDir })
    const created = await run('account', 'create', '--email', 'cli-scopes@example.test', '--plan', 'pro', '--json')
    accountId = (JSON.parse(created.stdout) as { account_id: number }).account_id
  })
  afterAll(async () => {
    await fs.rm(dataDir, { recursive: true, force: true })
  })

  it('creates a key with exactly the scopes, addresses and expiry given, and lists them', async () => {
    const before = Date.now()
    const result = await run(
      'key',
      'create',
      String(accountId),
      '--name',
      'backup job',
      '--scopes',
      'stats:read,files:read',
      '--allow-ip',
      '10.0.0.0/8,192.0.2.7',
      '--allow-ip',
      '2001:db8::/32',
      '--expires-in',
      '30d',
      '--json',
    )
    expect(result).toMatchObject({ code: 0, stderr: '' })
    const key = JSON.parse(result.stdout) as {
      key_id: number
      scopes: string[]
      allowed_ips: string[]
      expires_at: number
      api_key: string
    }
    expect(key.scopes).toEqual(['files:read', 'stats:read'])
    expect(key.allowed_ips).toEqual(['10.0.0.0/8', '192.0.2.7', '2001:db8::/32'])
    expect(key.expires_at - before).toBeGreaterThanOrEqual(30 * 86_400_000)
    expect(key.expires_at - before).toBeLessThan(30 * 86_400_000 + 60_000)

    const text = await run('key', 'create', String(accountId), '--scopes', 'audit:read', '--expires-in', '12h')
    expect(text.stdout).toMatch(/\(audit:read; from any address; expires \d{4}-/)
    const full = await run('key', 'create', String(accountId))
    expect(full.stdout).toContain('(every scope; from any address; never expires)')

    const listed = JSON.parse((await run('key', 'list', String(accountId), '--json')).stdout) as Array<{ key_id: number; scopes: string[] }>
    expect(listed.find((k) => k.key_id === key.key_id)!.scopes).toEqual(['files:read', 'stats:read'])
    expect(listed[0]!.scopes).toHaveLength(9)
    const listText = (await run('key', 'list', String(accountId))).stdout
    expect(listText).toContain('files:read stats:read\t10.0.0.0/8 192.0.2.7 2001:db8::/32')
    expect(listText).not.toContain(key.api_key)
  })

  it.each([
    [['--scopes', 'files:read,files:admin'], /--scopes: Unknown scope files:admin/],
    [['--scopes', ''], /--scopes: Name at least one scope/],
    [['--scopes', ','], /--scopes: Name at least one scope/],
    [['--allow-ip', '10.0.0.0/33'], /--allow-ip: "10.0.0.0\/33" is not an IP address or a CIDR range/],
    [['--allow-ip', 'example.com'], /--allow-ip: "example.com" is not/],
    [['--allow-ip', ''], /--allow-ip needs an address/],
    [['--expires-in', '0d'], /--expires-in must be a positive duration/],
    [['--expires-in', '3w'], /--expires-in must be a positive duration/],
  ])('%j is a usage error (exit 2, one line) and creates no key', async (flags, message) => {
    const count = async () => (JSON.parse((await run('key', 'list', String(accountId), '--json')).stdout) as unknown[]).length
    const keys = await count()
    const result = await run('key', 'create', String(accountId), ...flags)
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(message)
    expect(result.stderr.trim().split('\n')).toHaveLength(1)
    expect(await count()).toBe(keys)
  })

  it('fileshare audit lists the account events newest first, filtered, as text or JSON, and refuses bad filters', async () => {
    const created = JSON.parse((await run('key', 'create', String(accountId), '--name', 'to revoke', '--json')).stdout) as {
      key_id: number
    }
    expect((await run('key', 'revoke', String(created.key_id))).code).toBe(0)

    const events = JSON.parse((await run('audit', '--account', String(accountId), '--json')).stdout) as Array<{
      event_id: number
      at: string
      action: string
      actor: { type: string }
      target: { type: string; id: number }
    }>
    expect(events[0]).toMatchObject({ action: 'key.revoked', actor: { type: 'operator' }, target: { type: 'key', id: created.key_id } })
    expect(events[1]).toMatchObject({ action: 'key.created', target: { type: 'key', id: created.key_id } })
    const ids = events.map((event) => event.event_id)
    expect([...ids].sort((a, b) => b - a)).toEqual(ids)
    expect(events.every((event) => event.action.startsWith('key.'))).toBe(true)

    const revoked = await run('audit', '--account', String(accountId), '--action', 'key.revoked')
    expect(revoked.stdout.trim().split('\n')).toHaveLength(1)
    expect(revoked.stdout).toMatch(/^\d+\t\d{4}-\d{2}-\d{2}T[\d:.]+Z\tkey\.revoked\toperator\t-\tkey \d+\t\{/)
    expect((await run('audit', '--account', String(accountId), '--action', 'key.*', '--limit', '2', '--json')).stdout).toMatch(/^\[.*\]\n$/)
    expect(JSON.parse((await run('audit', '--account', String(accountId), '--since', '2999-01-01', '--json')).stdout)).toEqual([])

    for (const [flags, message] of [
      [[], /audit needs --account ID/],
      [['--account', 'x'], /--account must be a positive integer/],
      [['--account', String(accountId), '--action', 'nope'], /action must be an action name/],
      [['--account', String(accountId), '--since', 'yesterday'], /since must be a UTC date or time/],
    ] as const) {
      const result = await run('audit', ...flags)
      expect(result.code, flags.join(' ')).toBe(2)
      expect(result.stderr).toMatch(message)
    }
  })
})
