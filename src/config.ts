import path from 'node:path'
import { Type, type Static } from 'typebox'
import { Ajv, type ValidateFunction } from 'ajv'

/** The request and account limits of one plan. `free` carries limits too but has no API access. */
const PlanLimitsSchema = Type.Object(
  {
    api_access: Type.Boolean(),
    requests_per_minute: Type.Integer({ minimum: 1 }),
    requests_per_day: Type.Integer({ minimum: 1 }),
    max_file_size: Type.Integer({ minimum: 0 }),
    daily_uploads: Type.Integer({ minimum: 0 }),
    /** Bytes an account may keep, files and uploads in progress together; null: unlimited. */
    max_storage: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
  },
  { additionalProperties: false },
)
export type PlanLimits = Static<typeof PlanLimitsSchema>

export const PLAN_NAMES = ['free', 'pro', 'business', 'enterprise'] as const
export type PlanName = (typeof PLAN_NAMES)[number]

export const DEFAULT_PLANS: Readonly<Record<PlanName, PlanLimits>> = {
  free: { api_access: false, requests_per_minute: 1, requests_per_day: 1, max_file_size: 0, daily_uploads: 0, max_storage: 0 },
  pro: {
    api_access: true,
    requests_per_minute: 50,
    requests_per_day: 5000,
    max_file_size: 5368709120,
    daily_uploads: 500,
    max_storage: 107374182400,
  },
  business: {
    api_access: true,
    requests_per_minute: 100,
    requests_per_day: 10000,
    max_file_size: 10737418240,
    daily_uploads: 2000,
    max_storage: 1099511627776,
  },
  enterprise: {
    api_access: true,
    requests_per_minute: 1000,
    requests_per_day: 100000,
    max_file_size: 53687091200,
    daily_uploads: 20000,
    max_storage: 10995116277760,
  },
}

/** FILESHARE_PLANS: a JSON object whose entries override figures of the default plan table. */
const PlanOverridesSchema = Type.Object(
  // Partial drops additionalProperties, so a misspelt figure would be silently ignored without it.
  Object.fromEntries(PLAN_NAMES.map((name) => [name, Type.Optional(Type.Partial(PlanLimitsSchema, { additionalProperties: false }))])),
  { additionalProperties: false },
)

const Integer = (options: { default: number; minimum?: number; maximum?: number }) => Type.Integer({ minimum: 0, ...options })

/** Every environment variable the service reads. Values arrive as strings and are converted. */
export const EnvSchema = Type.Object({
  PORT: Integer({ default: 3000, maximum: 65535 }),
  HOST: Type.String({ default: '0.0.0.0', minLength: 1 }),
  FILESHARE_DATA_DIR: Type.String({ default: './data', minLength: 1 }),
  FILESHARE_PUBLIC_URL: Type.Optional(Type.String({ pattern: '^https?://[^/?#\\s]+(/[^?#\\s]*)?$' })),
  // A separate origin for user content: scheme, host and optional port, no path.
  FILESHARE_DOWNLOAD_URL: Type.Optional(Type.String({ pattern: '^https?://[^/?#\\s]+/?$' })),
  FILESHARE_LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((level) => Type.Literal(level)),
    { default: 'info' },
  ),
  FILESHARE_TRUST_PROXY: Type.Boolean({ default: false }),
  FILESHARE_PLANS: Type.String({ default: '{}' }),
  FILESHARE_CACHE_TTL_MS: Integer({ default: 4000, maximum: 5000 }),
  FILESHARE_AUTH_FAILURES_PER_MINUTE: Integer({ default: 30, minimum: 1 }),
  FILESHARE_DOWNLOADS_PER_MINUTE: Integer({ default: 600, minimum: 1 }),
  // The dashboard's guard on failed sign-ins: per client IP, and per email address tried.
  FILESHARE_SIGN_IN_FAILURES_PER_MINUTE: Integer({ default: 10, minimum: 1 }),
  FILESHARE_SIGN_IN_ACCOUNT_FAILURES_PER_MINUTE: Integer({ default: 5, minimum: 1 }),
  // Failed sign-ins per email address from all IPs together, per hour: past it, added delay, never a refusal.
  // Also the hourly budget of wrong two-factor codes per account, which does refuse (services/sign-in.ts).
  FILESHARE_SIGN_IN_EMAIL_FAILURES_PER_HOUR: Integer({ default: 30, minimum: 1 }),
  // Every dashboard holder must have a second factor (TOTP): one without is sent to enrol and can do nothing else.
  FILESHARE_REQUIRE_TWO_FACTOR: Type.Boolean({ default: false }),
  // 32 random bytes as 64 hex digits: encrypts the holders' TOTP secrets at rest (unset: stored as they are).
  FILESHARE_TWO_FACTOR_KEY: Type.Optional(Type.String({ pattern: '^[0-9a-fA-F]{64}$' })),
  // A dashboard session ends after this long without a request (besides its 12-hour lifetime).
  FILESHARE_SESSION_IDLE_TIMEOUT_MS: Integer({ default: 1_800_000, minimum: 60_000, maximum: 43_200_000 }),
  FILESHARE_HEADERS_TIMEOUT_MS: Integer({ default: 30_000, minimum: 1 }),
  FILESHARE_IDLE_TIMEOUT_MS: Integer({ default: 60_000, minimum: 1 }),
  FILESHARE_SHUTDOWN_TIMEOUT_MS: Integer({ default: 30_000, minimum: 0 }),
  // How long a request waits for PostgreSQL or Redis to answer before it gets 503.
  FILESHARE_BACKEND_TIMEOUT_MS: Integer({ default: 5_000, minimum: 100, maximum: 600_000 }),
  // Garbage collection: how often the server sweeps (0: never; at most what a Node timer holds, about
  // 24.8 days), and how old leftovers must be: an upload stores its bytes before its row commits.
  FILESHARE_GC_INTERVAL_MS: Integer({ default: 3_600_000, minimum: 0, maximum: 2_147_483_647 }),
  FILESHARE_GC_GRACE_MS: Integer({ default: 3_600_000, minimum: 60_000 }),
  // Resumable uploads (tus): how long an unfinished upload lives after its last bytes (default 24 h).
  FILESHARE_UPLOAD_EXPIRY_MS: Integer({ default: 86_400_000, minimum: 60_000 }),
  // Scale-out: PostgreSQL for metadata, S3-compatible storage for bytes, Redis for rate limits.
  FILESHARE_DATABASE_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
  FILESHARE_DATABASE_SCHEMA: Type.Optional(Type.String({ pattern: '^[a-z_][a-z0-9_]{0,62}$' })),
  // Connections each process may hold open to PostgreSQL: instances x this must stay under the server's max_connections.
  FILESHARE_DATABASE_POOL_SIZE: Integer({ default: 10, minimum: 1, maximum: 1000 }),
  FILESHARE_STORAGE: Type.Union([Type.Literal('fs'), Type.Literal('s3')], { default: 'fs' }),
  FILESHARE_S3_BUCKET: Type.Optional(Type.String({ minLength: 3, maxLength: 63 })),
  FILESHARE_S3_ENDPOINT: Type.Optional(Type.String({ pattern: '^https?://' })),
  FILESHARE_S3_REGION: Type.String({ default: 'us-east-1', minLength: 1 }),
  FILESHARE_S3_FORCE_PATH_STYLE: Type.Boolean({ default: false }),
  FILESHARE_S3_PREFIX: Type.String({ default: 'blobs/' }),
  FILESHARE_S3_PART_SIZE: Integer({ default: 8 * 1024 * 1024, minimum: 5 * 1024 * 1024 }),
  FILESHARE_S3_QUEUE_SIZE: Integer({ default: 4, minimum: 1, maximum: 64 }),
  FILESHARE_REDIS_URL: Type.Optional(Type.String({ pattern: '^rediss?://' })),
  FILESHARE_REDIS_PREFIX: Type.String({ default: 'fileshare:', pattern: '^[A-Za-z0-9_:.-]*$' }),
  // The audit log (../shared/spec/keys-and-audit.md): how much of the client address an event keeps
  // (truncated: IPv4 /24, IPv6 /48), and how many days events are kept before the collector removes them.
  FILESHARE_AUDIT_IP: Type.Union([Type.Literal('full'), Type.Literal('truncated'), Type.Literal('off')], { default: 'truncated' }),
  FILESHARE_AUDIT_RETENTION_DAYS: Integer({ default: 90, minimum: 1, maximum: 36_500 }),
  // Webhooks (../shared/spec/webhooks.md): targets on private networks, and plain http, are refused
  // unless the operator allows them (tests do, for their local receivers).
  FILESHARE_WEBHOOKS_ALLOW_PRIVATE: Type.Boolean({ default: false }),
  FILESHARE_WEBHOOKS_ALLOW_HTTP: Type.Boolean({ default: false }),
  // Whether this instance sends webhook messages (instances that do share the work); off: API only.
  FILESHARE_WEBHOOKS_DELIVER: Type.Boolean({ default: true }),
  // Upload requests (../shared/spec/upload-requests.md): the longest a request may stay open, and
  // what one client address may send as a guest (per minute, per day), whatever requests it uses.
  FILESHARE_UPLOAD_REQUEST_MAX_DAYS: Integer({ default: 90, minimum: 1, maximum: 3650 }),
  FILESHARE_GUEST_REQUESTS_PER_MINUTE: Integer({ default: 60, minimum: 1, maximum: 1_000_000 }),
  FILESHARE_GUEST_REQUESTS_PER_DAY: Integer({ default: 2_000, minimum: 1, maximum: 100_000_000 }),
  // Virus scanning (../shared/spec/upload-requests.md, second half): clamd's address turns it on.
  FILESHARE_CLAMD: Type.Optional(Type.String({ pattern: '^(tcp://(\\[[0-9A-Fa-f:.]+\\]|[A-Za-z0-9.-]+):[0-9]{1,5}|unix:/.+)$' })),
  // required: a file's links answer 409 scan_pending until clamd said it is clean; async: at once.
  FILESHARE_SCAN: Type.Optional(Type.Union([Type.Literal('async'), Type.Literal('required')])),
  // clamd's StreamMaxLength (bytes): a larger file cannot be scanned (refused in required, skipped in async).
  FILESHARE_SCAN_MAX_BYTES: Integer({ default: 26_214_400, minimum: 1, maximum: 4_294_967_295 }),
  // No answer or progress from clamd for this long: the scan failed and is tried again later.
  FILESHARE_SCAN_TIMEOUT_MS: Integer({ default: 120_000, minimum: 100, maximum: 3_600_000 }),
  // Files scanned at once by each instance.
  FILESHARE_SCAN_CONCURRENCY: Integer({ default: 2, minimum: 1, maximum: 64 }),
  // Prometheus metrics (GET /metrics) on a listener of their own, host:port (127.0.0.1:9464, [::1]:9464); unset: no metrics.
  FILESHARE_METRICS_ADDR: Type.Optional(Type.String({ pattern: '^(\\[[0-9A-Fa-f:.]+\\]|[A-Za-z0-9.-]+):[0-9]{1,5}$' })),
})
export type Env = Static<typeof EnvSchema>

const SECRET_VARIABLES = new Set(['FILESHARE_DATABASE_URL', 'FILESHARE_REDIS_URL'])

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`Invalid configuration: ${variable} ${message}`)
    this.name = 'ConfigError'
  }
}

function parsePlans(raw: string): Record<PlanName, PlanLimits> {
  let overrides: unknown
  try {
    overrides = JSON.parse(raw)
  } catch {
    throw new ConfigError('FILESHARE_PLANS', 'is not valid JSON')
  }
  const error = firstError(validators().plans, overrides)
  if (error) {
    const problem = error.keyword === 'additionalProperties' ? 'is not a known plan or figure' : error.message
    throw new ConfigError('FILESHARE_PLANS', `${error.instancePath || '(root)'} ${problem}`)
  }
  const valid = overrides as Partial<Record<PlanName, Partial<PlanLimits>>>
  return Object.fromEntries(PLAN_NAMES.map((name) => [name, Object.freeze({ ...DEFAULT_PLANS[name], ...valid[name] })])) as Record<
    PlanName,
    PlanLimits
  >
}

function parseUrl(raw: string): URL | undefined {
  try {
    return new URL(raw)
  } catch {
    return undefined
  }
}

/**
 * FILESHARE_DOWNLOAD_URL keeps user content off the dashboard's origin. Cookies are scoped by host
 * name, not port, so the download host name must differ from the public URL's.
 */
function parseDownloadOrigin(raw: string | undefined, publicUrl: string) {
  if (!raw) return undefined
  const url = parseUrl(raw)
  if (!url) throw new ConfigError('FILESHARE_DOWNLOAD_URL', `is not a valid URL (got ${JSON.stringify(raw)})`)
  if (url.hostname === parseUrl(publicUrl)?.hostname) {
    throw new ConfigError('FILESHARE_DOWNLOAD_URL', `must name another host than FILESHARE_PUBLIC_URL (got ${JSON.stringify(raw)})`)
  }
  return { url: url.origin, hostname: url.hostname }
}

/** FILESHARE_METRICS_ADDR: `host:port`, an IPv6 host in brackets. */
function parseMetricsAddress(raw: string | undefined) {
  if (!raw) return undefined
  const at = raw.lastIndexOf(':')
  const port = Number(raw.slice(at + 1))
  if (port > 65535) throw new ConfigError('FILESHARE_METRICS_ADDR', `has a port above 65535 (got ${JSON.stringify(raw)})`)
  return { host: raw.slice(0, at).replace(/^\[(.*)\]$/, '$1'), port }
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const inner of Object.values(value)) deepFreeze(inner)
    Object.freeze(value)
  }
  return value
}

/**
 * The schemas are compiled once, with Ajv (Fastify's own validator), on first use. TypeBox's
 * `typebox/value` would do too, but loading its few hundred modules cost every server and CLI
 * process start a tenth of a second or more.
 */
let compiled: { env: ValidateFunction; plans: ValidateFunction } | undefined
function validators() {
  if (!compiled) {
    // strictNumbers: Infinity is no integer (to TypeBox neither). These schemas are fixed, and
    // tested: checking them against the JSON Schema meta-schema at each start would only cost time.
    const ajv = new Ajv({ strict: false, strictNumbers: true, meta: false, validateSchema: false })
    compiled = { env: ajv.compile(EnvSchema), plans: ajv.compile(PlanOverridesSchema) }
  }
  return compiled
}

/** The first error, where and in TypeBox's words: "must not have fewer than 3 characters". */
function firstError(validate: ValidateFunction, value: unknown) {
  if (validate(value)) return undefined
  const error = validate.errors![0]!
  // Ajv reports an unknown property on its object; name the property itself (escaped as in a JSON pointer).
  const instancePath =
    error.keyword === 'additionalProperties'
      ? `${error.instancePath}/${String(error.params.additionalProperty).replace(/~/g, '~0').replace(/\//g, '~1')}`
      : error.instancePath
  return { instancePath, keyword: error.keyword, message: (error.message ?? '').replace('must NOT', 'must not') }
}

/** The environment's strings with the defaults filled in, integers and booleans converted (as `Value.Convert` did). */
function converted(picked: Record<string, string>): Record<string, unknown> {
  const env: Record<string, unknown> = {}
  for (const [name, schema] of Object.entries(EnvSchema.properties as Record<string, { type?: unknown; default?: unknown }>)) {
    const raw = picked[name]
    if (raw === undefined) {
      if (schema.default !== undefined) env[name] = schema.default
    } else if (schema.type === 'integer') {
      env[name] = Number(raw)
    } else if (schema.type === 'boolean') {
      const word = raw.toLowerCase()
      env[name] = word === 'true' || raw === '1' ? true : word === 'false' || raw === '0' ? false : raw
    } else {
      env[name] = raw
    }
  }
  return env
}

/** Where clamd listens: `tcp://host:port` or `unix:/path/to/clamd.ctl` (FILESHARE_CLAMD). */
export type ClamdAddress = { host: string; port: number } | { path: string }

function parseClamdAddress(value: string): ClamdAddress {
  if (value.startsWith('unix:')) return { path: value.slice('unix:'.length) }
  const url = URL.canParse(value) ? new URL(value) : undefined
  const port = Number(url?.port)
  if (!url || !Number.isInteger(port) || port < 1 || port > 65_535) {
    throw new ConfigError('FILESHARE_CLAMD', `must name a port from 1 to 65535 (got ${JSON.stringify(value)})`)
  }
  return { host: url.hostname.replace(/^\[|\]$/g, ''), port }
}

/** A rule in words where the validator's own message would not help ("must be equal to constant"). */
function describeRule(variable: string): string | undefined {
  if (variable === 'FILESHARE_CLAMD') return 'must be tcp://host:port or unix:/path/to/clamd.ctl'
  const property = (EnvSchema.properties as Record<string, { anyOf?: Array<{ const?: unknown }> }>)[variable]
  const choices = property?.anyOf?.map((choice) => choice.const)
  return choices?.every((choice) => typeof choice === 'string') ? `must be one of ${choices.join(', ')}` : undefined
}

/**
 * Reads and validates the environment once. Throws ConfigError naming the first bad variable.
 * Empty (or blank) strings count as unset so that `FOO= npm start` falls back to the default.
 */
export function loadConfig(source: Record<string, string | undefined> = process.env) {
  const picked: Record<string, string> = {}
  for (const name of Object.keys(EnvSchema.properties)) {
    const raw = source[name]?.trim()
    if (raw) picked[name] = raw
    // Convert would read "80.5" as 80 and "0x10" as 16: integer settings are plain decimals.
    const isInteger = (EnvSchema.properties as Record<string, { type?: unknown }>)[name]?.type === 'integer'
    if (raw && isInteger && !/^-?[0-9]+$/.test(raw)) {
      throw new ConfigError(name, `must be an integer (got ${JSON.stringify(raw)})`)
    }
  }
  const env = converted(picked)
  const error = firstError(validators().env, env)
  if (error) {
    const variable = error.instancePath.replace(/^\//, '') || 'environment'
    // Connection URLs may carry a password, and the two-factor key is one: never print them back.
    const got =
      SECRET_VARIABLES.has(variable) || variable === 'FILESHARE_TWO_FACTOR_KEY'
        ? 'value not shown: it may hold a password'
        : `got ${JSON.stringify(env[variable] ?? '')}`
    throw new ConfigError(variable, `${describeRule(variable) ?? error.message} (${got})`)
  }
  const valid = env as Env
  // The pattern checks only the scheme; the drivers would throw at start, quoting the value.
  for (const variable of SECRET_VARIABLES) {
    const value = (valid as Record<string, unknown>)[variable]
    if (typeof value === 'string' && !URL.canParse(value)) {
      throw new ConfigError(variable, 'must be a URL (value not shown: it may hold a password)')
    }
  }
  // Asking for scanning without a scanner must not quietly serve unscanned files.
  if (valid.FILESHARE_SCAN && !valid.FILESHARE_CLAMD) {
    throw new ConfigError('FILESHARE_SCAN', 'needs FILESHARE_CLAMD (where clamd listens); without it nothing is scanned')
  }
  if (valid.FILESHARE_STORAGE === 's3' && !valid.FILESHARE_S3_BUCKET) {
    throw new ConfigError('FILESHARE_S3_BUCKET', 'is required when FILESHARE_STORAGE=s3')
  }
  const publicUrl = (valid.FILESHARE_PUBLIC_URL ?? `http://localhost:${valid.PORT}`).replace(/\/+$/, '')
  const downloadOrigin = parseDownloadOrigin(valid.FILESHARE_DOWNLOAD_URL, publicUrl)
  const dataDir = path.resolve(valid.FILESHARE_DATA_DIR)
  return deepFreeze({
    port: valid.PORT,
    host: valid.HOST,
    dataDir,
    sqlitePath: path.join(dataDir, 'fileshare.sqlite'),
    blobDir: path.join(dataDir, 'blobs'),
    publicUrl,
    /** Base of every `public_link`: the download origin when one is set, else the public URL. */
    linkBaseUrl: downloadOrigin?.url ?? publicUrl,
    /** Host name (lower case, no port) that serves only downloads and health checks; unset: none. */
    downloadHost: downloadOrigin?.hostname,
    logLevel: valid.FILESHARE_LOG_LEVEL,
    trustProxy: valid.FILESHARE_TRUST_PROXY,
    plans: parsePlans(valid.FILESHARE_PLANS),
    cacheTtlMs: valid.FILESHARE_CACHE_TTL_MS,
    authFailuresPerMinute: valid.FILESHARE_AUTH_FAILURES_PER_MINUTE,
    downloadsPerMinute: valid.FILESHARE_DOWNLOADS_PER_MINUTE,
    signInFailuresPerMinute: valid.FILESHARE_SIGN_IN_FAILURES_PER_MINUTE,
    signInAccountFailuresPerMinute: valid.FILESHARE_SIGN_IN_ACCOUNT_FAILURES_PER_MINUTE,
    signInEmailFailuresPerHour: valid.FILESHARE_SIGN_IN_EMAIL_FAILURES_PER_HOUR,
    sessionIdleTimeoutMs: valid.FILESHARE_SESSION_IDLE_TIMEOUT_MS,
    requireTwoFactor: valid.FILESHARE_REQUIRE_TWO_FACTOR,
    /** The key of the TOTP secrets at rest (services/two-factor-secret.ts); undefined: stored as they are. */
    twoFactorKey: valid.FILESHARE_TWO_FACTOR_KEY?.toLowerCase(),
    headersTimeoutMs: valid.FILESHARE_HEADERS_TIMEOUT_MS,
    idleTimeoutMs: valid.FILESHARE_IDLE_TIMEOUT_MS,
    shutdownTimeoutMs: valid.FILESHARE_SHUTDOWN_TIMEOUT_MS,
    backendTimeoutMs: valid.FILESHARE_BACKEND_TIMEOUT_MS,
    gcIntervalMs: valid.FILESHARE_GC_INTERVAL_MS,
    gcGraceMs: valid.FILESHARE_GC_GRACE_MS,
    uploadExpiryMs: valid.FILESHARE_UPLOAD_EXPIRY_MS,
    auditIp: valid.FILESHARE_AUDIT_IP,
    webhooks: {
      allowPrivate: valid.FILESHARE_WEBHOOKS_ALLOW_PRIVATE,
      allowHttp: valid.FILESHARE_WEBHOOKS_ALLOW_HTTP,
      deliver: valid.FILESHARE_WEBHOOKS_DELIVER,
    },
    auditRetentionMs: valid.FILESHARE_AUDIT_RETENTION_DAYS * 86_400_000,
    scan: valid.FILESHARE_CLAMD
      ? {
          clamd: parseClamdAddress(valid.FILESHARE_CLAMD),
          mode: valid.FILESHARE_SCAN ?? ('required' as const),
          maxBytes: valid.FILESHARE_SCAN_MAX_BYTES,
          timeoutMs: valid.FILESHARE_SCAN_TIMEOUT_MS,
          concurrency: valid.FILESHARE_SCAN_CONCURRENCY,
        }
      : undefined,
    uploadRequests: {
      maxLifetimeMs: valid.FILESHARE_UPLOAD_REQUEST_MAX_DAYS * 86_400_000,
      guestRequestsPerMinute: valid.FILESHARE_GUEST_REQUESTS_PER_MINUTE,
      guestRequestsPerDay: valid.FILESHARE_GUEST_REQUESTS_PER_DAY,
    },
    databaseUrl: valid.FILESHARE_DATABASE_URL,
    databaseSchema: valid.FILESHARE_DATABASE_SCHEMA,
    databasePoolSize: valid.FILESHARE_DATABASE_POOL_SIZE,
    storage: valid.FILESHARE_STORAGE,
    s3: {
      bucket: valid.FILESHARE_S3_BUCKET ?? '',
      endpoint: valid.FILESHARE_S3_ENDPOINT,
      region: valid.FILESHARE_S3_REGION,
      forcePathStyle: valid.FILESHARE_S3_FORCE_PATH_STYLE,
      prefix: valid.FILESHARE_S3_PREFIX,
      partSize: valid.FILESHARE_S3_PART_SIZE,
      queueSize: valid.FILESHARE_S3_QUEUE_SIZE,
    },
    redisUrl: valid.FILESHARE_REDIS_URL,
    redisPrefix: valid.FILESHARE_REDIS_PREFIX,
    /** Where GET /metrics listens (server.ts), apart from the API; unset: metrics are neither kept nor served. */
    metrics: parseMetricsAddress(valid.FILESHARE_METRICS_ADDR),
  })
}

export type Config = ReturnType<typeof loadConfig>
