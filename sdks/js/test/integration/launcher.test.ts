// The shared launcher (sdks/launcher/launch-server.mjs), as every SDK suite uses it.
import { existsSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { Fileshare, PermissionDeniedError } from '../../src/index.js'
import { startLauncher, stopLauncher } from '../helpers/launcher.js'
import { server } from '../helpers/env.js'

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

describe('the shared launcher', () => {
  it('hands out a base URL and keys for pro, free and limited accounts (this suite runs on one)', async () => {
    const info = server()
    expect(info.base_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/v1$/)
    for (const key of Object.values(info.keys)) expect(key).toMatch(/^fsk_[A-Za-z0-9_-]{43}$/)
    expect(info.limits.limited).toEqual({ requests_per_minute: 10, requests_per_day: 1000, max_file_size: 1048576, daily_uploads: 3 })
    await expect(new Fileshare({ baseUrl: info.base_url, apiKey: info.keys.free }).stats()).rejects.toBeInstanceOf(PermissionDeniedError)
  })

  it('writes the JSON to a file too, and stops the server and removes its data on SIGTERM', async () => {
    const jsonFile = path.join(tmpdir(), `fileshare-launcher-${process.pid}.json`)
    const { info, child } = await startLauncher(['--json-file', jsonFile])
    try {
      expect(JSON.parse(readFileSync(jsonFile, 'utf8'))).toEqual(info)
      expect(existsSync(info.data_dir)).toBe(true)
      expect(alive(info.server_pid)).toBe(true)
      const stats = await new Fileshare({ baseUrl: info.base_url, apiKey: info.keys.pro }).stats()
      expect(stats.stats.total_files).toBe(0)
      // The limited account's overrides are in place (a fresh server: its minute is not spent here).
      const limited = await new Fileshare({ baseUrl: info.base_url, apiKey: info.keys.limited }).stats()
      expect(limited.limits).toMatchObject(info.limits.limited)
      expect(limited.plan).toBe('pro')
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve))
      child.kill('SIGTERM')
      expect(await exited).toBe(0)
      expect(existsSync(info.data_dir)).toBe(false)
      expect(existsSync(jsonFile)).toBe(false)
      expect(alive(info.server_pid)).toBe(false)
    } finally {
      await stopLauncher(child)
      rmSync(jsonFile, { force: true })
    }
  })
})
