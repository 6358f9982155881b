import { describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../../src/config.js'

describe('dashboard settings', () => {
  it('guard failed sign-ins with 10 per client IP and 5 per email address a minute by default', () => {
    expect(loadConfig({})).toMatchObject({ signInFailuresPerMinute: 10, signInAccountFailuresPerMinute: 5 })
  })

  it('take other positive integers', () => {
    const config = loadConfig({ FILESHARE_SIGN_IN_FAILURES_PER_MINUTE: '100', FILESHARE_SIGN_IN_ACCOUNT_FAILURES_PER_MINUTE: '1' })
    expect(config).toMatchObject({ signInFailuresPerMinute: 100, signInAccountFailuresPerMinute: 1 })
  })

  it.each(['0', '-1', '2.5', 'ten'])('refuse %s, naming the variable', (value) => {
    for (const variable of ['FILESHARE_SIGN_IN_FAILURES_PER_MINUTE', 'FILESHARE_SIGN_IN_ACCOUNT_FAILURES_PER_MINUTE']) {
      expect(() => loadConfig({ [variable]: value })).toThrow(ConfigError)
      expect(() => loadConfig({ [variable]: value })).toThrow(variable)
    }
  })
})
