// `npm pack` holds the build, the types, the `fshare` bin, README.md, CHANGELOG.md, LICENSE and package.json: nothing else.
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { expect, it } from 'vitest'

it('packs dist (JS + .d.ts), bin/fshare.js, README.md, CHANGELOG.md, LICENSE and package.json only', async () => {
  const cwd = fileURLToPath(new URL('..', import.meta.url))
  // --ignore-scripts: the suite built dist already (pretest); prepack would build it again.
  const { stdout } = await promisify(execFile)('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd })
  const [pack] = JSON.parse(stdout) as [{ name: string; version: string; files: { path: string; mode: number }[] }]
  expect(pack.name).toBe('@fileshare/sdk')
  const paths = pack.files.map((f) => f.path).sort()
  const outside = paths.filter(
    (p) => !p.startsWith('dist/') && !['README.md', 'CHANGELOG.md', 'LICENSE', 'package.json', 'bin/fshare.js'].includes(p),
  )
  expect(outside).toEqual([])
  for (const required of [
    'README.md',
    'CHANGELOG.md',
    'LICENSE',
    'package.json',
    'dist/index.js',
    'dist/index.d.ts',
    'dist/client.d.ts',
    'dist/node/node-io.browser.js',
    'dist/cli/main.js',
    'bin/fshare.js',
  ]) {
    expect(paths).toContain(required)
  }
  expect(paths.filter((p) => p.endsWith('.map') || p.includes('test'))).toEqual([])
  // The bin: a shebang, executable, named in package.json.
  const bin = readFileSync(path.join(cwd, 'bin/fshare.js'), 'utf8')
  expect(bin.startsWith('#!/usr/bin/env node\n')).toBe(true)
  expect(pack.files.find((f) => f.path === 'bin/fshare.js')!.mode & 0o111).not.toBe(0)
  const manifest = JSON.parse(readFileSync(path.join(cwd, 'package.json'), 'utf8')) as Record<string, unknown>
  expect(manifest.bin).toEqual({ fshare: 'bin/fshare.js' })
  // Where it comes from, and what it needs: cli-progress (the CLI's bar) is optional.
  expect(manifest).toMatchObject({
    repository: { type: 'git', url: expect.stringContaining('github.com'), directory: 'sdks/js' },
    homepage: expect.stringContaining('sdks/js'),
    bugs: { url: expect.stringContaining('/issues') },
    scripts: { prepare: 'npm run build' },
    optionalDependencies: { 'cli-progress': expect.any(String) },
  })
  expect(Object.keys(manifest.dependencies as object)).toEqual(['@noble/hashes'])
}, 60_000)
