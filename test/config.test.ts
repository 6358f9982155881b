import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { ConfigError, DEFAULT_PLANS, EnvSchema, loadConfig } from '../src/config.js'

/** The plan table of decisions.md. */
const DECIDED_PLANS = {
  pro: { requests_per_minute: 50, requests_per_day: 5000, max_file_size: 5368709120, daily_uploads: 500 },
  business: { requests_per_minute: 100, requests_per_day: 10000, max_file_size: 10737418240, daily_uploads: 2000 },
  enterprise: { requests_per_minute: 1000, requests_per_day: 100000, max_file_size: 53687091200, daily_uploads: 20000 },
}

function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env)
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError)
    return error as ConfigError
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`)
}

/** Every object reachable from `value`, with its path, for the deep-freeze check. */
function objectsIn(value: unknown, at = 'config'): Array<[string, object]> {
  if (value === null || typeof value !== 'object') return []
  return [[at, value], ...Object.entries(value).flatMap(([key, inner]) => objectsIn(inner, `${at}.${key}`))]
}

describe('loadConfig', () => {
  describe('defaults', () => {
    const config = loadConfig({})

    it('serves on 0.0.0.0:3000 with the public URL http://localhost:3000', () => {
      expect(config.port).toBe(3000)
      expect(config.host).toBe('0.0.0.0')
      expect(config.publicUrl).toBe('http://localhost:3000')
    })

    it('keeps the SQLite file and the blob folder under ./data, resolved to an absolute path', () => {
      expect(config.dataDir).toBe(path.resolve('data'))
      expect(path.isAbsolute(config.dataDir)).toBe(true)
      expect(path.dirname(config.sqlitePath)).toBe(config.dataDir)
      expect(config.blobDir.startsWith(config.dataDir + path.sep)).toBe(true)
    })

    it('uses the plan table of decisions.md; free has no API access', () => {
      for (const [plan, figures] of Object.entries(DECIDED_PLANS)) {
        expect(config.plans[plan as keyof typeof DECIDED_PLANS]).toMatchObject({ api_access: true, ...figures })
      }
      expect(config.plans.free.api_access).toBe(false)
    })

    it('has the documented operational defaults', () => {
      expect(config).toMatchObject({
        logLevel: 'info',
        trustProxy: false,
        authFailuresPerMinute: 30,
        downloadsPerMinute: 600,
      })
      // The CLI promises that its changes reach a running server within 5 s.
      expect(config.cacheTtlMs).toBeGreaterThan(0)
      expect(config.cacheTtlMs).toBeLessThanOrEqual(5000)
      expect(config.shutdownTimeoutMs).toBeGreaterThan(0)
    })

    it('reads process.env when given no source', () => {
      const saved = process.env.PORT
      process.env.PORT = '4567'
      try {
        expect(loadConfig().port).toBe(4567)
      } finally {
        if (saved === undefined) delete process.env.PORT
        else process.env.PORT = saved
      }
    })
  })

  describe('overrides', () => {
    it('takes PORT, HOST and the data folder from the environment', () => {
      const config = loadConfig({ PORT: '8080', HOST: '127.0.0.1', FILESHARE_DATA_DIR: '/srv/fileshare' })
      expect(config).toMatchObject({ port: 8080, host: '127.0.0.1', dataDir: path.resolve('/srv/fileshare') })
      expect(config.sqlitePath.startsWith(path.resolve('/srv/fileshare') + path.sep)).toBe(true)
    })

    it('derives the default public URL from PORT', () => {
      expect(loadConfig({ PORT: '8080' }).publicUrl).toBe('http://localhost:8080')
    })

    it('resolves a relative data folder against the working directory', () => {
      expect(loadConfig({ FILESHARE_DATA_DIR: 'var/files' }).dataDir).toBe(path.resolve('var/files'))
    })

    it('takes FILESHARE_PUBLIC_URL as the link origin, without a trailing slash', () => {
      expect(loadConfig({ FILESHARE_PUBLIC_URL: 'https://files.example.com' }).publicUrl).toBe('https://files.example.com')
      expect(loadConfig({ FILESHARE_PUBLIC_URL: 'https://files.example.com/' }).publicUrl).toBe('https://files.example.com')
      expect(loadConfig({ FILESHARE_PUBLIC_URL: 'https://example.com/share/' }).publicUrl).toBe('https://example.com/share')
      expect(loadConfig({ PORT: '9000', FILESHARE_PUBLIC_URL: 'http://example.com:8443' }).publicUrl).toBe('http://example.com:8443')
    })

    it('without FILESHARE_DOWNLOAD_URL, links use the public URL and no host is download-only', () => {
      const config = loadConfig({ FILESHARE_PUBLIC_URL: 'https://example.com/share/' })
      expect(config.linkBaseUrl).toBe('https://example.com/share')
      expect(config.downloadHost).toBeUndefined()
    })

    it('takes FILESHARE_DOWNLOAD_URL as the base of public links and its host name as the download host', () => {
      const config = loadConfig({ FILESHARE_PUBLIC_URL: 'https://example.com/share', FILESHARE_DOWNLOAD_URL: 'https://DL.Example.com/' })
      expect(config).toMatchObject({
        publicUrl: 'https://example.com/share',
        linkBaseUrl: 'https://dl.example.com',
        downloadHost: 'dl.example.com',
      })
      // A default port is dropped, any other kept; the host name never carries the port.
      expect(loadConfig({ FILESHARE_DOWNLOAD_URL: 'https://dl.example.com:443' }).linkBaseUrl).toBe('https://dl.example.com')
      expect(loadConfig({ FILESHARE_DOWNLOAD_URL: 'http://dl.example.com:8080' })).toMatchObject({
        linkBaseUrl: 'http://dl.example.com:8080',
        downloadHost: 'dl.example.com',
      })
    })

    it('reads the log level, the proxy trust and the limits of the guards', () => {
      const config = loadConfig({
        FILESHARE_LOG_LEVEL: 'warn',
        FILESHARE_TRUST_PROXY: 'true',
        FILESHARE_CACHE_TTL_MS: '0',
        FILESHARE_AUTH_FAILURES_PER_MINUTE: '5',
        FILESHARE_DOWNLOADS_PER_MINUTE: '7',
        FILESHARE_SHUTDOWN_TIMEOUT_MS: '1500',
      })
      expect(config).toMatchObject({
        logLevel: 'warn',
        trustProxy: true,
        cacheTtlMs: 0,
        authFailuresPerMinute: 5,
        downloadsPerMinute: 7,
        shutdownTimeoutMs: 1500,
      })
    })

    it.each([
      ['true', true],
      ['false', false],
      ['1', true],
      ['0', false],
    ])('FILESHARE_TRUST_PROXY=%s is %s', (value, expected) => {
      expect(loadConfig({ FILESHARE_TRUST_PROXY: value }).trustProxy).toBe(expected)
    })

    it('ignores whitespace around values', () => {
      expect(loadConfig({ PORT: ' 8080 ', FILESHARE_LOG_LEVEL: ' debug\n' })).toMatchObject({ port: 8080, logLevel: 'debug' })
    })
  })

  describe('FILESHARE_PLANS', () => {
    it('merges figures onto the default plan table', () => {
      const { plans } = loadConfig({
        FILESHARE_PLANS: '{"pro":{"daily_uploads":10,"max_file_size":1024},"business":{"requests_per_minute":7}}',
      })
      expect(plans.pro).toEqual({ ...DEFAULT_PLANS.pro, daily_uploads: 10, max_file_size: 1024 })
      expect(plans.business).toEqual({ ...DEFAULT_PLANS.business, requests_per_minute: 7 })
      expect(plans.enterprise).toEqual(DEFAULT_PLANS.enterprise)
      expect(plans.free).toEqual(DEFAULT_PLANS.free)
    })

    it('takes a storage quota in bytes, or null for unlimited, and refuses a negative one', () => {
      const { plans } = loadConfig({ FILESHARE_PLANS: '{"pro":{"max_storage":1000},"business":{"max_storage":null}}' })
      expect(plans.pro.max_storage).toBe(1000)
      expect(plans.business.max_storage).toBeNull()
      expect(plans.enterprise.max_storage).toBe(DEFAULT_PLANS.enterprise.max_storage)
      expect(() => loadConfig({ FILESHARE_PLANS: '{"pro":{"max_storage":-1}}' })).toThrow(/FILESHARE_PLANS \/pro\/max_storage/)
    })

    it('may give the free plan API access', () => {
      expect(loadConfig({ FILESHARE_PLANS: '{"free":{"api_access":true,"requests_per_minute":5}}' }).plans.free).toMatchObject({
        api_access: true,
        requests_per_minute: 5,
      })
    })

    it('leaves the defaults untouched for the next load', () => {
      loadConfig({ FILESHARE_PLANS: '{"pro":{"daily_uploads":1}}' })
      expect(DEFAULT_PLANS.pro.daily_uploads).toBe(500)
      expect(loadConfig({}).plans.pro.daily_uploads).toBe(500)
    })
  })

  it('turns virus scanning on with FILESHARE_CLAMD (tcp or unix socket), required unless told async', () => {
    expect(loadConfig({}).scan).toBeUndefined()
    expect(loadConfig({ FILESHARE_CLAMD: 'tcp://clamav.internal:3310' }).scan).toEqual({
      clamd: { host: 'clamav.internal', port: 3310 },
      mode: 'required',
      maxBytes: 26_214_400,
      timeoutMs: 120_000,
      concurrency: 2,
    })
    expect(loadConfig({ FILESHARE_CLAMD: 'tcp://[::1]:3310', FILESHARE_SCAN: 'async' }).scan).toMatchObject({
      clamd: { host: '::1', port: 3310 },
      mode: 'async',
    })
    expect(loadConfig({ FILESHARE_CLAMD: 'unix:/run/clamav/clamd.ctl' }).scan?.clamd).toEqual({ path: '/run/clamav/clamd.ctl' })
    expect(configError({ FILESHARE_CLAMD: 'clamd:3310' }).message).toContain('must be tcp://host:port or unix:/path/to/clamd.ctl')
    // Scanning asked for without a scanner is an error, never files served unscanned.
    expect(configError({ FILESHARE_SCAN: 'required' })).toMatchObject({ variable: 'FILESHARE_SCAN' })
  })

  it('is deeply frozen', () => {
    const config = loadConfig({ FILESHARE_PLANS: '{"pro":{"daily_uploads":10}}' })
    for (const [at, object] of objectsIn(config)) expect(Object.isFrozen(object), at).toBe(true)
    expect(() => {
      ;(config as { port: number }).port = 1
    }).toThrow(TypeError)
    expect(() => {
      ;(config.plans.pro as { daily_uploads: number }).daily_uploads = 1
    }).toThrow(TypeError)
    expect(config.plans.pro.daily_uploads).toBe(10)
  })

  describe('invalid values throw ConfigError naming the variable', () => {
    const invalid: Array<[string, string]> = [
      ['PORT', 'abc'],
      ['PORT', '70000'],
      ['PORT', '-1'],
      ['PORT', '80.5'],
      ['PORT', '0x50'],
      ['PORT', '8080abc'],
      ['FILESHARE_PUBLIC_URL', 'notaurl'],
      ['FILESHARE_PUBLIC_URL', 'ftp://files.example.com'],
      ['FILESHARE_PUBLIC_URL', 'https://files.example.com/?x=1'],
      ['FILESHARE_PUBLIC_URL', 'https://files example.com'],
      ['FILESHARE_DOWNLOAD_URL', 'dl.example.com'],
      ['FILESHARE_DOWNLOAD_URL', 'ftp://dl.example.com'],
      ['FILESHARE_DOWNLOAD_URL', 'https://dl.example.com/files'],
      ['FILESHARE_DOWNLOAD_URL', 'https://dl.example.com/?x=1'],
      ['FILESHARE_DOWNLOAD_URL', 'https://dl.example.com:99999'],
      // The default public URL's host: user content would share the dashboard's host name.
      ['FILESHARE_DOWNLOAD_URL', 'http://localhost:8080'],
      ['FILESHARE_LOG_LEVEL', 'loud'],
      ['FILESHARE_TRUST_PROXY', 'maybe'],
      ['FILESHARE_PLANS', '{bad'],
      ['FILESHARE_PLANS', '[]'],
      ['FILESHARE_PLANS', '{"pro":{"max_file_size":-1}}'],
      ['FILESHARE_PLANS', '{"pro":{"daily_uploads":1.5}}'],
      ['FILESHARE_PLANS', '{"pro":{"requests_per_minute":0}}'],
      ['FILESHARE_PLANS', '{"pro":{"max_file_size":"5"}}'],
      ['FILESHARE_PLANS', '{"gold":{"daily_uploads":1}}'],
      // A misspelt figure must not be ignored silently.
      ['FILESHARE_PLANS', '{"pro":{"max_filesize":1}}'],
      ['FILESHARE_CACHE_TTL_MS', '6000'],
      ['FILESHARE_CACHE_TTL_MS', '-1'],
      ['FILESHARE_AUTH_FAILURES_PER_MINUTE', '0'],
      ['FILESHARE_DOWNLOADS_PER_MINUTE', 'many'],
      ['FILESHARE_HEADERS_TIMEOUT_MS', '0'],
      ['FILESHARE_IDLE_TIMEOUT_MS', '1.5'],
      ['FILESHARE_SHUTDOWN_TIMEOUT_MS', '-5'],
      ['FILESHARE_CLAMD', 'localhost:3310'],
      ['FILESHARE_CLAMD', 'tcp://localhost'],
      ['FILESHARE_CLAMD', 'tcp://localhost:99999'],
      ['FILESHARE_CLAMD', 'unix:relative.ctl'],
      ['FILESHARE_SCAN', 'sometimes'],
      ['FILESHARE_SCAN_MAX_BYTES', '0'],
      ['FILESHARE_DATABASE_POOL_SIZE', '0'],
      ['FILESHARE_DATABASE_POOL_SIZE', '1001'],
    ]

    it.each(invalid)('%s=%s', (variable, value) => {
      const error = configError({ [variable]: value })
      expect(error.variable).toBe(variable)
      expect(error.message).toContain(variable)
      expect(error.message).not.toContain('\n')
    })

    it('FILESHARE_DOWNLOAD_URL must name another host name than FILESHARE_PUBLIC_URL, whatever the port', () => {
      const error = configError({
        FILESHARE_PUBLIC_URL: 'https://files.example.com/app',
        FILESHARE_DOWNLOAD_URL: 'https://FILES.example.com:8443',
      })
      expect(error.variable).toBe('FILESHARE_DOWNLOAD_URL')
      expect(error.message).toContain('FILESHARE_PUBLIC_URL')
    })

    it('never prints back a connection URL, which may hold a password', () => {
      for (const [variable, value] of [
        ['FILESHARE_DATABASE_URL', 'mysql://fileshare:hunter2-secret@db.internal/files'],
        ['FILESHARE_REDIS_URL', 'http://:hunter2-secret@redis.internal:6379'],
        // The right scheme, but no URL: refused here, not by the driver at start (with a stack
        // that quoted the whole value).
        ['FILESHARE_REDIS_URL', 'redis://:hunter2-secret@[bad:6379'],
        ['FILESHARE_DATABASE_URL', 'postgres://fileshare:hunter2-secret@db.internal:port/files'],
      ] as const) {
        const error = configError({ [variable]: value })
        expect(error.variable).toBe(variable)
        expect(error.message).not.toContain('hunter2')
      }
    })

    it('lists the allowed words for a variable that takes one of several', () => {
      expect(configError({ FILESHARE_LOG_LEVEL: 'loud' }).message).toBe(
        'Invalid configuration: FILESHARE_LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got "loud")',
      )
      expect(configError({ FILESHARE_STORAGE: 'disk' }).message).toBe(
        'Invalid configuration: FILESHARE_STORAGE must be one of fs, s3 (got "disk")',
      )
    })

    it('names the bad variable when others are fine', () => {
      expect(configError({ PORT: '8080', FILESHARE_LOG_LEVEL: 'debug', FILESHARE_TRUST_PROXY: 'maybe' }).variable).toBe(
        'FILESHARE_TRUST_PROXY',
      )
    })
  })

  describe('empty values count as unset', () => {
    const defaults = loadConfig({})

    it('for every variable the service reads', () => {
      const empty = Object.fromEntries(Object.keys(EnvSchema.properties).map((name) => [name, '']))
      expect(loadConfig(empty)).toEqual(defaults)
    })

    it('also when blank', () => {
      expect(loadConfig({ PORT: '  ', HOST: ' ', FILESHARE_DATA_DIR: '\t', FILESHARE_PUBLIC_URL: ' ', FILESHARE_PLANS: ' ' })).toEqual(
        defaults,
      )
    })

    it('and undefined values too', () => {
      expect(loadConfig({ PORT: undefined, FILESHARE_PUBLIC_URL: undefined })).toEqual(defaults)
    })
  })
})

describe('garbage collection settings', () => {
  it('sweep every hour by default, removing leftovers older than an hour', () => {
    expect(loadConfig({})).toMatchObject({ gcIntervalMs: 3_600_000, gcGraceMs: 3_600_000 })
  })

  it('take an interval of 0 (off) up to what a timer holds, and a grace period of at least a minute', () => {
    expect(loadConfig({ FILESHARE_GC_INTERVAL_MS: '0', FILESHARE_GC_GRACE_MS: '60000' })).toMatchObject({
      gcIntervalMs: 0,
      gcGraceMs: 60_000,
    })
    expect(loadConfig({ FILESHARE_GC_INTERVAL_MS: '2147483647' }).gcIntervalMs).toBe(2_147_483_647)
  })

  it.each([
    ['FILESHARE_GC_INTERVAL_MS', '-1'],
    ['FILESHARE_GC_INTERVAL_MS', '1h'],
    // A longer delay would overflow Node's timer and fire at once, over and over.
    ['FILESHARE_GC_INTERVAL_MS', '2147483648'],
    ['FILESHARE_GC_GRACE_MS', '59999'],
    ['FILESHARE_GC_GRACE_MS', '0'],
    ['FILESHARE_GC_GRACE_MS', '1.5'],
  ])('refuse %s=%s, naming it', (variable, value) => {
    expect(configError({ [variable]: value }).variable).toBe(variable)
  })
})

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
