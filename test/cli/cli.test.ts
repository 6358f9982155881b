import { execFile } from 'node:child_process'
import fs from 'node:fs/promises'
import path from 'node:path'
import SQLite from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createDatabase, runCommand } from '../helpers/cli.js'
import { BIN, cleanEnv, ROOT, runCliWithInput, type CliResult } from '../helpers/server-process.js'
import { bearer, makeTempDir, startTestApp } from '../helpers/test-app.js'
import { MIGRATION_NAMES } from '../../src/db/migrate.js'

const KEY_PATTERN = /fsk_[A-Za-z0-9_-]{43}/g

/** Runs a command in this process against `dataDir` (test/helpers/cli.ts); fileshareProcess runs the real binary. */
function fileshare(dataDir: string, args: string[], extraEnv: Record<string, string> = {}): Promise<CliResult> {
  return runCommand(args, { FILESHARE_DATA_DIR: dataDir, ...extraEnv })
}

/** Runs the real binary, `node bin/fileshare.js ...args`, against `dataDir`. */
function fileshareProcess(dataDir: string, args: string[], extraEnv: Record<string, string> = {}): Promise<CliResult> {
  return binary(args, { FILESHARE_DATA_DIR: dataDir, ...extraEnv })
}

/** Runs the real binary in `cwd` (the checkout unless given) with exactly `env` over a clean environment. */
function binary(args: string[], env: Record<string, string>, cwd = ROOT): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { cwd, env: cleanEnv(env) }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0
      resolve({ code, stdout, stderr })
    })
  })
}

/** What every command but migrate and serve answers on a data folder without a database. */
const noDatabase = (dataDir: string) =>
  `fileshare: no database at ${path.join(dataDir, 'fileshare.sqlite')}; set FILESHARE_DATA_DIR to the server's data folder, ` +
  `or run "fileshare migrate" to create one\n`

/** Runs a command that must succeed and returns its stdout. */
async function ok(dataDir: string, ...args: string[]): Promise<string> {
  const result = await fileshare(dataDir, args)
  expect(result, `fileshare ${args.join(' ')}`).toMatchObject({ code: 0, stderr: '' })
  return result.stdout
}

async function json<T = Record<string, unknown>>(dataDir: string, ...args: string[]): Promise<T> {
  const stdout = await ok(dataDir, ...args)
  // Scripts parse the whole of stdout: exactly one JSON document.
  expect(stdout.trim().split('\n')).toHaveLength(1)
  return JSON.parse(stdout) as T
}

interface CreatedAccount {
  account_id: number
  api_key: string
}

let emailCounter = 0
const nextEmail = () => `operator${++emailCounter}@example.test`

describe('fileshare CLI', () => {
  const tempDirs: string[] = []
  const newDataDir = async () => {
    const dir = await makeTempDir('fileshare-cli-')
    tempDirs.push(dir)
    return dir
  }
  /** A new data folder with its database, as `fileshare migrate` creates it. */
  const newDatabase = async () => {
    const dir = await newDataDir()
    await createDatabase({ FILESHARE_DATA_DIR: dir })
    return dir
  }

  afterAll(async () => {
    await Promise.all(tempDirs.map((dir) => fs.rm(dir, { recursive: true, force: true })))
  })

  describe('help', () => {
    it.each(['help', '--help', ''])('fileshare %s prints the usage of every command', async (arg) => {
      const stdout = await ok(await newDataDir(), ...(arg ? [arg] : []))
      for (const command of [
        'serve',
        'migrate',
        'account create --email E --plan P [--json]',
        'account list [--json]',
        'account set-plan ID PLAN',
        'account set-limits ID',
        '--requests-per-minute N',
        '--requests-per-day N',
        '--max-file-size BYTES',
        '--daily-uploads N',
        'key create ACCOUNT_ID',
        'key list ACCOUNT_ID',
        'key revoke KEY_ID',
      ]) {
        expect(stdout).toContain(command)
      }
    })

    it('the real binary runs a command, and reports a refusal in one line with its exit code', async () => {
      const dataDir = await newDatabase()
      const created = await fileshareProcess(dataDir, ['account', 'create', '--email', nextEmail(), '--plan', 'pro', '--json'])
      expect(created).toMatchObject({ code: 0, stderr: '' })
      expect(JSON.parse(created.stdout)).toMatchObject({ account_id: 1, api_key: expect.stringMatching(/^fsk_[A-Za-z0-9_-]{43}$/) })
      expect(await fileshareProcess(dataDir, ['account', 'set-plan', 'abc', 'pro'])).toEqual({
        code: 2,
        stdout: '',
        stderr: 'fileshare: ID must be a positive integer, got "abc".\n',
      })
      expect(await fileshareProcess(dataDir, ['account', 'set-plan', '7', 'pro'])).toEqual({
        code: 1,
        stdout: '',
        stderr: 'fileshare: No account with id 7.\n',
      })
    })

    it('is what `npx fileshare` runs in a checkout', async () => {
      const pkg = JSON.parse(await fs.readFile(path.join(ROOT, 'package.json'), 'utf8')) as {
        bin: Record<string, string>
        scripts: Record<string, string>
      }
      expect(pkg.bin.fileshare).toMatch(/^(\.\/)?bin\/fileshare\.js$/)
      expect(pkg.scripts.start).toBe(
        'node --max-semi-space-size=8 --max-old-space-size=1024 --incremental-marking-soft-trigger=80 --incremental-marking-hard-trigger=95 dist/server.js',
      )
    })
  })

  describe('accounts', () => {
    let dataDir: string
    beforeAll(async () => {
      dataDir = await newDatabase()
    })

    it('account create prints the account id and a new API key', async () => {
      const email = nextEmail()
      const stdout = await ok(dataDir, 'account', 'create', '--email', email, '--plan', 'pro')
      const keys = stdout.match(KEY_PATTERN)
      expect(keys).toHaveLength(1)
      const accounts = await json<Array<{ account_id: number; email: string }>>(dataDir, 'account', 'list', '--json')
      const created = accounts.find((account) => account.email === email)!
      expect(stdout.replace(keys![0]!, '')).toMatch(new RegExp(`\\b${created.account_id}\\b`))
    })

    it('account create --json prints one object with account_id and api_key', async () => {
      const email = nextEmail()
      const created = await json<CreatedAccount & { email: string; plan: string }>(
        dataDir,
        'account',
        'create',
        '--email',
        email,
        '--plan',
        'business',
        '--json',
      )
      expect(Number.isSafeInteger(created.account_id) && created.account_id > 0).toBe(true)
      expect(created.api_key).toMatch(/^fsk_[A-Za-z0-9_-]{43}$/)
      expect(created).toMatchObject({ email, plan: 'business' })
    })

    it('account list shows every account, as text and as JSON', async () => {
      const first = await json<CreatedAccount>(dataDir, 'account', 'create', '--email', nextEmail(), '--plan', 'pro', '--json')
      const secondEmail = nextEmail()
      const second = await json<CreatedAccount>(dataDir, 'account', 'create', '--email', secondEmail, '--plan', 'enterprise', '--json')

      const listed = await json<Array<{ account_id: number; email: string; plan: string }>>(dataDir, 'account', 'list', '--json')
      expect(listed.map((account) => account.account_id)).toEqual(expect.arrayContaining([first.account_id, second.account_id]))
      expect(listed.find((account) => account.account_id === second.account_id)).toMatchObject({ email: secondEmail, plan: 'enterprise' })

      const text = await ok(dataDir, 'account', 'list')
      const line = text.split('\n').find((l) => l.includes(secondEmail))
      expect(line).toMatch(new RegExp(`^${second.account_id}\\b`))
      expect(line).toContain('enterprise')
    })

    it('account list on an empty database prints nothing and succeeds', async () => {
      expect(await ok(await newDatabase(), 'account', 'list')).toBe('')
      expect(await json(await newDatabase(), 'account', 'list', '--json')).toEqual([])
    })

    it('account set-plan changes the plan', async () => {
      const { account_id } = await json<CreatedAccount>(dataDir, 'account', 'create', '--email', nextEmail(), '--plan', 'pro', '--json')
      const stdout = await ok(dataDir, 'account', 'set-plan', String(account_id), 'enterprise')
      expect(stdout).toContain('enterprise')
      const listed = await json<Array<{ account_id: number; plan: string }>>(dataDir, 'account', 'list', '--json')
      expect(listed.find((account) => account.account_id === account_id)?.plan).toBe('enterprise')
    })

    it('account set-limits overrides each figure, and "default" clears an override', async () => {
      const { account_id } = await json<CreatedAccount>(dataDir, 'account', 'create', '--email', nextEmail(), '--plan', 'pro', '--json')
      const id = String(account_id)
      await ok(dataDir, 'account', 'set-limits', id, '--requests-per-minute', '7', '--requests-per-day', '70')
      const stdout = await ok(dataDir, 'account', 'set-limits', id, '--max-file-size', '1024', '--daily-uploads', '3')
      expect(stdout).toContain('1024')
      const overridesOf = async () =>
        (await json<Array<{ account_id: number; overrides: Record<string, number | null> }>>(dataDir, 'account', 'list', '--json')).find(
          (account) => account.account_id === account_id,
        )?.overrides
      expect(await overridesOf()).toEqual({
        requests_per_minute: 7,
        requests_per_day: 70,
        max_file_size: 1024,
        daily_uploads: 3,
        max_storage: null,
      })

      await ok(dataDir, 'account', 'set-limits', id, '--daily-uploads', 'default', '--max-storage', '5000')
      expect(await overridesOf()).toEqual({
        requests_per_minute: 7,
        requests_per_day: 70,
        max_file_size: 1024,
        daily_uploads: null,
        max_storage: 5000,
      })
      await ok(dataDir, 'account', 'set-limits', id, '--max-storage', 'unlimited')
      expect((await overridesOf())?.max_storage).toBe('unlimited')
      await ok(dataDir, 'account', 'set-limits', id, '--max-storage', 'default')
      expect((await overridesOf())?.max_storage).toBeNull()
    })

    it('account set-limits accepts 0 uploads and 0 bytes (an account that may not upload)', async () => {
      const { account_id } = await json<CreatedAccount>(dataDir, 'account', 'create', '--email', nextEmail(), '--plan', 'pro', '--json')
      await ok(dataDir, 'account', 'set-limits', String(account_id), '--max-file-size', '0', '--daily-uploads', '0')
    })

    it('account create refuses an email that differs only in letter case exactly as a duplicate, and keeps emails as typed', async () => {
      const dir = await newDataDir()
      await ok(dir, 'migrate')
      const created = await json<CreatedAccount & { email: string }>(
        dir,
        'account',
        'create',
        '--email',
        'Case.Taken@Example.test',
        '--plan',
        'pro',
        '--json',
      )
      expect(created.email).toBe('Case.Taken@Example.test')
      const duplicate = await fileshare(dir, ['account', 'create', '--email', 'Case.Taken@Example.test', '--plan', 'pro'])
      expect(duplicate).toEqual({
        code: 1,
        stdout: '',
        stderr: 'fileshare: An account with email Case.Taken@Example.test already exists.\n',
      })
      for (const email of ['case.taken@example.test', 'CASE.TAKEN@EXAMPLE.TEST']) {
        expect(await fileshare(dir, ['account', 'create', '--email', email, '--plan', 'pro']), email).toEqual(duplicate)
      }
      const listed = await json<Array<{ account_id: number; email: string }>>(dir, 'account', 'list', '--json')
      expect(listed.map(({ account_id, email }) => ({ account_id, email }))).toEqual([
        { account_id: created.account_id, email: 'Case.Taken@Example.test' },
      ])
    })
  })

  describe('keys', () => {
    let dataDir: string
    let account: CreatedAccount
    beforeAll(async () => {
      dataDir = await newDatabase()
      account = await json<CreatedAccount>(dataDir, 'account', 'create', '--email', nextEmail(), '--plan', 'pro', '--json')
    })

    it('key create prints a new key once; key list shows only its prefix', async () => {
      const text = await ok(dataDir, 'key', 'create', String(account.account_id))
      const [textKey] = text.match(KEY_PATTERN) ?? []
      expect(textKey).toBeDefined()
      const created = await json<{ key_id: number; api_key: string }>(dataDir, 'key', 'create', String(account.account_id), '--json')
      expect(Number.isSafeInteger(created.key_id) && created.key_id > 0).toBe(true)
      expect(created.api_key).toMatch(/^fsk_[A-Za-z0-9_-]{43}$/)
      const allKeys = [account.api_key, textKey!, created.api_key]
      expect(new Set(allKeys).size).toBe(3)

      const listText = await ok(dataDir, 'key', 'list', String(account.account_id))
      const listJson = await ok(dataDir, 'key', 'list', String(account.account_id), '--json')
      const accountList = await ok(dataDir, 'account', 'list', '--json')
      for (const key of allKeys) {
        for (const output of [listText, listJson, accountList]) {
          expect(output).not.toContain(key)
          // Not even most of it: only a short recognisable prefix.
          expect(output).not.toContain(key.slice(0, 20))
        }
        expect(listText).toContain(key.slice(0, 8))
      }
      const listed = JSON.parse(listJson) as Array<{ key_id: number; prefix: string; revoked_at: number | null }>
      expect(listed).toHaveLength(3)
      const listedCreated = listed.find((key) => key.key_id === created.key_id)!
      expect(created.api_key.startsWith(listedCreated.prefix)).toBe(true)
      expect(listedCreated.prefix.length).toBeLessThan(16)
      expect(listText.trim().split('\n')).toHaveLength(3)
    })

    it('key create names a key "default" unless given a name, which is trimmed; up to 100 characters', async () => {
      const id = String(account.account_id)
      const named = async (...args: string[]) =>
        (await json<{ key_id: number; name: string }>(dataDir, 'key', 'create', id, ...args, '--json')).name
      expect(await named()).toBe('default')
      expect(await named('--name', '  ci deploy  ')).toBe('ci deploy')
      expect(await named('--name', 'x'.repeat(100))).toBe('x'.repeat(100))
      // Characters, not UTF-16 units: 100 emoji are 200 units.
      expect(await named('--name', '\u{1F511}'.repeat(100))).toBe('\u{1F511}'.repeat(100))
      expect(await named('--name=Ünïcødé name')).toBe('Ünïcødé name')
      const listed = await json<Array<{ name: string }>>(dataDir, 'key', 'list', id, '--json')
      expect(listed.map((key) => key.name)).toEqual(expect.arrayContaining(['default', 'ci deploy', 'x'.repeat(100)]))
    })

    it.for([
      ['empty', ''],
      ['only spaces', '   '],
      ['101 characters', 'x'.repeat(101)],
      ['300 characters', 'y'.repeat(300)],
      ['101 characters after trimming', ` ${'z'.repeat(101)} `],
      ['a newline', 'two\nlines'],
      ['a trailing newline', 'name\n'],
      ['a carriage return', 'name\rforged'],
      ['a tab', 'tab\there'],
      ['an escape sequence', 'red \u001b[31mname'],
      ['a NUL', 'nul\u0000'],
      ['a DEL', 'del\u007f'],
      ['a C1 control (NEL)', 'next\u0085line'],
      ['a C1 control (CSI)', 'csi\u009b31m'],
    ])('key create --name with %s is a usage error (exit 2, one line) and creates no key', async ([, name], { expect }) => {
      const id = String(account.account_id)
      const before = await json<unknown[]>(dataDir, 'key', 'list', id, '--json')
      const result = await fileshare(dataDir, ['key', 'create', id, `--name=${name}`, '--json'])
      expect(result.code).toBe(2)
      expect(result.stdout).toBe('')
      expect(result.stderr.trimEnd().split('\n')).toEqual([expect.stringMatching(/^fileshare: --name: The key name must /)])
      expect(await json<unknown[]>(dataDir, 'key', 'list', id, '--json')).toHaveLength(before.length)
    })

    it('key revoke revokes one key; the account keeps its others', async () => {
      const created = await json<{ key_id: number; api_key: string }>(dataDir, 'key', 'create', String(account.account_id), '--json')
      const stdout = await ok(dataDir, 'key', 'revoke', String(created.key_id))
      expect(stdout).toMatch(new RegExp(`\\b${created.key_id}\\b`))

      const listed = await json<Array<{ key_id: number; revoked_at: number | null }>>(
        dataDir,
        'key',
        'list',
        String(account.account_id),
        '--json',
      )
      expect(listed.find((key) => key.key_id === created.key_id)?.revoked_at).toEqual(expect.any(Number))
      expect(listed.filter((key) => key.revoked_at === null).length).toBeGreaterThan(0)
      const listText = await ok(dataDir, 'key', 'list', String(account.account_id))
      expect(listText.split('\n').find((line) => line.startsWith(`${created.key_id}\t`))).toContain('revoked')

      const server = await startTestApp({ FILESHARE_DATA_DIR: dataDir })
      try {
        expect((await fetch(`${server.api}/stats`, { headers: bearer(created.api_key) })).status).toBe(401)
        expect((await fetch(`${server.api}/stats`, { headers: bearer(account.api_key) })).status).toBe(200)
      } finally {
        await server.close()
      }
    })
  })

  it('a key from `account create --json` and one from `key create --json` work against a server on the same data', async () => {
    const dataDir = await newDatabase()
    const created = await json<CreatedAccount>(dataDir, 'account', 'create', '--email', nextEmail(), '--plan', 'pro', '--json')
    const second = await json<{ api_key: string }>(dataDir, 'key', 'create', String(created.account_id), '--json')
    await ok(dataDir, 'account', 'set-limits', String(created.account_id), '--daily-uploads', '3', '--requests-per-day', '900')
    const server = await startTestApp({ FILESHARE_DATA_DIR: dataDir })
    try {
      for (const key of [created.api_key, second.api_key]) {
        const response = await fetch(`${server.api}/stats`, { headers: bearer(key) })
        expect(response.status).toBe(200)
        expect(await response.json()).toMatchObject({
          success: true,
          plan: 'pro',
          limits: { daily_uploads: 3, requests_per_day: 900, requests_per_minute: 50, max_file_size: 5368709120 },
        })
      }
    } finally {
      await server.close()
    }
  })

  it('the database holds only a hash of each key', async () => {
    const dataDir = await newDatabase()
    const created = await json<CreatedAccount>(dataDir, 'account', 'create', '--email', nextEmail(), '--plan', 'pro', '--json')
    const second = await json<{ api_key: string }>(dataDir, 'key', 'create', String(created.account_id), '--json')
    const keys = [created.api_key, second.api_key]

    const database = new SQLite(path.join(dataDir, 'fileshare.sqlite'), { readonly: true, fileMustExist: true })
    try {
      const tables = database.prepare(`select name from sqlite_master where type = 'table'`).all() as Array<{ name: string }>
      let keyRows = 0
      for (const { name } of tables) {
        const rows = database.prepare(`select * from "${name}"`).all() as Array<Record<string, unknown>>
        if (name === 'api_keys') keyRows = rows.length
        for (const row of rows) {
          for (const value of Object.values(row)) {
            const text = Buffer.isBuffer(value) ? value.toString('latin1') : String(value)
            for (const key of keys) {
              expect(text).not.toContain(key)
              // The secret part after the shown prefix is never stored either.
              expect(text).not.toContain(key.slice(12))
            }
          }
        }
      }
      expect(keyRows).toBe(2)
    } finally {
      database.close()
    }
    // Nor in the raw files (the WAL included), in case a column were not selectable.
    for (const entry of await fs.readdir(dataDir)) {
      const file = path.join(dataDir, entry)
      if (!(await fs.stat(file)).isFile()) continue
      const bytes = await fs.readFile(file)
      for (const key of keys) expect(bytes.includes(key.slice(12))).toBe(false)
    }
  })

  describe('a data folder without a database', () => {
    // Every command but migrate and serve: none may create an empty database the server never sees.
    const commands: Array<[string, string[]]> = [
      ['account create', ['account', 'create', '--email', 'typo@example.com', '--plan', 'pro', '--json']],
      ['account list', ['account', 'list']],
      ['account list --json', ['account', 'list', '--json']],
      ['account set-plan', ['account', 'set-plan', '1', 'pro']],
      ['account set-limits', ['account', 'set-limits', '1', '--daily-uploads', '3']],
      ['account invite', ['account', 'invite', '1']],
      ['key create', ['key', 'create', '1', '--name', 'ci']],
      ['key list', ['key', 'list', '1']],
      ['key revoke', ['key', 'revoke', '1']],
      ['gc', ['gc', '--dry-run']],
    ]

    it.for(commands)(
      '%s refuses an empty data folder (exit 1, one line naming the path) and creates nothing',
      async ([, args], { expect }) => {
        const dataDir = await newDataDir()
        expect(await fileshare(dataDir, args)).toEqual({ code: 1, stdout: '', stderr: noDatabase(dataDir) })
        expect(await fs.readdir(dataDir)).toEqual([])
      },
    )

    it.for(commands)('%s refuses a data folder that does not exist, and creates no folder', async ([, args], { expect }) => {
      const dataDir = path.join(await newDataDir(), 'typo', 'data')
      expect(await fileshare(dataDir, args)).toEqual({ code: 1, stdout: '', stderr: noDatabase(dataDir) })
      expect(await fs.readdir(path.dirname(path.dirname(dataDir)))).toEqual([])
    })

    it('the real binary, run where there is no data and without FILESHARE_DATA_DIR, names ./data and creates nothing', async () => {
      const cwd = await newDataDir()
      const created = await binary(['account', 'create', '--email', 'typo@example.com', '--plan', 'pro', '--json'], {}, cwd)
      // The path is the resolved one: the folder the command looked in, whatever the current directory.
      expect(created).toEqual({ code: 1, stdout: '', stderr: noDatabase(path.join(await fs.realpath(cwd), 'data')) })
      expect(await fs.readdir(cwd)).toEqual([])
      const listed = await binary(['account', 'list'], { FILESHARE_DATA_DIR: 'relative/typo' }, cwd)
      expect(listed).toEqual({ code: 1, stdout: '', stderr: noDatabase(path.join(await fs.realpath(cwd), 'relative/typo')) })
      expect(await fs.readdir(cwd)).toEqual([])
    })

    it('account set-password refuses before it reads the password', async () => {
      const dataDir = path.join(await newDataDir(), 'missing')
      const result = await runCliWithInput(
        ['account', 'set-password', '1'],
        { FILESHARE_DATA_DIR: dataDir },
        'correct horse battery staple\n',
      )
      expect(result).toEqual({ code: 1, stdout: '', stderr: noDatabase(dataDir) })
      await expect(fs.stat(dataDir)).rejects.toMatchObject({ code: 'ENOENT' })
    })

    it('configuration errors come first, then usage errors, then the missing database', async () => {
      const dataDir = path.join(await newDataDir(), 'missing')
      const config = await fileshare(dataDir, ['account', 'list'], { FILESHARE_LOG_LEVEL: 'loud' })
      expect(config.code).toBe(1)
      expect(config.stderr).toContain('FILESHARE_LOG_LEVEL')
      expect(config.stderr).not.toContain('no database')
      for (const args of [['frobnicate'], ['account', 'list', 'extra'], ['key', 'create', 'abc'], ['key', 'create', '1', '--name', '']]) {
        const usage = await fileshare(dataDir, args)
        expect(usage.code, args.join(' ')).toBe(2)
        expect(usage.stderr).not.toContain('no database')
      }
      // help needs no database either.
      expect(await fileshare(dataDir, ['help'])).toMatchObject({ code: 0, stderr: '' })
      await expect(fs.stat(dataDir)).rejects.toMatchObject({ code: 'ENOENT' })
    })

    it('migrate creates the database (and its folder); then the other commands work on it', async () => {
      const dataDir = path.join(await newDataDir(), 'new', 'data')
      expect(await ok(dataDir, 'migrate')).toContain('up to date')
      expect(await json(dataDir, 'account', 'list', '--json')).toEqual([])
      expect(await json(dataDir, 'account', 'create', '--email', nextEmail(), '--plan', 'pro', '--json')).toMatchObject({ account_id: 1 })
    })
  })

  describe('migrate', () => {
    it('is idempotent and keeps the data', async () => {
      const dataDir = await newDataDir()
      expect(await ok(dataDir, 'migrate')).not.toBe('')
      const created = await json<CreatedAccount>(dataDir, 'account', 'create', '--email', nextEmail(), '--plan', 'pro', '--json')
      await ok(dataDir, 'migrate')
      await ok(dataDir, 'migrate')
      const listed = await json<Array<{ account_id: number }>>(dataDir, 'account', 'list', '--json')
      expect(listed.map((account) => account.account_id)).toEqual([created.account_id])
      expect(await fs.stat(path.join(dataDir, 'fileshare.sqlite'))).toBeTruthy()
    })

    it('is safe when several processes start on a fresh data folder at once', async () => {
      // Every command migrates on open; without a lock, one of them failed with "table accounts already exists".
      for (let round = 0; round < 3; round++) {
        const dataDir = await newDataDir()
        const results = await Promise.all(Array.from({ length: 6 }, () => fileshareProcess(dataDir, ['migrate'])))
        for (const result of results) expect(result).toMatchObject({ code: 0, stderr: '' })
        const database = new SQLite(path.join(dataDir, 'fileshare.sqlite'), { readonly: true })
        try {
          const applied = database.prepare('select name from kysely_migration order by name').all()
          expect(applied).toEqual(MIGRATION_NAMES.map((name) => ({ name })))
        } finally {
          database.close()
        }
      }
    }, 90_000)
  })

  describe('bad input', () => {
    let dataDir: string
    let account: CreatedAccount
    let takenEmail: string
    beforeAll(async () => {
      dataDir = await newDatabase()
      takenEmail = nextEmail()
      account = await json<CreatedAccount>(dataDir, 'account', 'create', '--email', takenEmail, '--plan', 'pro', '--json')
    })

    const cases: Array<[string, (id: string, email: string) => string[], Record<string, string>?]> = [
      ['an unknown command', () => ['frobnicate']],
      ['an unknown option', (id) => ['account', 'set-plan', id, 'pro', '--force']],
      ['a missing --plan', () => ['account', 'create', '--email', 'new@example.test']],
      ['a missing --email', () => ['account', 'create', '--plan', 'pro']],
      ['a flag without its value', () => ['account', 'create', '--plan', 'pro', '--email']],
      ['an unknown plan on create', () => ['account', 'create', '--email', 'new@example.test', '--plan', 'gold']],
      ['an unknown plan on set-plan', (id) => ['account', 'set-plan', id, 'gold']],
      ['an invalid email', () => ['account', 'create', '--email', 'not-an-email', '--plan', 'pro']],
      ['a duplicate email', (_id, email) => ['account', 'create', '--email', email, '--plan', 'pro']],
      ['a non-numeric account id', () => ['account', 'set-plan', 'abc', 'pro']],
      ['a fractional account id', () => ['key', 'create', '1.5']],
      ['an account id of 400 digits', () => ['account', 'set-plan', '9'.repeat(400), 'pro']],
      ['a limit of 400 digits', (id) => ['account', 'set-limits', id, '--max-file-size', '9'.repeat(400)]],
      ['a grace period of 400 digits', () => ['gc', '--grace-seconds', '9'.repeat(400)]],
      ['an unknown account id on set-plan', () => ['account', 'set-plan', '999999', 'pro']],
      ['an unknown account id on key create', () => ['key', 'create', '999999']],
      ['an unknown key id on key revoke', () => ['key', 'revoke', '999999']],
      ['set-limits without any limit', (id) => ['account', 'set-limits', id]],
      ['a non-numeric limit', (id) => ['account', 'set-limits', id, '--requests-per-minute', 'lots']],
      ['a negative limit', (id) => ['account', 'set-limits', id, '--daily-uploads=-1']],
      ['a negative limit given as a separate word', (id) => ['account', 'set-limits', id, '--max-file-size', '-5']],
      ['a request rate of zero', (id) => ['account', 'set-limits', id, '--requests-per-minute', '0']],
      ['a bad configuration', () => ['account', 'list'], { FILESHARE_PLANS: '{bad' }],
    ]

    // One at a time: in one process, concurrent SQLite opens would wait on each other's migration lock synchronously.
    it.for(cases)('%s: one line on stderr, nothing on stdout, non-zero exit', async ([, args, env], { expect }) => {
      const result = await fileshare(dataDir, args(String(account.account_id), takenEmail), env)
      expect(result.code).not.toBe(0)
      expect(result.stdout).toBe('')
      expect(result.stderr.endsWith('\n')).toBe(true)
      expect(result.stderr.trimEnd().split('\n')).toHaveLength(1)
      expect(result.stderr.trim().length).toBeGreaterThan(0)
    })

    it('names what is wrong', async () => {
      const plan = await fileshare(dataDir, ['account', 'create', '--email', 'new@example.test', '--plan', 'gold'])
      expect(plan.stderr).toContain('gold')
      const duplicate = await fileshare(dataDir, ['account', 'create', '--email', takenEmail, '--plan', 'pro'])
      expect(duplicate.stderr).toContain(takenEmail)
      const config = await fileshare(dataDir, ['account', 'list'], { FILESHARE_LOG_LEVEL: 'loud' })
      expect(config.stderr).toContain('FILESHARE_LOG_LEVEL')
      const limit = await fileshare(dataDir, ['account', 'set-limits', String(account.account_id), '--requests-per-day', 'many'])
      expect(limit.stderr).toContain('--requests-per-day')
    })

    // Exit 2 for what the command line itself gets wrong: unknown or missing arguments, one too
    // many, and option or argument values out of their range; the data is never asked.
    const usageErrors: Array<[string, (id: string, keyId: string) => string[], RegExp]> = [
      ['a request rate per minute of 0', (id) => ['account', 'set-limits', id, '--requests-per-minute', '0'], /--requests-per-minute/],
      ['a request rate per day of 0', (id) => ['account', 'set-limits', id, '--requests-per-day', '0'], /--requests-per-day/],
      ['a negative daily upload limit', (id) => ['account', 'set-limits', id, '--daily-uploads=-1'], /--daily-uploads/],
      ['a negative file size limit', (id) => ['account', 'set-limits', id, '--max-file-size=-5'], /--max-file-size/],
      ['a limit of 400 digits', (id) => ['account', 'set-limits', id, '--max-file-size', '9'.repeat(400)], /--max-file-size/],
      ['an unknown plan on create', () => ['account', 'create', '--email', 'new@example.test', '--plan', 'gold'], /gold/],
      ['an unknown plan on set-plan', (id) => ['account', 'set-plan', id, 'gold'], /gold/],
      ['account list extra junk', () => ['account', 'list', 'extra', 'junk'], /"extra".*account list takes no arguments/],
      ['account create with an argument', () => ['account', 'create', 'extra', '--email', 'new@example.test', '--plan', 'pro'], /"extra"/],
      ['account set-plan ID PLAN extra', (id) => ['account', 'set-plan', id, 'business', 'extra'], /"extra".*ID PLAN/],
      ['account set-limits ID extra', (id) => ['account', 'set-limits', id, 'extra', '--daily-uploads', '5'], /"extra"/],
      ['account invite ID extra', (id) => ['account', 'invite', id, 'extra'], /"extra"/],
      ['account set-password ID extra', (id) => ['account', 'set-password', id, 'extra'], /"extra"/],
      ['key create ACCOUNT_ID extra', (id) => ['key', 'create', id, 'extra'], /"extra".*ACCOUNT_ID/],
      ['key list ACCOUNT_ID extra', (id) => ['key', 'list', id, 'extra'], /"extra"/],
      ['key revoke KEY_ID extra', (_id, keyId) => ['key', 'revoke', keyId, 'extra'], /"extra".*KEY_ID/],
      ['gc extra', () => ['gc', 'extra'], /gc extra/],
    ]
    it.for(usageErrors)('%s: exit 2 with one line naming it, nothing on stdout', async ([, args, names], { expect }) => {
      const [key] = await json<Array<{ key_id: number }>>(dataDir, 'key', 'list', String(account.account_id), '--json')
      const result = await fileshare(dataDir, args(String(account.account_id), String(key!.key_id)))
      expect(result.code).toBe(2)
      expect(result.stdout).toBe('')
      expect(result.stderr.trimEnd().split('\n')).toEqual([expect.stringMatching(/^fileshare: /)])
      expect(result.stderr).toMatch(names)
    })

    // Exit 1 for what only the data can tell, or a failure.
    it.for<[string, (id: string) => string[]]>([
      ['a duplicate email', () => ['account', 'create', '--email', takenEmail, '--plan', 'pro']],
      ['an unknown account', () => ['account', 'set-limits', '999999', '--requests-per-minute', '5']],
      ['an unknown key', () => ['key', 'revoke', '999999']],
    ])('%s: exit 1', async ([, args], { expect }) => {
      const result = await fileshare(dataDir, args(String(account.account_id)))
      expect(result).toMatchObject({ code: 1, stdout: '' })
      expect(result.stderr.trimEnd().split('\n')).toHaveLength(1)
    })

    it('leaves the database as it was', async () => {
      // Runs after the bad commands above (concurrent tests of this block finish first).
      const listed = await json<Array<{ account_id: number; email: string; plan: string; overrides: Record<string, unknown> }>>(
        dataDir,
        'account',
        'list',
        '--json',
      )
      expect(listed).toHaveLength(1)
      expect(listed[0]).toMatchObject({
        account_id: account.account_id,
        email: takenEmail,
        plan: 'pro',
        overrides: { requests_per_minute: null, requests_per_day: null, max_file_size: null, daily_uploads: null, max_storage: null },
      })
      const keys = await json<Array<{ revoked_at: number | null }>>(dataDir, 'key', 'list', String(account.account_id), '--json')
      expect(keys).toEqual([expect.objectContaining({ revoked_at: null })])
    })
  })
})
