/**
 * Where a CPU profile's time went, as text:
 * `node --import tsx bench/profile-summary.ts <file.cpuprofile>... [--match <regexp>] [top]`.
 * Record one with BENCH_SERVER_NODE_FLAGS="--cpu-prof --cpu-prof-dir=<dir>" npm run bench (the
 * server writes it when it stops). Prints self time by package and the heaviest functions, and
 * total (inclusive) time of the heaviest frames, the text form of a flame graph's widest boxes.
 * With --match, only the total time of the functions whose name or file matches. With --skip <seconds>,
 * the samples of the profile's first seconds (the server's start, a warm-up) are left out.
 */
import fs from 'node:fs'

interface ProfileNode {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number }
  children?: number[]
}

interface CpuProfile {
  nodes: ProfileNode[]
  samples: number[]
  timeDeltas: number[]
}

function packageOf(url: string): string {
  if (url === '') return '(native / V8)'
  if (url.startsWith('node:')) return 'node:' + (url.slice(5).split('/')[0] === 'internal' ? 'internal' : url.slice(5))
  const inModules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)
  if (inModules) return inModules[1]!
  const ours = /\/(dist|src|bench)\/(.*)$/.exec(url)
  return ours ? `fileshare ${ours[1]}/${ours[2]}` : url
}

function frameName(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame
  const file = url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*\/(dist|src)\//, '$1/')
  return `${functionName || '(anonymous)'} ${file ? `${file}:${lineNumber + 1}` : ''}`.trim()
}

function summarize(profile: CpuProfile, top: number, match?: RegExp, skipMicros = 0): string {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const selfMicros = new Map<number, number>()
  let elapsed = 0
  profile.samples.forEach((id, index) => {
    const delta = profile.timeDeltas[index] ?? 0
    elapsed += delta
    if (elapsed > skipMicros) selfMicros.set(id, (selfMicros.get(id) ?? 0) + delta)
  })
  const total = [...selfMicros.values()].reduce((sum, value) => sum + value, 0)
  const idle = [...selfMicros].filter(([id]) => byId.get(id)?.callFrame.functionName === '(idle)').reduce((sum, [, v]) => sum + v, 0)
  const busy = total - idle

  const parents = new Map<number, number>()
  for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id)

  const byPackage = new Map<string, number>()
  const byFunction = new Map<string, number>()
  const inclusive = new Map<string, number>()
  for (const [id, micros] of selfMicros) {
    const node = byId.get(id)!
    if (node.callFrame.functionName === '(idle)') continue
    const pkg = node.callFrame.functionName === '(garbage collector)' ? '(garbage collector)' : packageOf(node.callFrame.url)
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + micros)
    byFunction.set(frameName(node), (byFunction.get(frameName(node)) ?? 0) + micros)
    // Each distinct frame on the stack gets the sample once (recursion counted once).
    const seen = new Set<string>()
    for (let at: number | undefined = id; at !== undefined; at = parents.get(at)) {
      const name = frameName(byId.get(at)!)
      if (seen.has(name)) continue
      seen.add(name)
      inclusive.set(name, (inclusive.get(name) ?? 0) + micros)
    }
  }
  const pct = (micros: number) => `${((micros / busy) * 100).toFixed(1).padStart(5)}%`
  const rows = (map: Map<string, number>, count: number) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, count)
      .map(([name, micros]) => `  ${pct(micros)}  ${(micros / 1000).toFixed(0).padStart(7)} ms  ${name}`)
  if (match) {
    const matching = new Map([...inclusive].filter(([name]) => match.test(name)))
    return [`total time of the functions matching ${match}:`, ...rows(matching, top)].join('\n')
  }
  return [
    `profile: ${(total / 1e6).toFixed(1)} s, busy ${(busy / 1e6).toFixed(1)} s (percentages are of busy time)`,
    'self time by package:',
    ...rows(byPackage, top),
    'self time by function:',
    ...rows(byFunction, top),
    'total time (self + callees) by function:',
    ...rows(inclusive, top * 2),
  ].join('\n')
}

const args = process.argv.slice(2)
const matchAt = args.indexOf('--match')
const match = matchAt >= 0 ? new RegExp(args.splice(matchAt, 2)[1] ?? '') : undefined
const skipAt = args.indexOf('--skip')
const skipMicros = skipAt >= 0 ? Number(args.splice(skipAt, 2)[1] ?? 0) * 1e6 : 0
const top = /^[0-9]+$/.test(args.at(-1) ?? '') ? Number(args.pop()) : 25
if (args.length === 0) {
  console.error('usage: node --import tsx bench/profile-summary.ts <file.cpuprofile>... [--match <regexp>] [--skip <seconds>] [top]')
  process.exit(2)
}
for (const file of args)
  console.log(`${file}\n${summarize(JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile, top, match, skipMicros)}\n`)
