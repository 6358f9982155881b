/** The soak's settings, from the environment; the defaults are those of a plain `npm run soak`. */

function envInteger(name: string, fallback: number, minimum = 1): number {
  const raw = process.env[name]?.trim()
  if (!raw) return fallback
  if (!/^[0-9]+$/.test(raw) || Number(raw) < minimum) throw new Error(`${name} must be an integer >= ${minimum}, got "${raw}"`)
  return Number(raw)
}

export const SETTINGS = {
  seconds: envInteger('SOAK_SECONDS', 180),
  clients: envInteger('SOAK_CLIENTS', 32),
  accounts: envInteger('SOAK_ACCOUNTS', 4),
  settleSeconds: envInteger('SOAK_SETTLE_SECONDS', 30, 0),
  maxFileBytes: envInteger('SOAK_MAX_FILE_BYTES', 4 * 1024 * 1024),
  /** Above this many files an account only shrinks, so the data set (and the disk) stays bounded. */
  maxFilesPerAccount: envInteger('SOAK_MAX_FILES_PER_ACCOUNT', 150),
}
export const WRITE_REPORT = process.env.SOAK_WRITE_REPORT !== '0'
