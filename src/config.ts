import path from 'node:path'
import { Type, type Static } from 'typebox'
import { Value } from 'typebox/value'

/** The request and account limits of one plan. `free` carries limits too but has no API access. */
const PlanLimitsSchema = Type.Object(
  {
    api_access: Type.Boolean(),
    requests_per_minute: Type.Integer({ minimum: 1 }),
    requests_per_day: Type.Integer({ minimum: 1 }),
    max_file_size: Type.Integer({ minimum: 0 }),
    daily_uploads: Type.Integer({ minimum: 0 }),
  },
  { additionalProperties: false },
)
export type PlanLimits = Static<typeof PlanLimitsSchema>

export const PLAN_NAMES = ['free', 'pro', 'business', 'enterprise'] as const
export type PlanName = (typeof PLAN_NAMES)[number]

export const DEFAULT_PLANS: Readonly<Record<PlanName, PlanLimits>> = {
  free: { api_access: false, requests_per_minute: 1, requests_per_day: 1, max_file_size: 0, daily_uploads: 0 },
  pro: { api_access: true, requests_per_minute: 50, requests_per_day: 5000, max_file_size: 5368709120, daily_uploads: 500 },
  business: { api_access: true, requests_per_minute: 100, requests_per_day: 10000, max_file_size: 10737418240, daily_uploads: 2000 },
  enterprise: { api_access: true, requests_per_minute: 1000, requests_per_day: 100000, max_file_size: 53687091200, daily_uploads: 20000 },
}

/** FILESHARE_PLANS: a JSON object whose entries override figures of the default plan table. */
const PlanOverridesSchema = Type.Object(
  Object.fromEntries(PLAN_NAMES.map((name) => [name, Type.Optional(Type.Partial(PlanLimitsSchema))])),
  { additionalProperties: false },
)

const Integer = (options: { default: number; minimum?: number; maximum?: number }) =>
  Type.Integer({ minimum: 0, ...options })

/** Every environment variable the service reads. Values arrive as strings and are converted. */
export const EnvSchema = Type.Object({
  PORT: Integer({ default: 3000, maximum: 65535 }),
  HOST: Type.String({ default: '0.0.0.0', minLength: 1 }),
  FILESHARE_DATA_DIR: Type.String({ default: './data', minLength: 1 }),
  FILESHARE_PUBLIC_URL: Type.Optional(Type.String({ pattern: '^https?://[^/?#]+(/[^?#]*)?$' })),
  FILESHARE_LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((level) => Type.Literal(level)),
    { default: 'info' },
  ),
  FILESHARE_TRUST_PROXY: Type.Boolean({ default: false }),
  FILESHARE_PLANS: Type.String({ default: '{}' }),
  FILESHARE_CACHE_TTL_MS: Integer({ default: 4000, maximum: 5000 }),
  FILESHARE_AUTH_FAILURES_PER_MINUTE: Integer({ default: 30, minimum: 1 }),
  FILESHARE_DOWNLOADS_PER_MINUTE: Integer({ default: 600, minimum: 1 }),
  FILESHARE_HEADERS_TIMEOUT_MS: Integer({ default: 30_000, minimum: 1 }),
  FILESHARE_IDLE_TIMEOUT_MS: Integer({ default: 60_000, minimum: 1 }),
  FILESHARE_SHUTDOWN_TIMEOUT_MS: Integer({ default: 30_000, minimum: 0 }),
})
export type Env = Static<typeof EnvSchema>

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
  const error = Value.Errors(PlanOverridesSchema, overrides)[0]
  if (error) throw new ConfigError('FILESHARE_PLANS', `${error.instancePath || '(root)'} ${error.message}`)
  const valid = overrides as Partial<Record<PlanName, Partial<PlanLimits>>>
  return Object.fromEntries(
    PLAN_NAMES.map((name) => [name, Object.freeze({ ...DEFAULT_PLANS[name], ...valid[name] })]),
  ) as Record<PlanName, PlanLimits>
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const inner of Object.values(value)) deepFreeze(inner)
    Object.freeze(value)
  }
  return value
}

/**
 * Reads and validates the environment once. Throws ConfigError naming the first bad variable.
 * Empty strings count as unset so that `FOO= npm start` falls back to the default.
 */
export function loadConfig(source: Record<string, string | undefined> = process.env) {
  const picked: Record<string, string> = {}
  for (const name of Object.keys(EnvSchema.properties)) {
    const raw = source[name]
    if (raw !== undefined && raw !== '') picked[name] = raw.trim()
  }
  const env = Value.Convert(EnvSchema, Value.Default(EnvSchema, picked))
  const error = Value.Errors(EnvSchema, env)[0]
  if (error) {
    const variable = error.instancePath.replace(/^\//, '') || 'environment'
    throw new ConfigError(variable, `${error.message} (got ${JSON.stringify(picked[variable] ?? '')})`)
  }
  const valid = env as Env
  const dataDir = path.resolve(valid.FILESHARE_DATA_DIR)
  return deepFreeze({
    port: valid.PORT,
    host: valid.HOST,
    dataDir,
    sqlitePath: path.join(dataDir, 'fileshare.sqlite'),
    blobDir: path.join(dataDir, 'blobs'),
    publicUrl: (valid.FILESHARE_PUBLIC_URL ?? `http://localhost:${valid.PORT}`).replace(/\/+$/, ''),
    logLevel: valid.FILESHARE_LOG_LEVEL,
    trustProxy: valid.FILESHARE_TRUST_PROXY,
    plans: parsePlans(valid.FILESHARE_PLANS),
    cacheTtlMs: valid.FILESHARE_CACHE_TTL_MS,
    authFailuresPerMinute: valid.FILESHARE_AUTH_FAILURES_PER_MINUTE,
    downloadsPerMinute: valid.FILESHARE_DOWNLOADS_PER_MINUTE,
    headersTimeoutMs: valid.FILESHARE_HEADERS_TIMEOUT_MS,
    idleTimeoutMs: valid.FILESHARE_IDLE_TIMEOUT_MS,
    shutdownTimeoutMs: valid.FILESHARE_SHUTDOWN_TIMEOUT_MS,
  })
}

export type Config = ReturnType<typeof loadConfig>
