import { spawn, type ChildProcess } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import fs from 'node:fs/promises'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { freePort } from './server-process.js'

/**
 * Debian's real ClamAV daemon (package clamav-daemon) for the virus-scanning tests, with a
 * signature database the test writes itself: the official databases are neither downloaded nor
 * needed. clamd runs as a child process in the foreground, on a free TCP port of 127.0.0.1, with
 * its config, database, log, pid file and temporary files in a temp folder of its own.
 *
 * What clamd 1.4 answers, with the `z` prefix (each answer ends with a NUL byte; with the `n`
 * prefix or none, with "\n" instead):
 * - `zPING`                                   → `PONG`
 * - `zINSTREAM`, infected                     → `stream: Fileshare.Test.EICAR.UNOFFICIAL FOUND`
 *   (clamd appends `.UNOFFICIAL` to the name of every signature not from a signed official database)
 * - `zINSTREAM`, clean (or empty)             → `stream: OK`
 * - `zINSTREAM`, over StreamMaxLength         → `INSTREAM size limit exceeded. ERROR`, then clamd
 *   closes the connection. It checks each chunk's announced length against what is left before it
 *   reads the chunk, so a client that is still sending when clamd closes gets EPIPE or ECONNRESET
 *   and may lose the answer (clamd closes with unread data, which resets the connection): send
 *   chunks one at a time and read the answer as soon as it comes (see `instream` below).
 * - an unknown command                        → `UNKNOWN COMMAND`
 * INSTREAM's protocol: `zINSTREAM\0`, then chunks, each a 4-byte big-endian length and that many
 * bytes, then a zero length (4 zero bytes); one answer, then clamd closes the connection. clamd
 * spools the stream to a temporary file (TemporaryDirectory) before scanning it.
 */

export const CLAMD = process.env.FILESHARE_TEST_CLAMD ?? '/usr/sbin/clamd'
/** Whether clamd is installed: tests of virus scanning are skipped without it. */
export const CLAMD_AVAILABLE = existsSync(CLAMD)

/** The standard EICAR anti-virus test file (68 bytes, ASCII). */
export const EICAR = 'X5O!P%@AP[4\\PZX54(P^)7CC)7}$EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*'
/** The name of the body signature for EICAR in the test database, as clamd reports it. */
export const EICAR_SIGNATURE = 'Fileshare.Test.EICAR.UNOFFICIAL'

export interface StartClamdOptions {
  /** clamd's StreamMaxLength in bytes: a longer INSTREAM is refused. Default 25 MiB. */
  streamMaxLength?: number
  /**
   * Extra contents clamd detects, each by an MD5 hash signature (`.hdb`) named
   * `Fileshare.Test.Hash<n>` (1-based, in this order); clamd reports `Fileshare.Test.Hash<n>.UNOFFICIAL`.
   */
  infectedContents?: Buffer[]
}

export interface TestClamd {
  port: number
  /** tcp://127.0.0.1:<port>, as FILESHARE_CLAMD takes it. */
  url: string
  /** The folder of its config, database, log and temporary files. */
  dir: string
  streamMaxLength: number
  /** The names clamd reports for `infectedContents`, in their order. */
  hashSignatures: string[]
  /** The name clamd reports for this content (EICAR or one of `infectedContents`), or undefined. */
  signatureOf(content: Buffer | string): string | undefined
  /** clamd's process while it runs. */
  child(): ChildProcess | undefined
  /** clamd's log so far (all its starts). */
  log(): Promise<string>
  /** Stops clamd (SIGTERM, then SIGKILL after 5 s) and waits for it to exit; the folder stays for `start()`. */
  stop(): Promise<void>
  /** Starts it again after `stop()`, on the same port, and waits until it answers PING. */
  start(): Promise<void>
  /** Stops it and removes its folder. */
  close(): Promise<void>
}

const STARTUP_TIMEOUT_MS = 30_000
const DEFAULT_STREAM_MAX_LENGTH = 25 * 1024 * 1024

function md5(content: Buffer): string {
  return createHash('md5').update(content).digest('hex')
}

/**
 * Writes the database and config to a temp folder, starts clamd on a free port and waits until it
 * answers PING (with the tiny database it does in well under a second). Call `close()` after.
 */
export async function startClamd(options: StartClamdOptions = {}): Promise<TestClamd> {
  if (!CLAMD_AVAILABLE) throw new Error(`${CLAMD} is not installed (Debian package clamav-daemon)`)
  const streamMaxLength = options.streamMaxLength ?? DEFAULT_STREAM_MAX_LENGTH
  if (!Number.isSafeInteger(streamMaxLength) || streamMaxLength <= 0 || streamMaxLength >= 4 * 1024 ** 3) {
    throw new Error(`streamMaxLength must be a positive number of bytes under 4 GiB, not ${streamMaxLength}`)
  }
  const infected = options.infectedContents ?? []
  const hashSignatures = infected.map((_, index) => `Fileshare.Test.Hash${index + 1}`)

  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fileshare-clamd-'))
  const db = path.join(dir, 'db')
  const tmp = path.join(dir, 'tmp')
  await fs.mkdir(db)
  await fs.mkdir(tmp)
  // A body signature (`.ndb`: name:target type 0 = any file:offset * = anywhere:hex bytes) and
  // MD5 hash signatures (`.hdb`: md5:size:name).
  await fs.writeFile(path.join(db, 'fileshare-test.ndb'), `Fileshare.Test.EICAR:0:*:${Buffer.from(EICAR).toString('hex')}\n`)
  if (infected.length > 0) {
    const lines = infected.map((content, index) => `${md5(content)}:${content.length}:${hashSignatures[index]}\n`)
    await fs.writeFile(path.join(db, 'fileshare-test.hdb'), lines.join(''))
  }
  const logFile = path.join(dir, 'clamd.log')
  const conf = path.join(dir, 'clamd.conf')
  const writeConf = (port: number) =>
    fs.writeFile(
      conf,
      [
        `TCPSocket ${port}`,
        'TCPAddr 127.0.0.1',
        // No LocalSocket (Debian's /etc/clamav/clamd.conf is not read: -c names this file).
        'Foreground yes',
        `DatabaseDirectory ${db}`,
        `TemporaryDirectory ${tmp}`,
        `PidFile ${path.join(dir, 'clamd.pid')}`,
        `LogFile ${logFile}`,
        'LogTime yes',
        'LogSyslog no',
        // Our database only: no bytecode database (it would warn that bytecode.cvd is missing), no
        // periodic reload check, no PUA.
        'Bytecode no',
        'SelfCheck 0',
        'OfficialDatabaseOnly no',
        `StreamMaxLength ${streamMaxLength}`,
        // Larger files would be "scanned" without the engine looking at them (answer OK); clamd
        // cannot scan more than 2 GiB - 1 in any case.
        'MaxFileSize 2000M',
        'MaxScanSize 2000M',
        'MaxThreads 4',
        // Run as root (as on the test machines), clamd stays root: no User, so it needs no clamav user.
        '',
      ].join('\n'),
    )

  let port = await freePort()
  await writeConf(port)
  let child: ChildProcess | undefined
  let exit: Promise<void> = Promise.resolve()
  const readLog = () => fs.readFile(logFile, 'utf8').catch(() => '')

  const kill = async () => {
    const running = child
    if (!running || running.exitCode !== null || running.signalCode !== null) return
    const exited = exit
    running.kill('SIGTERM')
    const quit = await Promise.race([exited.then(() => true), sleep(5_000, false, { ref: false })])
    if (!quit) {
      running.kill('SIGKILL')
      await exited
    }
  }

  const launch = async (): Promise<void> => {
    const started = spawn(CLAMD, ['-c', conf], { stdio: ['ignore', 'pipe', 'pipe'] })
    child = started
    let output = ''
    started.stdout!.setEncoding('utf8').on('data', (text: string) => (output += text))
    started.stderr!.setEncoding('utf8').on('data', (text: string) => (output += text))
    let exited = false
    // A test file that forgets close() must not leave clamd behind when the worker exits.
    const killOnExit = () => started.kill('SIGKILL')
    process.once('exit', killOnExit)
    exit = new Promise<void>((resolve) =>
      started.once('exit', () => {
        exited = true
        process.off('exit', killOnExit)
        resolve()
      }),
    )
    started.once('error', (error) => (output += `${error.message}\n`))
    const deadline = Date.now() + STARTUP_TIMEOUT_MS
    for (;;) {
      if (exited) throw new Error(`clamd exited at start (code ${started.exitCode}):\n${output}\n--- ${logFile}:\n${await readLog()}`)
      if ((await command(port, 'PING', 1_000).catch(() => undefined)) === 'PONG') return
      if (Date.now() >= deadline) {
        await kill()
        throw new Error(
          `clamd did not answer PING on 127.0.0.1:${port} within ${STARTUP_TIMEOUT_MS} ms:\n${output}\n--- ${logFile}:\n${await readLog()}`,
        )
      }
      await sleep(50)
    }
  }

  try {
    for (let attempt = 1; ; attempt++) {
      try {
        await launch()
        break
      } catch (error) {
        // The free port was taken meanwhile by another test's server: take another.
        const taken = error instanceof Error && /Address already in use|bind\(\) error/i.test(error.message)
        if (!taken || attempt === 3) throw error
        port = await freePort()
        await writeConf(port)
      }
    }
  } catch (error) {
    await fs.rm(dir, { recursive: true, force: true })
    throw error
  }

  const signatures = new Map<string, string>(infected.map((content, index) => [md5(content), `${hashSignatures[index]}.UNOFFICIAL`]))
  return {
    port,
    url: `tcp://127.0.0.1:${port}`,
    dir,
    streamMaxLength,
    hashSignatures: hashSignatures.map((name) => `${name}.UNOFFICIAL`),
    signatureOf(content) {
      const bytes = typeof content === 'string' ? Buffer.from(content) : content
      if (bytes.includes(EICAR)) return EICAR_SIGNATURE
      return signatures.get(md5(bytes))
    },
    child: () => (child && child.exitCode === null && child.signalCode === null ? child : undefined),
    log: readLog,
    stop: kill,
    async start() {
      if (child && child.exitCode === null && child.signalCode === null) throw new Error('clamd is running: stop() it first')
      await launch()
    },
    async close() {
      await kill()
      await fs.rm(dir, { recursive: true, force: true })
    },
  }
}

/**
 * Sends `z<name>` to clamd on 127.0.0.1:`port` and resolves with its answer (without the NUL), e.g.
 * `command(port, 'PING')` → 'PONG', `command(port, 'VERSION')` → 'ClamAV 1.4.6/…'.
 */
export function command(port: number, name: string, timeoutMs = 5_000): Promise<string> {
  return exchange(
    port,
    async (socket) => {
      socket.write(`z${name}\0`)
    },
    timeoutMs,
  )
}

/**
 * Scans `data` with INSTREAM over a raw socket, `chunkSize` bytes a chunk (default 64 KiB), and
 * resolves with clamd's answer without the NUL: `stream: OK`, `stream: <name> FOUND` or
 * `INSTREAM size limit exceeded. ERROR`. Chunks are written one at a time, each once the previous
 * has left and the event loop has polled, and sending stops as soon as clamd has answered, so an
 * over-limit answer is not lost to the reset (in all but a microseconds-wide race: a test that must
 * see that answer every time should announce a chunk it does not send, see the helper's test).
 */
export function instream(
  port: number,
  data: Buffer | Iterable<Buffer>,
  options: { chunkSize?: number; timeoutMs?: number } = {},
): Promise<string> {
  const chunkSize = options.chunkSize ?? 64 * 1024
  return exchange(
    port,
    async (socket, answered) => {
      const send = (bytes: Buffer) =>
        new Promise<void>((resolve, reject) => socket.write(bytes, (error) => (error ? reject(error) : resolve())))
      await send(Buffer.from('zINSTREAM\0'))
      const chunks = Buffer.isBuffer(data) ? slices(data, chunkSize) : data
      for (const chunk of chunks) {
        if (chunk.length === 0) continue
        // Through the event loop's poll phase first: an answer that came is read before the next
        // write, which would fail (EPIPE) once clamd has closed, and lose it.
        await new Promise(setImmediate)
        if (answered()) return
        const length = Buffer.alloc(4)
        length.writeUInt32BE(chunk.length)
        await send(Buffer.concat([length, chunk]))
      }
      await new Promise(setImmediate)
      if (!answered()) await send(Buffer.alloc(4))
    },
    options.timeoutMs ?? 60_000,
  )
}

function* slices(data: Buffer, size: number): Generator<Buffer> {
  for (let offset = 0; offset < data.length; offset += size) yield data.subarray(offset, offset + size)
}

/** Connects, runs `talk`, and resolves with the first NUL-terminated answer (or all that came before close). */
function exchange(port: number, talk: (socket: net.Socket, answered: () => boolean) => Promise<void>, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host: '127.0.0.1' })
    let received = Buffer.alloc(0)
    let settled = false
    const finish = (error?: Error) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      socket.destroy()
      const end = received.indexOf(0)
      if (received.length > 0) resolve(received.subarray(0, end === -1 ? received.length : end).toString('utf8'))
      else reject(error ?? new Error('clamd closed the connection without an answer'))
    }
    const timer = setTimeout(() => finish(new Error(`clamd did not answer within ${timeoutMs} ms`)), timeoutMs)
    socket.on('data', (data: Buffer) => {
      received = Buffer.concat([received, data])
      if (received.includes(0)) finish()
    })
    socket.on('error', (error) => finish(error))
    socket.on('close', () => finish())
    socket.once('connect', () => {
      talk(socket, () => received.length > 0).catch((error: Error) => {
        // A write that failed because clamd closed: its answer, if any, comes with 'data' or 'close'.
        if (!socket.destroyed) finish(error)
      })
    })
  })
}
