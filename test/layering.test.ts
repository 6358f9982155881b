import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

/**
 * The arrows of shared/design/layout.md, checked on every import of src/: http -> services ->
 * (db, storage, limits) -> (lib, config, errors), never backwards, so a reader finds each
 * behaviour in one obvious place and a service can run without Fastify.
 */
const SRC = fileURLToPath(new URL('../src/', import.meta.url))

/** What each part of src/ may import of ours (its own folder is always allowed). */
const ALLOWED: Record<string, readonly string[]> = {
  'config.ts': [],
  'errors.ts': [],
  lib: ['errors.ts'],
  db: ['config.ts', 'errors.ts', 'lib'],
  storage: ['config.ts', 'errors.ts', 'lib'],
  limits: ['config.ts', 'errors.ts', 'lib'],
  // The virus scanner's adapter (clamd), a backend like storage and limits.
  scanning: ['config.ts', 'errors.ts', 'lib'],
  services: ['config.ts', 'errors.ts', 'lib', 'db', 'storage', 'limits', 'scanning'],
  'backends.ts': ['config.ts', 'errors.ts', 'lib', 'db', 'storage', 'limits', 'scanning', 'services'],
  cli: ['config.ts', 'errors.ts', 'lib', 'db', 'services', 'backends.ts', 'server.ts'],
  http: ['config.ts', 'errors.ts', 'lib', 'db', 'storage', 'limits', 'scanning', 'services', 'backends.ts'],
  'app.ts': ['config.ts', 'errors.ts', 'lib', 'http'],
  'server.ts': ['config.ts', 'errors.ts', 'lib', 'app.ts'],
}
/** Only the HTTP layer and the two files that build and start it know the web framework. */
const FRAMEWORK = /^(fastify|@fastify\/|fastify-plugin)/
const MAY_USE_FRAMEWORK = new Set(['http', 'app.ts', 'server.ts'])

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(full)
    return entry.name.endsWith('.ts') ? [full] : []
  })
}

/** The top-level part of src/ a file or import target belongs to: a folder name or a root file. */
function partOf(file: string): string {
  return path.relative(SRC, file).split(path.sep)[0]!
}

function imports(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8')
  return [...text.matchAll(/(?:^|\n)\s*(?:import|export)[^'"`;]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g)].map(
    (match) => (match[1] ?? match[2])!,
  )
}

describe('layering of src/', () => {
  const files = sourceFiles(SRC)

  it('knows every part of src/', () => {
    const parts = new Set(files.map(partOf))
    expect([...parts].filter((part) => !(part in ALLOWED))).toEqual([])
  })

  it('has no import running against the arrows', () => {
    const violations: string[] = []
    for (const file of files) {
      const from = partOf(file)
      for (const target of imports(file)) {
        if (target.startsWith('.')) {
          const to = partOf(path.resolve(path.dirname(file), target).replace(/\.js$/, '.ts'))
          if (to !== from && !ALLOWED[from]!.includes(to)) violations.push(`${path.relative(SRC, file)} -> ${target}`)
        } else if (FRAMEWORK.test(target) && !MAY_USE_FRAMEWORK.has(from)) {
          violations.push(`${path.relative(SRC, file)} -> ${target}`)
        }
      }
    }
    expect(violations).toEqual([])
  })
})
