/** The soak's settings, from the environment; the defaults are those of a plain `npm run soak`. */

function envInteger(name: string, fallback: number, minimum = 1): number {
  const raw = process.env[name]?.trim()
  if (!raw) return fallback
  if (!/^[0-9]+$/.test(raw) || Number(raw) < minimum) throw new Error(`${name} must be an integer >= ${minimum}, got "${raw}"`)
  return Number(raw)
}

/** The settings of a plain `npm run soak`. */
export const DEFAULTS = {
  seconds: 180,
  clients: 32,
  accounts: 4,
  settleSeconds: 30,
  maxFileBytes: 4 * 1024 * 1024,
  maxFilesPerAccount: 150,
}

/** The environment variable of each setting. */
export const SETTING_NAMES: Record<keyof typeof DEFAULTS, string> = {
  seconds: 'SOAK_SECONDS',
  clients: 'SOAK_CLIENTS',
  accounts: 'SOAK_ACCOUNTS',
  settleSeconds: 'SOAK_SETTLE_SECONDS',
  maxFileBytes: 'SOAK_MAX_FILE_BYTES',
  maxFilesPerAccount: 'SOAK_MAX_FILES_PER_ACCOUNT',
}

export const SETTINGS = {
  seconds: envInteger(SETTING_NAMES.seconds, DEFAULTS.seconds),
  clients: envInteger(SETTING_NAMES.clients, DEFAULTS.clients),
  accounts: envInteger(SETTING_NAMES.accounts, DEFAULTS.accounts),
  settleSeconds: envInteger(SETTING_NAMES.settleSeconds, DEFAULTS.settleSeconds, 0),
  maxFileBytes: envInteger(SETTING_NAMES.maxFileBytes, DEFAULTS.maxFileBytes),
  /** Above this many files an account only shrinks, so the data set (and the disk) stays bounded. */
  maxFilesPerAccount: envInteger(SETTING_NAMES.maxFilesPerAccount, DEFAULTS.maxFilesPerAccount),
}

/**
 * The command line that repeats this run: `npm run soak` with the settings that differ from the
 * defaults, and the extra server flags, if any.
 */
export function soakCommand(settings: typeof DEFAULTS = SETTINGS, serverFlags = process.env.BENCH_SERVER_NODE_FLAGS?.trim() ?? ''): string {
  const changed = (Object.keys(DEFAULTS) as Array<keyof typeof DEFAULTS>)
    .filter((key) => settings[key] !== DEFAULTS[key])
    .map((key) => `${SETTING_NAMES[key]}=${settings[key]}`)
  if (serverFlags) changed.push(`BENCH_SERVER_NODE_FLAGS="${serverFlags}"`)
  return [...changed, 'npm run soak'].join(' ')
}
export const WRITE_REPORT = process.env.SOAK_WRITE_REPORT !== '0'

/**
 * The chaos soak on the scale-out stack (`npm run soak -- --stack scale-out --chaos`): its own
 * defaults where the embedded soak's do not fit (30 minutes, 60 s cuts), the same variables.
 */
export const CHAOS_DEFAULTS = {
  seconds: 1800,
  clients: 16,
  cutSeconds: 60,
}

export const CHAOS_SETTINGS = {
  seconds: process.env[SETTING_NAMES.seconds]?.trim() ? SETTINGS.seconds : CHAOS_DEFAULTS.seconds,
  clients: process.env[SETTING_NAMES.clients]?.trim() ? SETTINGS.clients : CHAOS_DEFAULTS.clients,
  cutSeconds: envInteger('SOAK_CUT_SECONDS', CHAOS_DEFAULTS.cutSeconds),
}

/** The command line that repeats a chaos run: the settings that differ from its defaults, then the command. */
export function chaosCommand(): string {
  const changed: string[] = []
  if (CHAOS_SETTINGS.seconds !== CHAOS_DEFAULTS.seconds) changed.push(`${SETTING_NAMES.seconds}=${CHAOS_SETTINGS.seconds}`)
  if (CHAOS_SETTINGS.clients !== CHAOS_DEFAULTS.clients) changed.push(`${SETTING_NAMES.clients}=${CHAOS_SETTINGS.clients}`)
  if (CHAOS_SETTINGS.cutSeconds !== CHAOS_DEFAULTS.cutSeconds) changed.push(`SOAK_CUT_SECONDS=${CHAOS_SETTINGS.cutSeconds}`)
  for (const key of ['accounts', 'settleSeconds', 'maxFileBytes', 'maxFilesPerAccount'] as const) {
    if (SETTINGS[key] !== DEFAULTS[key]) changed.push(`${SETTING_NAMES[key]}=${SETTINGS[key]}`)
  }
  return [...changed, 'npm run soak -- --stack scale-out --chaos'].join(' ')
}
