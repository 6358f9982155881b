import { execFile } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { EnvSchema } from '../../src/config.js'
import { ROOT } from '../helpers/server-process.js'

/**
 * deploy/fileshare.service: the hardening docs/deployment.md promises, checked directive by
 * directive, and systemd's own checks where systemd-analyze is installed. (No systemd runs as PID 1
 * here: starting the unit is not tested.)
 */
const UNIT = path.join(ROOT, 'deploy/fileshare.service')
const text = fs.readFileSync(UNIT, 'utf8')

/** Every `Key=value` line, a key given several times keeping each value. */
function directives(unit: string): Map<string, string[]> {
  const found = new Map<string, string[]>()
  for (const line of unit.split('\n')) {
    const match = /^([A-Za-z]+)=(.*)$/.exec(line.trim())
    if (match) found.set(match[1]!, [...(found.get(match[1]!) ?? []), match[2]!])
  }
  return found
}
const unit = directives(text)
const one = (key: string) => unit.get(key)?.at(-1)

const systemdAnalyze = await promisify(execFile)('systemd-analyze', ['--version']).then(
  () => true,
  () => false,
)
if (!systemdAnalyze) console.warn('SKIPPING systemd-analyze checks of deploy/fileshare.service: systemd-analyze is not installed.')

describe('deploy/fileshare.service', () => {
  it('runs `fileshare serve` as a service user, on a data folder it alone may write', () => {
    expect(one('ExecStart')).toMatch(/\/bin\/fileshare\.js serve$/)
    expect(one('User')).toBe('fileshare')
    const environment = new Map((unit.get('Environment') ?? []).map((value) => value.split('=', 2) as [string, string]))
    const dataDir = environment.get('FILESHARE_DATA_DIR')
    expect(dataDir).toBe('/var/lib/fileshare')
    expect(one('ReadWritePaths')).toBe(dataDir)
    expect(`/var/lib/${one('StateDirectory')}`).toBe(dataDir)
  })

  it('has the usual hardening', () => {
    expect(Object.fromEntries([...unit].map(([key, values]) => [key, values.at(-1)]))).toMatchObject({
      NoNewPrivileges: 'yes',
      ProtectSystem: 'strict',
      ProtectHome: 'yes',
      PrivateTmp: 'yes',
      PrivateDevices: 'yes',
      ProtectKernelTunables: 'yes',
      ProtectKernelModules: 'yes',
      ProtectControlGroups: 'yes',
      CapabilityBoundingSet: '',
      RestrictSUIDSGID: 'yes',
      SystemCallFilter: '@system-service',
    })
    // V8 needs writable executable memory: this would kill the server at its first JIT compile.
    expect(unit.has('MemoryDenyWriteExecute')).toBe(false)
  })

  it('gives a SIGTERM more time than the server takes to finish its requests', () => {
    const shutdownMs = (EnvSchema.properties.FILESHARE_SHUTDOWN_TIMEOUT_MS as unknown as { default: number }).default
    expect(one('KillSignal')).toBe('SIGTERM')
    expect(Number(one('TimeoutStopSec')) * 1000).toBeGreaterThan(shutdownMs)
  })

  it.skipIf(!systemdAnalyze)('passes systemd-analyze verify, with an exposure of at most 2.0 (systemd-analyze security)', async () => {
    const run = promisify(execFile)
    const verified = await run('systemd-analyze', ['verify', UNIT])
    expect(verified.stderr).toBe('')
    const security = await run('systemd-analyze', ['security', '--offline=yes', '--no-pager', UNIT])
    const exposure = Number(/Overall exposure level for fileshare\.service: ([0-9.]+)/.exec(security.stdout)?.[1])
    expect(exposure).toBeLessThanOrEqual(2)
  })
})
