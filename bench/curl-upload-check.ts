/**
 * The multipart upload against its ceilings, with curl as the client (issue 36): Fileshare
 * (embedded stack, started as `npm start` starts it), the bare pipe with fsync, the bare pipe
 * without fsync, and Express 5 + Multer 2, taking turns, best of 2 per server and round, for
 * several rounds; prints each round's times, the server's CPU (user+sys, all threads / main thread
 * only) per upload, and the ratios.
 *
 *   node --import tsx bench/curl-upload-check.ts [--sizes 512,1024] [--rounds 4] [--tries 2]
 *     [--server dist/server.js] [--compare <other builds' server.js, comma-separated>] [--dir DIR] [--keep]
 *
 * --compare runs other Fileshare builds on the same data, in turn with the first (before/after),
 * each named by its build folder.
 *
 * The files are written once under the work folder and read once before timing, so that curl reads
 * them from the page cache (--keep leaves the work folder, with the servers' logs, behind). What a
 * server stored is deleted after each upload, untimed; `sync` runs before every timed upload so
 * that one upload's writeback is not the next's.
 */
import { execFile, execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { freePort, ROOT, runCli } from '../test/helpers/server-process.js'
import { fileshareEnv, startBaseline, startFileshare, startFileshareWith, startPeer, type RunningServer } from './spawn-server.js'

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '512,1024' },
    rounds: { type: 'string', default: '4' },
    tries: { type: 'string', default: '2' },
    server: { type: 'string', default: 'dist/server.js' },
    compare: { type: 'string' },
    dir: { type: 'string' },
    keep: { type: 'boolean', default: false },
  },
})
const sizesMiB = values.sizes.split(',').map(Number)
const rounds = Number(values.rounds)
const tries = Number(values.tries)
process.env.BENCH_SERVER_JS = path.resolve(ROOT, values.server)
const work = fs.mkdtempSync(path.join(values.dir ?? os.tmpdir(), 'curl-upload-check-'))
const log = (message: string) => console.error(`[curl-upload-check ${new Date().toISOString().slice(11, 19)}] ${message}`)

/** CPU seconds (user + sys) a process has used so far: all its threads, or only its main thread (the event loop). */
function cpuSeconds(pid: number, mainThread = false): number {
  const stat = mainThread ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`
  const fields = fs.readFileSync(stat, 'utf8').split(') ')[1]!.split(' ')
  // utime and stime, in clock ticks (USER_HZ, 100 on Linux).
  return (Number(fields[11]) + Number(fields[12])) / 100
}

function curl(args: string[]): Promise<{ seconds: number; status: number; body: string }> {
  return new Promise((resolve, reject) => {
    execFile('curl', ['-s', '-w', '\n%{time_total} %{http_code}', ...args], { maxBuffer: 1 << 20 }, (error, stdout) => {
      if (error) return reject(error)
      const lines = stdout.trimEnd().split('\n')
      const [seconds, status] = lines.pop()!.split(' ')
      resolve({ seconds: Number(seconds), status: Number(status), body: lines.join('\n') })
    })
  })
}

interface Contender {
  name: string
  server: RunningServer
  upload(file: string, name: string): Promise<{ seconds: number; status: number; body: string }>
  /** Removes what the last upload stored (untimed). */
  cleanUp(body: string, name: string): Promise<void>
}

async function main(): Promise<void> {
  const files = new Map<number, string>()
  for (const mib of sizesMiB) {
    const file = path.join(work, `input-${mib}.bin`)
    execFileSync('head', ['-c', String(mib * 1024 * 1024), '/dev/urandom'], { stdio: ['ignore', fs.openSync(file, 'w'), 'inherit'] })
    execFileSync('cat', [file], { stdio: ['ignore', 'ignore', 'inherit'] }) // into the page cache
    files.set(mib, file)
  }

  const dataDir = path.join(work, 'fileshare')
  const port = await freePort()
  const env = fileshareEnv(dataDir, port)
  for (const args of [['migrate'], ['account', 'create', '--email', 'curl-check@example.com', '--plan', 'enterprise', '--json']]) {
    const result = await runCli(args, env)
    if (result.code !== 0) throw new Error(`fileshare ${args.join(' ')}: ${result.stderr}`)
    if (args[0] === 'account') env.KEY = (JSON.parse(result.stdout) as { api_key: string }).api_key
  }
  const key = env.KEY!
  const baselineDir = path.join(work, 'baseline')
  const peerDir = path.join(work, 'peer')
  fs.mkdirSync(baselineDir)
  fs.mkdirSync(peerDir)
  const fileshare = await startFileshare(dataDir, port, path.join(work, 'fileshare.log'))
  // --compare: other builds' servers on the same data, taking their turns in the same rounds.
  const others: { name: string; server: RunningServer }[] = []
  const serverJs = process.env.BENCH_SERVER_JS
  for (const build of values.compare?.split(',') ?? []) {
    process.env.BENCH_SERVER_JS = path.resolve(ROOT, build)
    const name = `fileshare ${path.basename(path.dirname(process.env.BENCH_SERVER_JS))}`
    others.push({ name, server: await startFileshareWith(dataDir, path.join(work, `${name.replace(' ', '-')}.log`), {}) })
  }
  process.env.BENCH_SERVER_JS = serverJs
  const baseline = await startBaseline(baselineDir, '{"success":true}', path.join(work, 'baseline.log'))
  const peer = await startPeer(peerDir, path.join(work, 'peer.log'))
  log(`server ${process.env.BENCH_SERVER_JS}, work ${work}`)

  const bare = (name: string, fsync: boolean): Contender => ({
    name,
    server: baseline,
    upload: (file, target) =>
      // -T streams the file (--data-binary would read it all into memory first, and refuses 1 GiB).
      curl([
        '-o',
        '-',
        '-X',
        'POST',
        '-T',
        file,
        '-H',
        'content-type: application/octet-stream',
        `${baseline.url}/upload/${target}${fsync ? '?fsync=1' : ''}`,
      ]),
    cleanUp: async (_body, target) => fs.rmSync(path.join(baselineDir, target), { force: true }),
  })
  const service = (name: string, server: RunningServer): Contender => ({
    name,
    server,
    upload: (file) => curl(['-o', '-', '-H', `Authorization: Bearer ${key}`, '-F', `file=@${file}`, `${server.url}/api/v1/files/upload`]),
    cleanUp: async (body) => {
      const id = (JSON.parse(body) as { file_id: string }).file_id
      const result = await curl(['-o', '-', '-X', 'DELETE', '-H', `Authorization: Bearer ${key}`, `${server.url}/api/v1/files/${id}`])
      if (result.status >= 300) throw new Error(`DELETE answered ${result.status}: ${result.body}`)
    },
  })
  const contenders: Contender[] = [
    service('fileshare', fileshare),
    ...others.map(({ name, server }) => service(name, server)),
    bare('bare+fsync', true),
    bare('bare', false),
    {
      name: 'express+multer',
      server: peer,
      upload: (file) => curl(['-o', '-', '-F', `file=@${file}`, `${peer.url}/upload`]),
      cleanUp: async (body) => fs.rmSync(path.join(peerDir, (JSON.parse(body) as { filename: string }).filename), { force: true }),
    },
  ]

  // best[size][contender][round] = { seconds, cpu }
  const best = new Map<string, { seconds: number; cpu: number; loop: number }[]>()
  try {
    for (let round = 1; round <= rounds; round++) {
      for (const mib of sizesMiB) {
        for (const contender of contenders) {
          let top: { seconds: number; cpu: number; loop: number } | undefined
          for (let attempt = 0; attempt < tries; attempt++) {
            execFileSync('sync')
            const cpuBefore = cpuSeconds(contender.server.pid)
            const loopBefore = cpuSeconds(contender.server.pid, true)
            const result = await contender.upload(files.get(mib)!, `upload-${mib}`)
            const cpu = cpuSeconds(contender.server.pid) - cpuBefore
            const loop = cpuSeconds(contender.server.pid, true) - loopBefore
            if (result.status !== 201) throw new Error(`${contender.name} answered ${result.status}: ${result.body}`)
            await contender.cleanUp(result.body, `upload-${mib}`)
            if (!top || result.seconds < top.seconds) top = { seconds: result.seconds, cpu, loop }
          }
          const key = `${mib}:${contender.name}`
          best.set(key, [...(best.get(key) ?? []), top!])
          log(
            `round ${round} ${mib} MiB ${contender.name}: ${top!.seconds.toFixed(3)} s, server CPU ${top!.cpu.toFixed(2)} s, main thread ${top!.loop.toFixed(2)} s`,
          )
        }
      }
    }
  } finally {
    await Promise.all([fileshare.stop(), ...others.map(({ server }) => server.stop()), baseline.stop(), peer.stop()])
  }

  const row = (cells: string[]) => console.log(cells.map((cell, i) => (i === 0 ? cell.padEnd(30) : cell.padStart(24))).join(''))
  for (const mib of sizesMiB) {
    console.log(`\n${mib} MiB, curl -F (bare: -T), best of ${tries}, ${rounds} rounds`)
    row(['', ...Array.from({ length: rounds }, (_, i) => `round ${i + 1}`)])
    for (const contender of contenders) {
      row([
        `${contender.name} s (cpu/loop)`,
        ...best.get(`${mib}:${contender.name}`)!.map((r) => `${r.seconds.toFixed(3)} (${r.cpu.toFixed(2)}/${r.loop.toFixed(2)})`),
      ])
    }
    for (const service of ['fileshare', ...others.map(({ name }) => name)]) {
      const serviceRuns = best.get(`${mib}:${service}`)!
      for (const ceiling of ['bare+fsync', 'express+multer']) {
        const ratios = best.get(`${mib}:${ceiling}`)!.map((r, i) => serviceRuns[i]!.seconds / r.seconds)
        row([`${service} / ${ceiling}`, ...ratios.map((ratio) => `${ratio.toFixed(2)}x`)])
      }
    }
  }
  if (values.keep) log(`kept ${work}`)
  else fs.rmSync(work, { recursive: true, force: true })
}

await main()
