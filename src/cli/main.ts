import { parseArgs } from 'node:util'
import { ConfigError, loadConfig, type Config } from '../config.js'
import { openDatabase } from '../db/open-database.js'
import { migrateToLatest } from '../db/migrate.js'
import { AppError } from '../errors.js'
import { createServices, type Services } from '../services/create-services.js'
import { openBlobStore } from '../storage/open-blob-store.js'

export const USAGE = `Usage: fileshare <command>

  serve                                   start the HTTP server
  migrate                                 bring the database schema up to date
  account create --email E --plan P [--json]
  account list [--json]
  account set-plan ID PLAN                PLAN: free, pro, business, enterprise
  account set-limits ID [--requests-per-minute N] [--requests-per-day N]
                        [--max-file-size BYTES] [--daily-uploads N]
                                          (the value "default" clears an override)
  key create ACCOUNT_ID [--name NAME] [--json]
  key list ACCOUNT_ID [--json]
  key revoke KEY_ID

Settings come from the same environment variables as the server (see README).`

export class UsageError extends Error {}

type Output = { json: boolean; print: (line: string) => void }

function positiveId(value: string | undefined, what: string): number {
  if (value === undefined || !/^[1-9][0-9]*$/.test(value) || !Number.isSafeInteger(Number(value))) {
    throw new UsageError(`${what} must be a positive integer${value === undefined ? '' : `, got "${value}"`}.`)
  }
  return Number(value)
}

function limitValue(value: string | undefined, flag: string): number | null | undefined {
  if (value === undefined) return undefined
  if (value === 'default') return null
  if (!/^[0-9]+$/.test(value) || !Number.isSafeInteger(Number(value))) {
    throw new UsageError(`--${flag} must be a non-negative integer or "default", got "${value}".`)
  }
  return Number(value)
}

function formatTime(epochMs: number | null): string {
  return epochMs === null ? '-' : new Date(epochMs).toISOString()
}

async function withServices<T>(config: Config, run: (services: Services) => Promise<T>): Promise<T> {
  const database = await openDatabase(config)
  try {
    return await run(createServices(database, await openBlobStore(config), config))
  } finally {
    await database.db.destroy()
  }
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
  help: { type: 'boolean', short: 'h' },
} as const

/** Runs one CLI command. Returns the exit code; output goes through `print`. */
export async function runCli(argv: string[], env: NodeJS.ProcessEnv, print: (line: string) => void): Promise<number> {
  let parsed
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true })
  } catch (error) {
    throw new UsageError((error as Error).message)
  }
  const { values, positionals } = parsed
  const [group, action, ...rest] = positionals
  if (values.help || group === undefined || group === 'help') {
    print(USAGE)
    return 0
  }
  const config = loadConfig(env)
  const out: Output = { json: values.json ?? false, print }
  const command = action === undefined ? group : `${group} ${action}`

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
      if (!values.email || !values.plan) throw new UsageError('account create needs --email and --plan.')
      const { account, apiKey, keyId } = await withServices(config, (s) => s.accounts.create(values.email!, values.plan!))
      if (out.json) print(JSON.stringify({ account_id: account.account_id, email: account.email, plan: account.plan, key_id: keyId, api_key: apiKey }))
      else print(`Created account ${account.account_id} (${account.email}, ${account.plan}).\nAPI key (shown once, keep it secret): ${apiKey}`)
      return 0
    }
    case 'account list': {
      const accounts = await withServices(config, (s) => s.accounts.list())
      if (out.json) print(JSON.stringify(accounts))
      else for (const a of accounts) print(`${a.account_id}\t${a.email}\t${a.plan}\t${JSON.stringify(a.overrides)}`)
      return 0
    }
    case 'account set-plan': {
      const id = positiveId(rest[0], 'ID')
      if (!rest[1]) throw new UsageError('account set-plan needs ID and PLAN.')
      const account = await withServices(config, (s) => s.accounts.setPlan(id, rest[1]!))
      print(out.json ? JSON.stringify(account) : `Account ${id} is now on the ${account.plan} plan.`)
      return 0
    }
    case 'account set-limits': {
      const id = positiveId(rest[0], 'ID')
      const overrides = Object.fromEntries(
        (
          [
            ['requests_per_minute', 'requests-per-minute'],
            ['requests_per_day', 'requests-per-day'],
            ['max_file_size', 'max-file-size'],
            ['daily_uploads', 'daily-uploads'],
          ] as const
        )
          .map(([column, flag]) => [column, limitValue(values[flag], flag)] as const)
          .filter(([, value]) => value !== undefined),
      )
      if (Object.keys(overrides).length === 0) throw new UsageError('account set-limits needs at least one limit flag.')
      const account = await withServices(config, (s) => s.accounts.setLimits(id, overrides))
      print(out.json ? JSON.stringify(account) : `Limits of account ${id}: ${JSON.stringify(account.overrides)}`)
      return 0
    }
    case 'key create': {
      const accountId = positiveId(rest[0], 'ACCOUNT_ID')
      const { key, apiKey } = await withServices(config, (s) => s.apiKeys.create(accountId, values.name))
      if (out.json) print(JSON.stringify({ key_id: key.key_id, account_id: key.account_id, name: key.name, api_key: apiKey }))
      else print(`Created key ${key.key_id} for account ${accountId}.\nAPI key (shown once, keep it secret): ${apiKey}`)
      return 0
    }
    case 'key list': {
      const keys = await withServices(config, (s) => s.apiKeys.list(positiveId(rest[0], 'ACCOUNT_ID')))
      if (out.json) print(JSON.stringify(keys))
      else
        for (const k of keys) {
          const state = k.revoked_at === null ? 'active' : `revoked ${formatTime(k.revoked_at)}`
          print(`${k.key_id}\t${k.prefix}…\t${k.name}\tcreated ${formatTime(k.created_at)}\tlast used ${formatTime(k.last_used_at)}\t${state}`)
        }
      return 0
    }
    case 'key revoke': {
      const key = await withServices(config, (s) => s.apiKeys.revoke(positiveId(rest[0], 'KEY_ID')))
      print(out.json ? JSON.stringify(key) : `Key ${key.key_id} is revoked.`)
      return 0
    }
    default:
      throw new UsageError(`Unknown command "${positionals.join(' ')}". Run "fileshare help".`)
  }
}

/** Some messages (node:util parseArgs) span several lines; scripts expect exactly one. */
function oneLine(message: string): string {
  return message.replace(/\s*\n\s*/g, ' ').trim()
}

/** Entry point of bin/fileshare.js: one-line errors, non-zero exit codes. */
export async function main(argv = process.argv.slice(2)): Promise<void> {
  try {
    const code = await runCli(argv, process.env, (line) => console.log(line))
    if (code >= 0) process.exitCode = code
  } catch (error) {
    if (error instanceof UsageError || error instanceof ConfigError || error instanceof AppError) {
      console.error(`fileshare: ${oneLine(error.message)}`)
      process.exitCode = error instanceof UsageError ? 2 : 1
      return
    }
    console.error(`fileshare: ${oneLine(String((error as Error).message ?? error))}`)
    process.exitCode = 1
  }
}
