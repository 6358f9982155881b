import fs from 'node:fs/promises'
import net from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { openBackends } from '../src/backends.js'
import { loadConfig } from '../src/config.js'
import { makeTempDir } from './helpers/test-app.js'

/** Open file descriptors of this process: a backend left open keeps its SQLite files (db, -wal, -shm) here. */
async function openDescriptors(): Promise<number> {
  return (await fs.readdir('/proc/self/fd')).length
}

/** A loopback port that refuses connections: nothing listens there. */
async function closedPort(): Promise<number> {
  const probe = net.createServer()
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
  const { port } = probe.address() as net.AddressInfo
  await new Promise((resolve) => probe.close(resolve))
  return port
}

describe('openBackends, the one composition root', () => {
  const dirs: string[] = []
  afterEach(async () => {
    await Promise.all(dirs.splice(0).map((dir) => fs.rm(dir, { recursive: true, force: true })))
  })
  async function configWith(env: Record<string, string> = {}) {
    const dataDir = await makeTempDir()
    dirs.push(dataDir)
    return loadConfig({ FILESHARE_DATA_DIR: dataDir, FILESHARE_LOG_LEVEL: 'silent', ...env })
  }

  it('opens every backend, and close() gives back every descriptor', async () => {
    const config = await configWith()
    const before = await openDescriptors()
    const backends = await openBackends(config)
    expect(backends.redis).toBeUndefined()
    await backends.services.accounts.create('root@example.test', 'pro')
    expect(await openDescriptors()).toBeGreaterThan(before)
    await backends.close()
    expect(await openDescriptors()).toBe(before)
  })

  it('without shared limits (the CLI) opens no Redis connection even when one is configured', async () => {
    const config = await configWith({ FILESHARE_REDIS_URL: `redis://127.0.0.1:${await closedPort()}` })
    const backends = await openBackends(config, { sharedLimits: false })
    expect(backends.redis).toBeUndefined()
    await backends.close()
  })

  it('closes the database and the store it opened when Redis cannot be reached at start-up', async () => {
    const config = await configWith({ FILESHARE_REDIS_URL: `redis://127.0.0.1:${await closedPort()}` })
    const before = await openDescriptors()
    await expect(openBackends(config)).rejects.toThrow()
    expect(await openDescriptors()).toBe(before)
  })
})
