import fs from 'node:fs'
import { parseArgs } from 'node:util'
import { UNLIMITED_STORAGE } from '../services/account-limits.js'
import { openBackends, type Backends } from '../backends.js'
import { ConfigError, loadConfig, type Config } from '../config.js'
import { openDatabase } from '../db/open-database.js'
import { migrateToLatest } from '../db/migrate.js'
import { AppError, InvalidParameterError } from '../errors.js'
import { parsePlan } from '../services/accounts.js'
import { InvalidKeyNameError, keyName, type KeyOptions } from '../services/api-keys.js'
import { ALL_SCOPES, allowedIpList, grantedScopes, InvalidKeyPolicyError, storedAllowedIps, storedScopes } from '../services/key-policy.js'
import { OPERATOR_ACTOR, type AuditEvent } from '../services/audit.js'
import type { Services } from '../services/create-services.js'
import type { GarbageCollectionReport } from '../services/garbage-collector.js'
import { BackupError, BackupService } from '../services/backups.js'
import { createBlobVerifier } from '../services/blob-verifier.js'
import {
  backupReportJson,
  formatBackupReport,
  formatRestoreReport,
  formatVerifyReport,
  restoreReportJson,
  verifyReportJson,
} from './present-backups.js'
import { presentAccount, presentEmailChange, presentKey, printable } from './present.js'
import { TwoFactorSecretsRepository } from '../db/repositories/two-factor-secrets-repository.js'
import { TwoFactorSecretEncryption } from '../services/two-factor-encryption.js'
import { TwoFactorSecretBox } from '../services/two-factor-secret.js'

export const USAGE = `Usage: fileshare <command>

  serve                                   start the HTTP server
  migrate                                 bring the database schema up to date
  account create --email E --plan P [--json]
  account list [--json]
  account set-plan ID PLAN                PLAN: free, pro, business, enterprise
  account set-limits ID [--requests-per-minute N] [--requests-per-day N]
                        [--max-file-size BYTES] [--daily-uploads N]
                        [--max-storage BYTES|unlimited]
                                          (the value "default" clears an override)
  account invite ID [--json]              print a one-time link (valid 7 days) with which the
                                          account holder chooses a dashboard password
  account set-password ID                 set the dashboard password, read from stdin (a
                                          terminal prompts without echo); never an argument
  account email-changes [--json]          email changes holders asked for in the dashboard,
                                          waiting for confirmation (no mail is sent)
  account confirm-email ID [--json]       make the account's pending email change its email
                                          (check first that the holder owns the new address);
                                          an address another account has declines the change
  account reset-two-factor ID             turn off the account's two-factor sign-in (a holder
                                          who lost the device and the recovery codes)
  two-factor encrypt-secrets [--dry-run] [--unchecked-key] [--json]
                                          encrypt under FILESHARE_TWO_FACTOR_KEY the two-factor
                                          secrets stored before it was set; nothing is encrypted
                                          (exit 1) if a stored secret does not decrypt with it,
                                          or if none is encrypted yet to check the key against
                                          (--unchecked-key: it is the servers', encrypt anyway)
  key create ACCOUNT_ID [--name NAME] [--scopes S,S,...] [--allow-ip CIDR]...
                        [--expires-in 30d|12h|90m|SECONDS] [--json]
                                          scopes: files:read, files:write, files:delete,
                                          links:read, links:write, stats:read, webhooks:manage,
                                          requests:manage, audit:read, or * (all; the default);
                                          --allow-ip: an address or CIDR range, repeatable or
                                          comma-separated (default: any address)
  key list ACCOUNT_ID [--json]
  key revoke KEY_ID
  audit --account ID [--since DATE] [--action ACTION] [--limit N] [--json]
                                          the account's audit log, newest first; DATE: UTC
                                          YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ; ACTION: a name
                                          (file.deleted) or a family (file.*)
  gc [--grace-seconds N] [--dry-run] [--json]
                                          remove blobs no file refers to and leftovers of
                                          interrupted uploads, if older than N seconds
                                          (default FILESHARE_GC_GRACE_MS); use 0 only while
                                          no server runs on the data
  backup DIR [--json]                     copy the embedded stack (database and blobs) into the
                                          empty or new folder DIR while the server runs
  restore DIR [--json]                    restore a backup into the empty data folder, checking
                                          every blob against the backup's manifest
  verify [--sample N] [--grace-seconds N] [--json]
                                          re-hash stored blobs (all, or N at random) against their
                                          recorded SHA-256; report damaged and missing blobs and
                                          blobs no file refers to (older than N seconds); exits 1
                                          if anything is found

Settings come from the same environment variables as the server (docs/configuration.md).`

export class UsageError extends Error {}

/** The embedded stack's SQLite file is missing: the data folder is wrong, or no `migrate` ran yet. */
export class MissingDatabaseError extends Error {}

type Output = { json: boolean; print: (line: string) => void }

function positiveId(value: string | undefined, what: string): number {
  if (value === undefined || !/^[1-9][0-9]*$/.test(value) || !Number.isSafeInteger(Number(value))) {
    throw new UsageError(`${what} must be a positive integer${value === undefined ? '' : `, got "${value}"`}.`)
  }
  return Number(value)
}

/**
 * The positional arguments after the command's words, refusing more than `names` (the usage's
 * placeholders): a word too many is a mistake, never to be ignored.
 */
function positionalArguments(command: string, rest: string[], names: string[]): Array<string | undefined> {
  if (rest.length > names.length) {
    const takes = names.length === 0 ? 'no arguments' : names.join(' ')
    throw new UsageError(`Unexpected argument "${rest[names.length]}": ${command} takes ${takes}.`)
  }
  return names.map((_name, index) => rest[index])
}

/** Request rates of 0 would lock the account out with a 429 forever (as in the plan table). */
const LIMIT_MINIMUMS = {
  'requests-per-minute': 1,
  'requests-per-day': 1,
  'max-file-size': 0,
  'daily-uploads': 0,
  'max-storage': 0,
} as const

function limitValue(value: string | undefined, flag: keyof typeof LIMIT_MINIMUMS): number | null | undefined {
  if (value === undefined) return undefined
  if (value === 'default') return null
  if (flag === 'max-storage' && value === 'unlimited') return UNLIMITED_STORAGE
  const minimum = LIMIT_MINIMUMS[flag]
  if (!/^[0-9]+$/.test(value) || !Number.isSafeInteger(Number(value)) || Number(value) < minimum) {
    const expected = minimum === 0 ? 'a non-negative integer' : `an integer of at least ${minimum}`
    const words = flag === 'max-storage' ? '"unlimited" or "default"' : '"default"'
    throw new UsageError(`--${flag} must be ${expected}, ${words}, got "${value}".`)
  }
  return Number(value)
}

/** A plan name as the services take it, refused here as a usage error. */
function planName(value: string): string {
  try {
    return parsePlan(value)
  } catch (error) {
    throw new UsageError((error as Error).message)
  }
}

/** A duration of `key create --expires-in`: 30d, 12h, 90m, 45s or plain seconds, in ms. */
function durationOption(value: string): number {
  const match = /^([1-9][0-9]*)([dhms]?)$/.exec(value)
  const unit = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1000, '': 1000 }[match?.[2] ?? ''] ?? 1000
  const ms = match ? Number(match[1]) * unit : NaN
  if (!Number.isSafeInteger(ms) || ms > 100 * 365 * 86_400_000) {
    throw new UsageError(
      `--expires-in must be a positive duration such as 30d, 12h, 90m or 3600 (seconds), at most 100 years; got "${value}".`,
    )
  }
  return ms
}

/** The scopes, addresses and expiry of `key create`, checked by the key service's rules, refused here as usage errors. */
function keyPolicyOptions(values: { scopes?: string; 'allow-ip'?: string[]; 'expires-in'?: string }): KeyOptions {
  const scopes = values.scopes === undefined ? undefined : values.scopes.split(',')
  const allowedIps = values['allow-ip']?.flatMap((entry) => entry.split(','))
  try {
    storedScopes(scopes)
    storedAllowedIps(allowedIps)
  } catch (error) {
    if (error instanceof InvalidKeyPolicyError)
      throw new UsageError(`--${error.field === 'scopes' ? 'scopes' : 'allow-ip'}: ${error.message}`)
    throw error
  }
  if (allowedIps !== undefined && allowedIps.every((entry) => entry.trim() === ''))
    throw new UsageError('--allow-ip needs an address or CIDR range.')
  return { scopes, allowedIps, expiresInMs: values['expires-in'] === undefined ? undefined : durationOption(values['expires-in']) }
}

/** One line of `fileshare audit`: when, what, who, from where, on what, with its details. */
function formatAuditEvent(event: AuditEvent): string {
  const actor = `${event.actor.type}${event.actor.id === null ? '' : ` ${event.actor.id}`}${event.actor.name ? ` (${event.actor.name})` : ''}`
  const target = event.target === null ? '-' : `${event.target.type} ${event.target.id ?? ''}`.trim()
  return `${event.event_id}\t${formatTime(event.at)}\t${event.action}\t${actor}\t${event.ip ?? '-'}\t${target}\t${oneLine(JSON.stringify(event.details))}`
}

/** The --name of `key create`, by the key service's rule (src/services/api-keys.ts), refused here as a usage error. */
function keyNameOption(value: string | undefined): string {
  try {
    return keyName(value)
  } catch (error) {
    if (error instanceof InvalidKeyNameError) throw new UsageError(`--name: ${error.message}`)
    throw error
  }
}

function graceSeconds(value: string): number {
  if (!/^[0-9]+$/.test(value) || !Number.isSafeInteger(Number(value) * 1000)) {
    throw new UsageError(`--grace-seconds must be a non-negative integer, got "${value}".`)
  }
  return Number(value)
}

function gcReportJson(report: GarbageCollectionReport) {
  return {
    dry_run: report.dryRun,
    grace_seconds: report.graceMs / 1000,
    blobs_scanned: report.blobsScanned,
    blobs_removed: report.blobsRemoved,
    blob_bytes_removed: report.blobBytesRemoved,
    recent_blobs_kept: report.recentBlobsKept,
    unfinished_writes_removed: report.unfinishedWritesRemoved,
    unfinished_write_bytes_removed: report.unfinishedWriteBytesRemoved,
    recent_unfinished_writes_kept: report.recentUnfinishedWritesKept,
    resumable_uploads_expired: report.uploadsExpired,
    files_expired: report.filesExpired,
    expired_file_bytes_removed: report.expiredFileBytesRemoved,
    revoked_links_removed: report.revokedLinksRemoved,
    download_grants_removed: report.grantsRemoved,
    storage_reservations_released: report.reservationsReleased,
    idempotency_keys_removed: report.idempotencyKeysRemoved,
    audit_events_removed: report.auditEventsRemoved,
    webhook_messages_removed: report.webhookMessagesRemoved,
    open_resumable_upload_writes_kept: report.openUploadWritesKept,
    bytes_freed: report.bytesFreed,
    failures: report.failures,
  }
}

function formatGcReport(report: GarbageCollectionReport): string {
  const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? '' : 's'}`
  const found =
    `${plural(report.blobsRemoved, 'unreferenced blob')} (${report.blobBytesRemoved} bytes) and ` +
    `${plural(report.unfinishedWritesRemoved, 'unfinished upload')} (${report.unfinishedWriteBytesRemoved} bytes)`
  const lines = [
    report.dryRun
      ? `Dry run, nothing removed: would remove ${found}, freeing ${report.bytesFreed} bytes.`
      : `Removed ${found}: ${report.bytesFreed} bytes freed.`,
    `Scanned ${plural(report.blobsScanned, 'blob')}; kept ${plural(report.recentBlobsKept, 'blob')} and ` +
      `${plural(report.recentUnfinishedWritesKept, 'unfinished upload')} younger than the grace period (${report.graceMs / 1000} s).`,
  ]
  if (report.uploadsExpired > 0 || report.openUploadWritesKept > 0) {
    lines.push(
      `Resumable uploads: ${plural(report.uploadsExpired, 'expired upload')} ended; ` +
        `kept the bytes of ${plural(report.openUploadWritesKept, 'open upload')} that may still resume.`,
    )
  }
  if (report.filesExpired > 0) {
    lines.push(`Expired files: ${plural(report.filesExpired, 'file')} removed (${report.expiredFileBytesRemoved} bytes).`)
  }
  if (report.failures > 0) lines.push(`${plural(report.failures, 'removal')} failed; run gc again to retry.`)
  return lines.join('\n')
}

function formatTime(epochMs: number | null): string {
  return epochMs === null ? '-' : new Date(epochMs).toISOString()
}

/**
 * On the embedded stack, every command but `migrate` and `serve` works on an existing database
 * only: opening a missing one would create an empty database (and its folder) next to the
 * server's, which then knows nothing of what the command did.
 */
function requireDatabase(config: Config): void {
  if (config.databaseUrl || fs.existsSync(config.sqlitePath)) return
  throw new MissingDatabaseError(
    `no database at ${config.sqlitePath}; set FILESHARE_DATA_DIR to the server's data folder, or run "fileshare migrate" to create one`,
  )
}

/** Backup and restore copy files of the embedded stack; the scale-out stack has its own tools (docs/scale-out.md). */
function requireEmbeddedStack(config: Config, command: string): void {
  if (!config.databaseUrl && config.storage === 'fs') return
  throw new BackupError(
    `fileshare ${command} works on the embedded stack (SQLite and a data folder); back up PostgreSQL and S3 as docs/scale-out.md says.`,
  )
}

/** The folder argument of backup and restore. */
function folderArgument(command: string, value: string | undefined): string {
  if (value === undefined || value === '') throw new UsageError(`${command} needs DIR, the backup folder.`)
  return value
}

function sampleSize(value: string | undefined): number | undefined {
  if (value === undefined) return undefined
  if (!/^[1-9][0-9]*$/.test(value) || !Number.isSafeInteger(Number(value))) {
    throw new UsageError(`--sample must be a positive integer, got "${value}".`)
  }
  return Number(value)
}

/** Opens the configured backends for one command (the CLI limits no requests: no Redis), and closes them after. */
async function withBackends<T>(
  config: Config,
  run: (backends: Backends) => Promise<T>,
  onBackgroundError?: (error: unknown) => void,
): Promise<T> {
  requireDatabase(config)
  const backends = await openBackends(config, { sharedLimits: false, ...(onBackgroundError ? { onBackgroundError } : {}) })
  try {
    return await run(backends)
  } finally {
    await backends.close()
  }
}

function withServices<T>(
  config: Config,
  run: (services: Services) => Promise<T>,
  onBackgroundError?: (error: unknown) => void,
): Promise<T> {
  return withBackends(config, (backends) => run(backends.services), onBackgroundError)
}

const OPTIONS = {
  json: { type: 'boolean' },
  email: { type: 'string' },
  plan: { type: 'string' },
  name: { type: 'string' },
  'requests-per-minute': { type: 'string' },
  'requests-per-day': { type: 'string' },
  'max-file-size': { type: 'string' },
  'daily-uploads': { type: 'string' },
  'max-storage': { type: 'string' },
  'grace-seconds': { type: 'string' },
  'dry-run': { type: 'boolean' },
  'unchecked-key': { type: 'boolean' },
  sample: { type: 'string' },
  scopes: { type: 'string' },
  'allow-ip': { type: 'string', multiple: true },
  'expires-in': { type: 'string' },
  account: { type: 'string' },
  since: { type: 'string' },
  action: { type: 'string' },
  limit: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const

/** The one-word commands that take positional arguments (`backup DIR`). */
const ONE_WORD_WITH_ARGUMENTS = new Set(['backup', 'restore'])

/** Runs one CLI command. Returns the exit code; output goes through `print`. */
export async function runCli(argv: string[], env: NodeJS.ProcessEnv, print: (line: string) => void): Promise<number> {
  let parsed
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true })
  } catch (error) {
    throw new UsageError((error as Error).message)
  }
  const { values, positionals } = parsed
  const [group, ...words] = positionals
  // Commands of one word take their arguments right after it; the others are "group action".
  const oneWord = group !== undefined && ONE_WORD_WITH_ARGUMENTS.has(group)
  const action = oneWord ? undefined : words[0]
  const rest = oneWord ? words : words.slice(1)
  if (values.help || group === undefined || group === 'help') {
    print(USAGE)
    return 0
  }
  const config = loadConfig(env)
  const out: Output = { json: values.json ?? false, print }
  const command = action === undefined ? group : `${group} ${action}`
  const args = (...names: string[]) => positionalArguments(command, rest, names)

  switch (command) {
    case 'serve': {
      // Loaded only here: the HTTP stack would slow down every other command.
      const { startServer } = await import('../server.js')
      await startServer(config)
      return -1 // keeps running
    }
    case 'migrate': {
      const database = await openDatabase(config) // opening migrates
      await migrateToLatest(database)
      await database.db.destroy()
      print('Database schema is up to date.')
      return 0
    }
    case 'account create': {
      args()
      if (!values.email || !values.plan) throw new UsageError('account create needs --email and --plan.')
      const plan = planName(values.plan)
      const { account, apiKey, keyId } = await withServices(config, (s) => s.accounts.create(values.email!, plan))
      if (out.json)
        print(JSON.stringify({ account_id: account.id, email: account.email, plan: account.plan, key_id: keyId, api_key: apiKey }))
      else print(`Created account ${account.id} (${account.email}, ${account.plan}).\nAPI key (shown once, keep it secret): ${apiKey}`)
      return 0
    }
    case 'account list': {
      args()
      const accounts = await withServices(config, (s) => s.accounts.list())
      const shown = accounts.map(presentAccount)
      if (out.json) print(JSON.stringify(shown))
      else for (const a of shown) print(`${a.account_id}\t${printable(a.email)}\t${a.plan}\t${JSON.stringify(a.overrides)}`)
      return 0
    }
    case 'account set-plan': {
      const [idArgument, planArgument] = args('ID', 'PLAN')
      const id = positiveId(idArgument, 'ID')
      if (!planArgument) throw new UsageError('account set-plan needs ID and PLAN.')
      const plan = planName(planArgument)
      const account = await withServices(config, (s) => s.accounts.setPlan(id, plan))
      print(out.json ? JSON.stringify(presentAccount(account)) : `Account ${id} is now on the ${account.plan} plan.`)
      return 0
    }
    case 'account set-limits': {
      const id = positiveId(args('ID')[0], 'ID')
      const overrides = Object.fromEntries(
        (
          [
            ['requests_per_minute', 'requests-per-minute'],
            ['requests_per_day', 'requests-per-day'],
            ['max_file_size', 'max-file-size'],
            ['daily_uploads', 'daily-uploads'],
            ['max_storage', 'max-storage'],
          ] as const
        )
          .map(([column, flag]) => [column, limitValue(values[flag], flag)] as const)
          .filter(([, value]) => value !== undefined),
      )
      if (Object.keys(overrides).length === 0) throw new UsageError('account set-limits needs at least one limit flag.')
      const account = await withServices(config, (s) => s.accounts.setLimits(id, overrides))
      const shown = presentAccount(account)
      print(out.json ? JSON.stringify(shown) : `Limits of account ${id}: ${JSON.stringify(shown.overrides)}`)
      return 0
    }
    case 'account invite': {
      const id = positiveId(args('ID')[0], 'ID')
      const { account, token, expiresAt } = await withServices(config, (s) => s.accountHolders.createInvite(id))
      // In the fragment: browsers never send it to a server, so it stays out of access logs.
      const link = `${config.publicUrl}/dashboard/invite#${token}`
      if (out.json) print(JSON.stringify({ account_id: id, email: account.email, invite_url: link, expires_at: formatTime(expiresAt) }))
      else print(`One-time link for ${printable(account.email)} (valid until ${formatTime(expiresAt)}; a new invite replaces it):\n${link}`)
      return 0
    }
    case 'account set-password': {
      const id = positiveId(args('ID')[0], 'ID')
      requireDatabase(config) // before the password is asked for
      const password = await readPassword()
      const account = await withServices(config, (s) => s.accountHolders.setPassword(id, password))
      print(`Set the dashboard password of account ${id} (${printable(account.email)}); its sessions were signed out.`)
      return 0
    }
    case 'account email-changes': {
      args()
      const pending = await withServices(config, (s) => s.emailChanges.listPending())
      const shown = pending.map(presentEmailChange)
      // A holder typed new_email (and maybe, long ago, email): escaped, never acted on by the terminal.
      if (out.json) print(printable(JSON.stringify(shown)))
      else if (shown.length === 0) print('No email change is pending.')
      else {
        for (const c of shown) {
          const taken = c.taken_by === null ? '' : `\tTAKEN by account ${c.taken_by}: confirming declines it`
          print(`${c.account_id}\t${printable(c.email)}\t-> ${printable(c.new_email)}\t(asked ${formatTime(c.requested_at)})${taken}`)
        }
      }
      return 0
    }
    case 'account confirm-email': {
      const id = positiveId(args('ID')[0], 'ID')
      const { account, oldEmail } = await withServices(config, (s) => s.emailChanges.confirm(id))
      if (out.json) print(printable(JSON.stringify({ account_id: id, old_email: oldEmail, email: account.email })))
      else print(`Account ${id} now signs in as ${printable(account.email)} (was ${printable(oldEmail)}).`)
      return 0
    }
    case 'account reset-two-factor': {
      const id = positiveId(args('ID')[0], 'ID')
      const removed = await withServices(config, (s) => s.twoFactor.reset(id, OPERATOR_ACTOR))
      print(
        removed
          ? `Turned off two-factor sign-in of account ${id}; its recovery codes no longer work.`
          : `Account ${id} has no two-factor sign-in; nothing changed.`,
      )
      return 0
    }
    case 'two-factor encrypt-secrets': {
      args()
      if (!config.twoFactorKey) {
        throw new ConfigError('FILESHARE_TWO_FACTOR_KEY', 'is not set: set it, as the servers have it, to encrypt the secrets with.')
      }
      const dryRun = values['dry-run'] ?? false
      const uncheckedKey = values['unchecked-key'] ?? false
      const report = await withBackends(config, ({ database }) =>
        new TwoFactorSecretEncryption(
          new TwoFactorSecretsRepository(database.db),
          new TwoFactorSecretBox(config.twoFactorKey),
        ).encryptPlainSecrets({ dryRun, uncheckedKey }),
      )
      const { encrypted, plain, alreadyEncrypted, unreadable, keyChecked } = report
      // Plain secrets left, and no encrypted one to tell whether this key is the servers'.
      const notChecked = unreadable.length === 0 && plain > 0 && !keyChecked && !uncheckedKey
      if (out.json) {
        print(
          JSON.stringify({ dry_run: dryRun, encrypted, plain, already_encrypted: alreadyEncrypted, unreadable, key_checked: keyChecked }),
        )
      } else if (notChecked) {
        print(
          `${dryRun ? 'Dry run, nothing written' : 'Nothing encrypted'}: no two-factor secret is encrypted yet, so this ` +
            "FILESHARE_TWO_FACTOR_KEY cannot be checked against the servers'. A wrong one would lock out every holder with " +
            "two-factor sign-in. Check it is the servers' (or enrol one account on a server that has it, and run this " +
            `again), then run with --unchecked-key. Stored plain, to encrypt: ${plain}.`,
        )
      } else if (unreadable.length > 0) {
        print(
          `Nothing encrypted: ${unreadable.length} two-factor secret(s) do not decrypt with this FILESHARE_TWO_FACTOR_KEY ` +
            `(accounts ${unreadable.join(', ')}). If the servers have another key, run this with theirs; if they have this ` +
            'one, those holders cannot sign in: `fileshare account reset-two-factor ID` each, then run this again. ' +
            `Stored plain: ${plain}; encrypted already (and decrypting with this key): ${alreadyEncrypted}.`,
        )
      } else if (dryRun) {
        print(
          `Dry run, nothing written. Stored plain, to encrypt: ${plain}; encrypted already (and decrypting with this key): ${alreadyEncrypted}.`,
        )
      } else {
        print(`Two-factor secrets encrypted now: ${encrypted}; encrypted already (and decrypting with this key): ${alreadyEncrypted}.`)
      }
      return report.unreadable.length > 0 || (notChecked && !dryRun) ? 1 : 0
    }
    case 'key create': {
      const accountId = positiveId(args('ACCOUNT_ID')[0], 'ACCOUNT_ID')
      const name = keyNameOption(values.name)
      const options = keyPolicyOptions(values)
      const { key, apiKey } = await withServices(config, (s) => s.apiKeys.create(accountId, name, options))
      if (out.json) print(JSON.stringify({ ...presentKey(key), api_key: apiKey }))
      else {
        const scopes = key.scopes === ALL_SCOPES ? 'every scope' : grantedScopes(key.scopes).join(', ')
        const where = key.allowed_ips === null ? 'any address' : allowedIpList(key.allowed_ips).join(', ')
        const until = key.expires_at === null ? 'never expires' : `expires ${formatTime(key.expires_at)}`
        print(
          `Created key ${key.id} for account ${accountId} (${scopes}; from ${where}; ${until}).\nAPI key (shown once, keep it secret): ${apiKey}`,
        )
      }
      return 0
    }
    case 'key list': {
      const accountId = positiveId(args('ACCOUNT_ID')[0], 'ACCOUNT_ID')
      const keys = await withServices(config, (s) => s.apiKeys.list(accountId))
      if (out.json) print(JSON.stringify(keys.map(presentKey)))
      else
        for (const k of keys) {
          const state = k.revoked_at === null ? 'active' : `revoked ${formatTime(k.revoked_at)}`
          print(
            `${k.id}\t${k.prefix}…\t${k.name}\t${k.scopes}\t${k.allowed_ips ?? 'any address'}\tcreated ${formatTime(k.created_at)}\t` +
              `last used ${formatTime(k.last_used_at)}${k.last_used_ip ? ` from ${k.last_used_ip}` : ''}\t${state}`,
          )
        }
      return 0
    }
    case 'key revoke': {
      const keyId = positiveId(args('KEY_ID')[0], 'KEY_ID')
      const key = await withServices(config, (s) => s.apiKeys.revoke(keyId))
      print(out.json ? JSON.stringify(presentKey(key)) : `Key ${key.id} is revoked.`)
      return 0
    }
    case 'audit': {
      args()
      if (values.account === undefined) throw new UsageError('audit needs --account ID.')
      const accountId = positiveId(values.account, '--account')
      const limit = values.limit === undefined ? 100 : positiveId(values.limit, '--limit')
      const { since, action } = values
      let page
      try {
        page = await withServices(config, (s) => s.auditLog.list(accountId, { limit, since, action }))
      } catch (error) {
        if (error instanceof InvalidParameterError) throw new UsageError(error.message)
        throw error
      }
      if (out.json) print(JSON.stringify(page.events.map((event) => ({ ...event, at: formatTime(event.at) }))))
      else for (const event of page.events) print(formatAuditEvent(event))
      return 0
    }
    case 'gc': {
      const graceMs = values['grace-seconds'] === undefined ? config.gcGraceMs : graceSeconds(values['grace-seconds']) * 1000
      const dryRun = values['dry-run'] ?? false
      // A removal that fails does not stop the others; say why on stderr, keeping stdout to the report.
      const report = await withServices(
        config,
        (s) => s.garbageCollector.collect({ graceMs, dryRun }),
        (error) => console.error(`fileshare: gc could not remove an item: ${oneLine(String((error as Error).message ?? error))}`),
      )
      if (out.json) print(JSON.stringify(gcReportJson(report)))
      else print(formatGcReport(report))
      return report.failures > 0 ? 1 : 0
    }
    case 'backup': {
      const dir = folderArgument(command, args('DIR')[0])
      requireEmbeddedStack(config, command)
      requireDatabase(config)
      const report = await new BackupService(config).backup(dir)
      print(out.json ? JSON.stringify(backupReportJson(report)) : formatBackupReport(report))
      return 0
    }
    case 'restore': {
      const dir = folderArgument(command, args('DIR')[0])
      requireEmbeddedStack(config, command)
      const report = await new BackupService(config).restore(dir)
      print(out.json ? JSON.stringify(restoreReportJson(report)) : formatRestoreReport(report))
      return 0
    }
    case 'verify': {
      args()
      const sample = sampleSize(values.sample)
      const graceMs = values['grace-seconds'] === undefined ? config.gcGraceMs : graceSeconds(values['grace-seconds']) * 1000
      const report = await withBackends(config, ({ database, blobStore }) =>
        createBlobVerifier(database, blobStore).verify({ ...(sample === undefined ? {} : { sample }), graceMs }),
      )
      if (out.json) print(JSON.stringify(verifyReportJson(report, graceMs)))
      else print(formatVerifyReport(report, graceMs))
      return report.damaged.length + report.missing.length + report.orphans.length > 0 ? 1 : 0
    }
    default:
      throw new UsageError(`Unknown command "${positionals.join(' ')}". Run "fileshare help".`)
  }
}

/**
 * The password for `account set-password`: the first line of stdin. Passwords never come from
 * arguments, which other users of the machine can read (ps). A terminal gets a prompt without echo.
 */
async function readPassword(stdin: NodeJS.ReadStream = process.stdin): Promise<string> {
  if (stdin.isTTY) {
    const first = await promptHidden(stdin, 'New password: ')
    if (first !== (await promptHidden(stdin, 'Repeat it: '))) throw new UsageError('The two passwords differ.')
    return first
  }
  let input = ''
  stdin.setEncoding('utf8')
  for await (const chunk of stdin) {
    input += chunk
    if (input.includes('\n')) break
  }
  const password = input.split(/\r?\n/)[0] ?? ''
  if (password === '') throw new UsageError('account set-password reads the password from stdin, which was empty.')
  return password
}

/** Reads one line from a terminal in raw mode, echoing nothing. Ctrl-C aborts. */
function promptHidden(stdin: NodeJS.ReadStream, prompt: string): Promise<string> {
  process.stderr.write(prompt)
  return new Promise((resolve, reject) => {
    let line = ''
    const finish = (error?: Error) => {
      stdin.setRawMode(false)
      stdin.pause()
      stdin.off('data', onData)
      process.stderr.write('\n')
      if (error) reject(error)
      else resolve(line)
    }
    const onData = (chunk: Buffer) => {
      for (const char of chunk.toString('utf8')) {
        if (char === '\r' || char === '\n') return finish()
        if (char === '\u0003') return finish(new UsageError('Cancelled.'))
        if (char === '\u007f' || char === '\b') line = [...line].slice(0, -1).join('')
        else line += char
      }
    }
    stdin.setRawMode(true)
    stdin.resume()
    stdin.on('data', onData)
  })
}

/** Some messages (node:util parseArgs) span several lines; scripts expect exactly one. */
function oneLine(message: string): string {
  return message.replace(/\s*\n\s*/g, ' ').trim()
}

export interface CliOutput {
  stdout(line: string): void
  stderr(line: string): void
}

/**
 * Runs one command as the `fileshare` binary would: one-line errors on stderr, and the exit code
 * (2 for usage errors, 1 for other failures, -1 for `serve`, which keeps running).
 */
export async function execute(argv: string[], env: NodeJS.ProcessEnv, output: CliOutput): Promise<number> {
  try {
    return await runCli(argv, env, (line) => output.stdout(line))
  } catch (error) {
    const known =
      error instanceof UsageError || error instanceof ConfigError || error instanceof MissingDatabaseError || error instanceof AppError
    output.stderr(`fileshare: ${oneLine(known ? error.message : String((error as Error).message ?? error))}`)
    return error instanceof UsageError ? 2 : 1
  }
}

/** Entry point of bin/fileshare.js. */
export async function main(argv = process.argv.slice(2)): Promise<void> {
  const code = await execute(argv, process.env, { stdout: (line) => console.log(line), stderr: (line) => console.error(line) })
  if (code >= 0) process.exitCode = code
}
