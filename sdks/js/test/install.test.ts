// Issue 30, point 7: the package installs the normal way. A fresh project installs the packed
// tarball (`npm pack`) and another the folder itself (`npm install path/to/sdks/js`, which runs
// `prepare` to build dist/ in a checkout that has none); in both an ES module and a CommonJS
// TypeScript program (compiled with module nodenext, run through require(esm)) call the server.
import { execFile } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
import { server, tempDir } from './helpers/env.js'

const run = promisify(execFile)
const SDK = fileURLToPath(new URL('..', import.meta.url))
const TSC = path.join(SDK, 'node_modules', 'typescript', 'bin', 'tsc')
const tmp = tempDir()
afterAll(() => tmp.remove())

const NPM = ['--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error']

const ESM = `import Fileshare, { NotFoundError, APITimeoutError } from '@fileshare/sdk'
const client = new Fileshare()
const { data, response } = await client.stats().withResponse()
const missing = await client.files.get(999999999).catch((e) => e)
console.log(JSON.stringify({ plan: data.plan, remaining: response.headers.get('ratelimit-remaining'), notFound: missing instanceof NotFoundError, timeout: typeof APITimeoutError }))
`

const CJS = `import { Fileshare, NotFoundError, type StatsResult } from '@fileshare/sdk'
async function main(): Promise<void> {
  const client = new Fileshare()
  const stats: StatsResult = await client.stats()
  const missing: unknown = await client.files.get(999999999).catch((e: unknown) => e)
  console.log(JSON.stringify({ plan: stats.plan, notFound: missing instanceof NotFoundError }))
}
void main()
`

/** A fresh project with an ESM and a CommonJS TypeScript consumer; installs `spec`, compiles, runs both. */
async function consumer(name: string, spec: string, extra: string[] = []) {
  const dir = path.join(tmp.dir, name)
  mkdirSync(dir)
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name, private: true, type: 'commonjs' }))
  writeFileSync(path.join(dir, 'esm.mjs'), ESM)
  writeFileSync(path.join(dir, 'cjs.ts'), CJS)
  writeFileSync(
    path.join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', strict: true, outDir: 'out', types: [] },
      files: ['cjs.ts'],
    }),
  )
  await run('npm', ['install', spec, ...NPM, ...extra], { cwd: dir })
  await run(process.execPath, [TSC, '-p', dir], { cwd: dir })
  const env = { ...process.env, FILESHARE_BASE_URL: server().base_url, FILESHARE_API_KEY: server().keys.pro }
  const esm = JSON.parse((await run(process.execPath, ['esm.mjs'], { cwd: dir, env })).stdout) as Record<string, unknown>
  // CommonJS indeed: TypeScript compiled the import to require(), which loads the ES module.
  expect(readFileSync(path.join(dir, 'out', 'cjs.js'), 'utf8')).toContain('require("@fileshare/sdk")')
  const cjs = JSON.parse((await run(process.execPath, ['out/cjs.js'], { cwd: dir, env })).stdout) as Record<string, unknown>
  return { dir, esm, cjs }
}

describe('installing the package', () => {
  it('from the packed tarball, without the optional cli-progress: ESM and CommonJS consumers work', async () => {
    const { stdout } = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', tmp.dir], { cwd: SDK })
    const [pack] = JSON.parse(stdout) as [{ filename: string }]
    const { dir, esm, cjs } = await consumer('from-tarball', path.join(tmp.dir, pack.filename), ['--omit=optional'])
    expect(esm).toEqual({ plan: 'pro', remaining: expect.stringMatching(/^\d+$/), notFound: true, timeout: 'function' })
    expect(cjs).toEqual({ plan: 'pro', notFound: true })
    expect(existsSync(path.join(dir, 'node_modules', 'cli-progress'))).toBe(false)
    expect(existsSync(path.join(dir, 'node_modules', '@noble', 'hashes'))).toBe(true)
    // The CLI works without cli-progress too.
    const version = await run(path.join(dir, 'node_modules', '.bin', 'fshare'), ['--version'], { cwd: dir })
    expect(version.stdout).toContain('0.2.0')
  }, 120_000)

  it('from the folder of a checkout without dist/: prepare builds it', async () => {
    const checkout = path.join(tmp.dir, 'checkout')
    mkdirSync(checkout)
    for (const entry of ['src', 'bin', 'package.json', 'tsconfig.json', 'tsconfig.build.json', 'README.md', 'CHANGELOG.md', 'LICENSE']) {
      cpSync(path.join(SDK, entry), path.join(checkout, entry), { recursive: true })
    }
    // The checkout's own `npm ci` would bring TypeScript; this one borrows the suite's.
    symlinkSync(path.join(SDK, 'node_modules'), path.join(checkout, 'node_modules'))
    const { esm, cjs } = await consumer('from-folder', checkout)
    expect(readdirSync(path.join(checkout, 'dist'))).toContain('index.d.ts')
    expect(esm).toMatchObject({ plan: 'pro', notFound: true })
    expect(cjs).toEqual({ plan: 'pro', notFound: true })
  }, 120_000)
})
