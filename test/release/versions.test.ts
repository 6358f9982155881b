// scripts/release-versions.mjs (behind `scripts/release --check` and `--set-version`), run on a copy
// of the files that name the version: the checkout agrees, a disagreement is listed by file, and
// `set` moves everything (changelogs included) to a new version in one step.
import { spawnSync } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const SCRIPT = 'scripts/release-versions.mjs'

function run(cwd: string, ...args: string[]) {
  const result = spawnSync(process.execPath, [path.join(cwd, SCRIPT), ...args], { cwd, encoding: 'utf8' })
  return { code: result.status, stdout: result.stdout, stderr: result.stderr }
}

describe('scripts/release-versions.mjs', () => {
  let copy: string
  const read = (file: string) => readFileSync(path.join(copy, file), 'utf8')
  const edit = (file: string, change: (text: string) => string) => writeFileSync(path.join(copy, file), change(read(file)))

  beforeEach(() => {
    copy = mkdtempSync(path.join(tmpdir(), 'fileshare-versions-'))
    const files = run(ROOT, 'files').stdout.trim().split('\n')
    expect(files).toContain('sdks/java/pom.xml')
    for (const file of [SCRIPT, ...files]) {
      mkdirSync(path.dirname(path.join(copy, file)), { recursive: true })
      cpSync(path.join(ROOT, file), path.join(copy, file))
    }
  })
  afterEach(() => rmSync(copy, { recursive: true, force: true }))

  it('finds the version of package.json everywhere in the checkout', () => {
    const { version } = JSON.parse(read('package.json')) as { version: string }
    const result = run(copy, 'check')
    expect(result.stderr).toBe('')
    expect(result.stdout).toContain(`version ${version}:`)
    expect(result.code).toBe(0)
  })

  it('lists every disagreement, one a line, and exits 1', () => {
    const { version } = JSON.parse(read('package.json')) as { version: string }
    edit('sdks/python/src/fileshare/_version.py', (text) => text.replace(`"${version}"`, '"9.9.9"'))
    edit('sdks/java/pom.xml', (text) => text.replace(`<version>${version}</version>`, '<version>9.9.8</version>'))
    edit('sdks/php/CHANGELOG.md', (text) => text.replace(new RegExp(`^## ${version.replaceAll('.', '\\.')}`, 'm'), '## 0.0.1'))
    const result = run(copy, 'check')
    expect(result.code).toBe(1)
    expect(result.stderr.trim().split('\n')).toEqual([
      `The version is not ${version} (package.json) everywhere:`,
      `  sdks/python/src/fileshare/_version.py: __version__ is 9.9.9, not ${version}`,
      `  sdks/java/pom.xml: project <version> is 9.9.8, not ${version}`,
      `  sdks/php/CHANGELOG.md: newest release heading is 0.0.1, not ${version}`,
    ])
  })

  it('set writes a new version everywhere and gives each changelog its heading', () => {
    edit('sdks/js/CHANGELOG.md', (text) =>
      text.replace(/^## Unreleased\n/m, '').replace(/^## /m, '## Unreleased\n\n### Added\n- Something new.\n\n## '),
    )
    const result = run(copy, 'set', '1.0.0', '--date', '2027-01-15')
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    expect(run(copy, 'check').code).toBe(0)

    expect(JSON.parse(read('package.json')).version).toBe('1.0.0')
    expect(JSON.parse(read('package-lock.json')).packages[''].version).toBe('1.0.0')
    expect(read('sdks/python/src/fileshare/_version.py')).toContain('__version__ = "1.0.0"')
    expect(read('sdks/php/src/Client.php')).toContain("public const VERSION = '1.0.0';")
    expect(JSON.parse(read('sdks/php/composer.json')).extra['branch-alias']['dev-main']).toBe('1.0.x-dev')
    expect(read('sdks/java/src/main/java/dev/fileshare/Version.java')).toContain('VERSION = "1.0.0"')
    expect(read('public/dashboard/pages/get-started.html')).toContain('dev.fileshare:fileshare-sdk:1.0.0')
    expect(read('Containerfile')).toContain('ARG VERSION=1.0.0')
    // The root's changelog: Keep a Changelog's heading under a new, empty "Unreleased".
    expect(read('CHANGELOG.md')).toMatch(/^## Unreleased\n\n## \[1\.0\.0\] - 2027-01-15\n/m)
    // An SDK's: its Unreleased entries are the release's now, under `## 1.0.0` as its suite reads it.
    expect(read('sdks/js/CHANGELOG.md')).toMatch(/^## Unreleased\n\n## 1\.0\.0\n\n### Added\n- Something new\.\n/m)
    for (const sdk of ['python', 'php', 'java']) expect(read(`sdks/${sdk}/CHANGELOG.md`)).toMatch(/^## 1\.0\.0( |$)/m)
    // History stays as it was.
    expect(read('sdks/java/README.md')).toMatch(/Before 0\.2\.0/)

    // A second run changes nothing.
    const before = run(copy, 'files')
      .stdout.trim()
      .split('\n')
      .map((file) => read(file))
    expect(run(copy, 'set', '1.0.0', '--date', '2027-02-01').code).toBe(0)
    expect(
      run(copy, 'files')
        .stdout.trim()
        .split('\n')
        .map((file) => read(file)),
    ).toEqual(before)
  })

  it('refuses a version that is not X.Y.Z', () => {
    expect(run(copy, 'set', '1.0').code).toBe(2)
    expect(run(copy, 'set', '1.0.0', '--date', 'tomorrow').code).toBe(2)
    expect(JSON.parse(read('package.json')).version).not.toBe('1.0')
  })
})
