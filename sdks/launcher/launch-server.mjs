#!/usr/bin/env node
// The shared test launcher of the Fileshare SDKs (JavaScript, Python, PHP, Java).
//
// Starts the server from the current build (dist/server.js) with a temporary data folder on a free
// port, creates the accounts the SDK suites need through the `fileshare` CLI, prints ONE line of
// JSON on stdout and keeps running until its stdin closes or it gets SIGTERM/SIGINT; then it stops
// the server and removes the data folder. Plain Node (>= 20), no dependency. See README.md here.
//
//   node sdks/launcher/launch-server.mjs [--json-file PATH] [--ignore-stdin] [--env NAME=VALUE]...
//
// stdout: {"base_url":"http://127.0.0.1:PORT/api/v1","server_url":"http://127.0.0.1:PORT",
//          "keys":{"pro":"fsk_…","free":"fsk_…","limited":"fsk_…","read_only":"fsk_…","ip_restricted":"fsk_…",
//                  "auditor":"fsk_…"},"accounts":{"pro":1,"free":2,"limited":3},
//          "limits":{"pro":{…raised rates},"limited":{…}},"pid":N,"server_pid":N,"data_dir":"…",
//          "scanning":{"base_url":…,"server_url":…,"keys":{"pro":"fsk_…"},"mode":"required","eicar":"…","signature":"…"}|null}
// "scanning" is a second server with FILESHARE_SCAN=required on a clamd of the launcher's own, with a
// test signature database (the EICAR test string); null when clamd (Debian's clamav-daemon) is missing.
// The pro plan's request rates are raised (TEST_PLANS) so that suites sharing the pro account do
// not run into them; "limited" (a pro account with low overrides) is there for the limit errors.
// Everything else (server logs, CLI errors) goes to stderr. Exit code 0 after a clean stop; 1 when
// the server could not start or stopped by itself; 2 for a usage error or a missing build.
import { spawn, execFile } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { connect, createServer } from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { serverNode } from '../../bin/pinned-node.js'

const execFileAsync = promisify(execFile)
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')
const serverEntry = path.join(root, 'dist', 'server.js')
const cliEntry = path.join(root, 'bin', 'fileshare.js')

/** The limits of the "limited" account: small enough for a test to reach each of them quickly. */
export const LIMITED = Object.freeze({
  requests_per_minute: 10,
  requests_per_day: 1000,
  max_file_size: 1024 * 1024,
  daily_uploads: 3,
})

/**
 * The pro plan's request rates, raised so that whole suites (which share the pro account) do not
 * hit them; its file size and daily upload limits stay the plan's. Override with
 * --env FILESHARE_PLANS=... (JSON, see docs/configuration.md).
 */
export const TEST_PLANS = Object.freeze({ pro: { requests_per_minute: 6000, requests_per_day: 1000000 } })

const CLAMD = '/usr/sbin/clamd'
/** The standard antivirus test file: harmless, detected by the launcher's clamd as SIGNATURE. */
const EICAR = 'X5O!P%@AP[4\\PZX54(P^)7CC)7}$EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*'
const EICAR_SIGNATURE = 'Fileshare.Test.EICAR.UNOFFICIAL'
/** Processes besides the main server (clamd, the scanning server), ended by stop(). */
const extraChildren = new Set()

function log(message) {
  process.stderr.write(`[launch-server] ${message}\n`)
}

function parseArgs(argv) {
  const options = { jsonFile: undefined, ignoreStdin: false, env: {} }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    if (arg === '--json-file') options.jsonFile = argv[++i]
    else if (arg === '--ignore-stdin') options.ignoreStdin = true
    else if (arg === '--env') {
      const pair = argv[++i] ?? ''
      const eq = pair.indexOf('=')
      if (eq <= 0) throw new Error(`--env needs NAME=VALUE, got ${JSON.stringify(pair)}`)
      options.env[pair.slice(0, eq)] = pair.slice(eq + 1)
    } else if (arg === '--help' || arg === '-h') {
      process.stdout.write('Usage: node sdks/launcher/launch-server.mjs [--json-file PATH] [--ignore-stdin] [--env NAME=VALUE]...\n')
      process.exit(0)
    } else throw new Error(`unknown argument ${JSON.stringify(arg)}`)
  }
  if (options.jsonFile === '') throw new Error('--json-file needs a path')
  return options
}

function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer()
    probe.unref()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address()
      probe.close(() => resolve(port))
    })
  })
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

const cliChildren = new Set()
/** The server being started, so that a stop during the start ends it too. */
let startingServer = null
/** Set once a stop began: from then on nothing new is started. */
let stopping = false

async function cli(env, args) {
  if (stopping) throw new Error('stopping')
  const running = execFileAsync(serverNode(), [cliEntry, ...args], { env, cwd: root, maxBuffer: 1 << 20 })
  cliChildren.add(running.child)
  try {
    const { stdout } = await running
    return stdout
  } catch (error) {
    throw new Error(`fileshare ${args.slice(0, 2).join(' ')} failed: ${(error.stderr || error.message).trim()}`)
  } finally {
    cliChildren.delete(running.child)
  }
}

/** A second key of an account, with `key create`'s options (scopes, allowed addresses). */
async function createKey(env, accountId, name, options) {
  const out = await cli(env, ['key', 'create', String(accountId), '--name', name, ...options, '--json'])
  return JSON.parse(out.trim().split('\n').pop()).api_key
}

async function createAccount(env, name, plan) {
  const out = await cli(env, ['account', 'create', '--email', `${name}@sdk-tests.invalid`, '--plan', plan, '--json'])
  const created = JSON.parse(out.trim().split('\n').pop())
  return { id: created.account_id, key: created.api_key }
}

/** clamd's answer to zPING on 127.0.0.1:port, or undefined. */
function pingClamd(port) {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    let answer = ''
    socket.setTimeout(1000, () => socket.destroy())
    socket.on('connect', () => socket.write('zPING\0'))
    socket.on('data', (chunk) => {
      answer += chunk.toString()
      if (answer.includes('\0')) socket.end()
    })
    socket.on('error', () => resolve(undefined))
    socket.on('close', () => resolve(answer.replace(/\0/g, '') || undefined))
  })
}

/**
 * A clamd of our own (Foreground, TCP on 127.0.0.1) on a database that knows only the EICAR test
 * string: the official databases are neither needed nor downloadable here. Resolves with its port.
 */
async function startClamd(dir) {
  const db = path.join(dir, 'db')
  const tmp = path.join(dir, 'tmp')
  mkdirSync(db, { recursive: true })
  mkdirSync(tmp, { recursive: true })
  writeFileSync(path.join(db, 'fileshare-test.ndb'), `Fileshare.Test.EICAR:0:*:${Buffer.from(EICAR).toString('hex')}\n`)
  const port = await freePort()
  const conf = path.join(dir, 'clamd.conf')
  writeFileSync(
    conf,
    [
      `TCPSocket ${port}`,
      'TCPAddr 127.0.0.1',
      'Foreground yes',
      `DatabaseDirectory ${db}`,
      `TemporaryDirectory ${tmp}`,
      `PidFile ${path.join(dir, 'clamd.pid')}`,
      `LogFile ${path.join(dir, 'clamd.log')}`,
      'LogSyslog no',
      'Bytecode no',
      'SelfCheck 0',
      'StreamMaxLength 26214400',
      '',
    ].join('\n'),
  )
  const child = spawn(CLAMD, ['-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] })
  child.stderr.pipe(process.stderr)
  extraChildren.add(child)
  const deadline = Date.now() + 30_000
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`clamd exited at start (code ${child.exitCode})`)
    if ((await pingClamd(port)) === 'PONG') return port
    await sleep(50)
  }
  throw new Error('clamd did not answer PING within 30 s')
}

/** The second server, scanning every upload with clamd in required mode, and its pro account's key. */
async function startScanningServer(baseEnv, dataDir) {
  const clamdPort = await startClamd(path.join(dataDir, 'clamd'))
  const scanDir = path.join(dataDir, 'scanning')
  mkdirSync(scanDir, { recursive: true })
  for (let attempt = 1; ; attempt++) {
    const port = await freePort()
    const origin = `http://127.0.0.1:${port}`
    const env = {
      ...baseEnv,
      FILESHARE_DATA_DIR: scanDir,
      FILESHARE_PUBLIC_URL: origin,
      FILESHARE_CLAMD: `tcp://127.0.0.1:${clamdPort}`,
      FILESHARE_SCAN: 'required',
    }
    if (attempt === 1) await cli(env, ['migrate'])
    const pro = attempt === 1 ? await createAccount(env, 'scanning-pro', 'pro') : startScanningServer.pro
    startScanningServer.pro = pro
    const started = await startServer(env, port)
    if (started.child) {
      extraChildren.add(started.child)
      return {
        base_url: `${origin}/api/v1`,
        server_url: origin,
        keys: { pro: pro.key },
        mode: 'required',
        eicar: EICAR,
        signature: EICAR_SIGNATURE,
      }
    }
    if (attempt >= 3) throw new Error(`the scanning server exited while starting (${JSON.stringify(started.exited)})`)
  }
}

/** Starts the server; resolves once /readyz answers 200, rejects if it exits first or takes > 30 s. */
async function startServer(env, port) {
  if (stopping) throw new Error('stopping')
  const child = spawn(serverNode(), [serverEntry], {
    env: { ...env, PORT: String(port), HOST: '127.0.0.1' },
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  startingServer = child
  // The server logs to stdout: keep our stdout for the one JSON line.
  child.stdout.pipe(process.stderr)
  child.stderr.pipe(process.stderr)
  let exited = null
  child.once('exit', (code, signal) => {
    exited = { code, signal }
  })
  const deadline = Date.now() + 30_000
  while (Date.now() < deadline) {
    if (exited) return { child: null, exited }
    try {
      const response = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(2000) })
      await response.arrayBuffer()
      if (response.ok) return { child, exited: null }
    } catch {
      // not listening yet
    }
    await sleep(100)
  }
  child.kill('SIGKILL')
  throw new Error('the server did not become ready within 30 s')
}

async function main() {
  let options
  try {
    options = parseArgs(process.argv.slice(2))
  } catch (error) {
    log(error.message)
    process.exit(2)
  }
  if (!existsSync(serverEntry) || !existsSync(path.join(root, 'dist', 'cli', 'main.js'))) {
    log(`no server build at ${serverEntry}: run "npm run build" (or "npm install") in ${root} first.`)
    process.exit(2)
  }

  const dataDir = mkdtempSync(path.join(tmpdir(), 'fileshare-sdk-'))
  let child = null
  const cleanup = () => {
    try {
      rmSync(dataDir, { recursive: true, force: true })
    } catch (error) {
      log(`could not remove ${dataDir}: ${error.message}`)
    }
    if (options.jsonFile) rmSync(options.jsonFile, { force: true })
  }
  const stop = async (reason) => {
    if (stopping) return
    stopping = true
    log(`stopping (${reason})`)
    for (const running of cliChildren) {
      const exited = new Promise((resolve) => running.once('exit', resolve))
      running.kill('SIGKILL')
      await exited
    }
    for (const extra of extraChildren) {
      if (extra.exitCode !== null || extra.signalCode !== null) continue
      const exited = new Promise((resolve) => extra.once('exit', resolve))
      extra.kill('SIGTERM')
      const timer = setTimeout(() => extra.kill('SIGKILL'), 10_000)
      await exited
      clearTimeout(timer)
    }
    child ??= startingServer
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
      await exited
      clearTimeout(timer)
    }
    cleanup()
    process.exit(reason === 'server exited' ? 1 : 0)
  }
  process.once('SIGTERM', () => void stop('SIGTERM'))
  process.once('SIGINT', () => void stop('SIGINT'))
  if (!options.ignoreStdin) {
    process.stdin.on('data', () => {})
    process.stdin.once('end', () => void stop('stdin closed'))
    process.stdin.once('error', () => void stop('stdin closed'))
    process.stdin.resume()
  }

  try {
    let port
    let origin
    let env
    let pro
    let others
    for (let attempt = 1; ; attempt++) {
      port = await freePort()
      origin = `http://127.0.0.1:${port}`
      env = {
        ...process.env,
        FILESHARE_LOG_LEVEL: 'warn',
        FILESHARE_PLANS: JSON.stringify(TEST_PLANS),
        // The suites' webhook receivers listen on 127.0.0.1 over plain http.
        FILESHARE_WEBHOOKS_ALLOW_PRIVATE: 'true',
        FILESHARE_WEBHOOKS_ALLOW_HTTP: 'true',
        ...options.env,
        FILESHARE_DATA_DIR: dataDir,
        FILESHARE_PUBLIC_URL: origin,
      }
      delete env.FILESHARE_DATABASE_URL // always the local SQLite database and folder
      delete env.FILESHARE_REDIS_URL
      if (env.FILESHARE_STORAGE === 's3' && !options.env.FILESHARE_STORAGE) delete env.FILESHARE_STORAGE
      if (attempt === 1) {
        // `migrate` creates the database (the other commands refuse a missing one); the accounts may
        // then be created beside the server's start.
        await cli(env, ['migrate'])
        pro = await createAccount(env, 'pro', 'pro')
        const proId = pro.id
        others = Promise.all([
          createAccount(env, 'free', 'free'),
          createAccount(env, 'limited', 'pro').then(async (limited) => {
            await cli(env, [
              'account',
              'set-limits',
              String(limited.id),
              '--requests-per-minute',
              String(LIMITED.requests_per_minute),
              '--requests-per-day',
              String(LIMITED.requests_per_day),
              '--max-file-size',
              String(LIMITED.max_file_size),
              '--daily-uploads',
              String(LIMITED.daily_uploads),
              '--json',
            ])
            return limited
          }),
          // Scoped keys of the pro account (../shared/spec/keys-and-audit.md).
          createKey(env, proId, 'read only', ['--scopes', 'files:read,links:read,stats:read']),
          // 127.0.0.1 is outside 10.0.0.0/8: every call with this key is refused.
          createKey(env, proId, 'ip restricted', ['--allow-ip', '10.0.0.0/8']),
          createKey(env, proId, 'auditor', ['--scopes', 'audit:read']),
        ])
        others.catch(() => {}) // awaited below
      }
      const started = await startServer(env, port)
      if (started.child) {
        child = started.child
        break
      }
      // Most likely another process took the port between our probe and the server's bind.
      if (attempt >= 3) throw new Error(`the server exited while starting (${JSON.stringify(started.exited)})`)
      log(`the server exited while starting on port ${port}; trying another port`)
    }
    const [free, limited, readOnly, ipRestricted, auditor] = await others
    // Virus scanning (issue 35) where clamd is installed: a second server that scans in required mode.
    const scanning = existsSync(CLAMD) ? await startScanningServer(env, dataDir) : null
    if (!scanning) log(`${CLAMD} is missing (Debian's clamav-daemon): no scanning server ("scanning": null)`)
    child.once('exit', (code, signal) => {
      if (!stopping) {
        log(`the server exited by itself (code ${code}, signal ${signal})`)
        void stop('server exited')
      }
    })
    const info = {
      base_url: `${origin}/api/v1`,
      server_url: origin,
      keys: { pro: pro.key, free: free.key, limited: limited.key, read_only: readOnly, ip_restricted: ipRestricted, auditor },
      accounts: { pro: pro.id, free: free.id, limited: limited.id },
      limits: { pro: { ...JSON.parse(env.FILESHARE_PLANS).pro }, limited: { ...LIMITED } },
      pid: process.pid,
      server_pid: child.pid,
      data_dir: dataDir,
      scanning,
    }
    const line = JSON.stringify(info)
    if (options.jsonFile) {
      const tmp = `${options.jsonFile}.tmp-${process.pid}`
      writeFileSync(tmp, line + '\n', { mode: 0o600 })
      const { renameSync } = await import('node:fs')
      renameSync(tmp, options.jsonFile)
    }
    process.stdout.write(line + '\n')
    log(`serving at ${origin} (data in ${dataDir})`)
  } catch (error) {
    if (stopping) return // stop() ends the children, cleans up and exits
    log(error.message)
    child ??= startingServer
    if (child) child.kill('SIGKILL')
    cleanup()
    process.exit(1)
  }
}

await main()
