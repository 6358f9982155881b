// `npm pack` holds the build, the types, README.md, LICENSE and package.json: nothing else.
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { expect, it } from 'vitest'

it('packs dist (JS + .d.ts), README.md, LICENSE and package.json only', async () => {
  const cwd = fileURLToPath(new URL('..', import.meta.url))
  // --ignore-scripts: the suite built dist already (pretest); prepack would build it again.
  const { stdout } = await promisify(execFile)('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd })
  const [pack] = JSON.parse(stdout) as [{ name: string; version: string; files: { path: string }[] }]
  expect(pack.name).toBe('@fileshare/sdk')
  const paths = pack.files.map((f) => f.path).sort()
  const outside = paths.filter((p) => !p.startsWith('dist/') && !['README.md', 'LICENSE', 'package.json'].includes(p))
  expect(outside).toEqual([])
  for (const required of [
    'README.md',
    'LICENSE',
    'package.json',
    'dist/index.js',
    'dist/index.d.ts',
    'dist/client.d.ts',
    'dist/node/node-io.browser.js',
  ]) {
    expect(paths).toContain(required)
  }
  expect(paths.filter((p) => p.endsWith('.map') || p.includes('test'))).toEqual([])
}, 60_000)
