#!/usr/bin/env node
// Where the version of a release is written, checked and changed in one place (scripts/release).
//
//   node scripts/release-versions.mjs check             # every place agrees with package.json
//   node scripts/release-versions.mjs set X.Y.Z [--date YYYY-MM-DD]
//   node scripts/release-versions.mjs files             # the files it reads (test/release copies them)
//
// `check` prints every disagreement, one a line, and exits 1 if there is any. `set` writes X.Y.Z
// everywhere (the lock files too) and gives each changelog a heading for it if it has none: its
// "Unreleased" entries become the release's, under a new empty "Unreleased". The root's heading is
// Keep a Changelog's `## [X.Y.Z] - DATE`; the SDKs' is `## X.Y.Z`, as their suites read it.
import { readFileSync, readdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const SEMVER = String.raw`\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?`
const SDK_CHANGELOGS = ['sdks/js/CHANGELOG.md', 'sdks/python/CHANGELOG.md', 'sdks/php/CHANGELOG.md', 'sdks/java/CHANGELOG.md']

const read = (file) => readFileSync(path.join(ROOT, file), 'utf8')
const write = (file, text) => writeFileSync(path.join(ROOT, file), text)

/**
 * A version written in a text file: `pattern` (a regular expression source in which `{V}` stands for
 * the version) must match at least once, and every match must carry the release's version.
 */
function textPlace(file, pattern, what) {
  const regex = () => new RegExp(pattern.replace('{V}', `(${SEMVER})`), 'g')
  return {
    file,
    what,
    found: () => [...read(file).matchAll(regex())].map((m) => m[1]),
    set: (version) =>
      write(
        file,
        read(file).replace(regex(), (whole, found) => whole.replace(found, version)),
      ),
  }
}

/** A version in a JSON file (package.json, package-lock.json), at the given keys. */
function jsonPlace(file, keys, what) {
  const get = (data) => keys.reduce((node, key) => node?.[key], data)
  return {
    file,
    what,
    found: () => {
      const value = get(JSON.parse(read(file)))
      return value === undefined ? [] : [value]
    },
    set: (version) => {
      const data = JSON.parse(read(file))
      const parent = keys.slice(0, -1).reduce((node, key) => node[key], data)
      parent[keys.at(-1)] = version
      write(file, `${JSON.stringify(data, null, 2)}\n`)
    },
  }
}

/** composer.json has no version (Packagist takes it from the tag); its branch alias names the minor line. */
function composerAliasPlace() {
  const file = 'sdks/php/composer.json'
  return {
    file,
    what: 'extra.branch-alias.dev-main (MAJOR.MINOR.x-dev)',
    found: () => {
      const alias = JSON.parse(read(file)).extra?.['branch-alias']?.['dev-main']
      return alias === undefined ? [] : [alias]
    },
    expected: (version) => `${version.split('.').slice(0, 2).join('.')}.x-dev`,
    set(version) {
      const text = read(file)
      write(file, text.replace(/("dev-main":\s*")[^"]*(")/, `$1${this.expected(version)}$2`))
    },
  }
}

/** The newest release heading of a changelog ("Unreleased" is not one). */
function changelogPlace(file, style) {
  const heading = new RegExp(String.raw`^## \[?(${SEMVER})\]?(?=[\s]|$)`, 'm')
  return {
    file,
    what: 'newest release heading',
    found: () => {
      const match = heading.exec(read(file))
      return match ? [match[1]] : []
    },
    set: (version, date) => {
      const text = read(file)
      if (new RegExp(String.raw`^## \[?${version.replaceAll('.', '\\.')}\]?(?=\s|$)`, 'm').test(text)) return
      const line = style === 'keep-a-changelog' ? `## [${version}] - ${date}` : `## ${version}`
      const unreleased = /^## \[?Unreleased\]?([^\n]*)\n/im
      if (unreleased.test(text)) {
        // What was unreleased is this release now (with the heading's note, such as PHP's
        // "— scoped keys …"); a new, empty "Unreleased" goes above it.
        write(
          file,
          text.replace(unreleased, (_, note) => `## Unreleased\n\n${line}${note}\n`),
        )
        return
      }
      const first = text.search(/^## /m)
      write(file, first === -1 ? `${text.trimEnd()}\n\n${line}\n` : `${text.slice(0, first)}${line}\n\n${text.slice(first)}`)
    },
  }
}

function places() {
  const list = [
    jsonPlace('package.json', ['version'], 'version'),
    jsonPlace('package-lock.json', ['version'], 'version'),
    jsonPlace('package-lock.json', ['packages', '', 'version'], 'packages[""].version'),
    changelogPlace('CHANGELOG.md', 'keep-a-changelog'),
    // The image's version label, when built without scripts/container/build-image's --build-arg.
    textPlace('Containerfile', String.raw`ARG VERSION={V}`, 'ARG VERSION'),
    textPlace('Dockerfile', String.raw`ARG VERSION={V}`, 'ARG VERSION'),
    jsonPlace('sdks/js/package.json', ['version'], 'version'),
    jsonPlace('sdks/js/package-lock.json', ['version'], 'version'),
    jsonPlace('sdks/js/package-lock.json', ['packages', '', 'version'], 'packages[""].version'),
    textPlace('sdks/js/src/version.ts', String.raw`export const VERSION = '{V}'`, 'VERSION'),
    textPlace('sdks/python/src/fileshare/_version.py', String.raw`__version__ = "{V}"`, '__version__'),
    textPlace('sdks/php/src/Client.php', String.raw`public const VERSION = '{V}'`, 'Client::VERSION (the user agent)'),
    composerAliasPlace(),
    textPlace('sdks/java/pom.xml', String.raw`<artifactId>fileshare-sdk</artifactId>\s*<version>{V}</version>`, 'project <version>'),
    textPlace('sdks/java/src/main/java/dev/fileshare/Version.java', String.raw`VERSION = "{V}"`, 'Version.VERSION (the user agent)'),
    ...SDK_CHANGELOGS.map((file) => changelogPlace(file, 'plain')),
    // Where the documentation names the version a reader installs.
    textPlace('sdks/js/README.md', String.raw`fileshare-sdk-{V}\.tgz`, 'the packed tarball'),
    textPlace('sdks/js/README.md', String.raw`fileshare-sdk-js/{V}`, 'the user agent'),
    textPlace('sdks/js/test/install.test.ts', String.raw`toContain\('{V}'\)`, 'the version `fshare --version` prints'),
    textPlace('sdks/python/README.md', String.raw`fileshare-sdk-python/{V}`, 'the user agent'),
    textPlace('sdks/php/README.md', String.raw`fileshare-sdk-php/{V}`, 'the user agent'),
    textPlace('sdks/java/README.md', String.raw`<version>{V}</version>`, 'the Maven dependency'),
    textPlace('sdks/java/README.md', String.raw`fileshare-sdk[:/-]{V}`, 'the coordinates, jar and ~/.m2 path'),
    textPlace('sdks/java/README.md', String.raw`fileshare-sdk-java/{V}`, 'the user agent'),
    textPlace('public/dashboard/pages/get-started.html', String.raw`dev\.fileshare:fileshare-sdk:{V}`, 'the Java SDK (Gradle)'),
    textPlace('public/dashboard/pages/get-started.html', String.raw`&lt;version&gt;{V}&lt;/version&gt;`, 'the Java SDK (Maven)'),
  ]
  for (const example of readdirSync(path.join(ROOT, 'sdks/java/examples')).filter((name) => name.endsWith('.java'))) {
    const file = `sdks/java/examples/${example}`
    if (new RegExp(String.raw`fileshare-sdk-${SEMVER}\.jar`).test(read(file))) {
      list.push(textPlace(file, String.raw`fileshare-sdk-{V}\.jar`, 'the jar to run with'))
    }
  }
  return list
}

/** Every disagreement with `version`, as lines "file: what is X, not V". */
export function disagreements(version) {
  const problems = []
  for (const place of places()) {
    const expected = place.expected ? place.expected(version) : version
    let found
    try {
      found = place.found()
    } catch (error) {
      problems.push(`${place.file}: cannot be read (${error.message})`)
      continue
    }
    if (found.length === 0) problems.push(`${place.file}: no ${place.what} found (expected ${expected})`)
    for (const value of new Set(found)) {
      if (value !== expected) problems.push(`${place.file}: ${place.what} is ${value}, not ${expected}`)
    }
  }
  return problems
}

function main(argv) {
  const [command, ...rest] = argv
  if (command === 'check') {
    const { version } = JSON.parse(read('package.json'))
    const problems = disagreements(version)
    if (problems.length > 0) {
      console.error(`The version is not ${version} (package.json) everywhere:`)
      for (const problem of problems) console.error(`  ${problem}`)
      return 1
    }
    console.log(`version ${version}: package.json, the lock files, the four SDKs, the docs and every CHANGELOG agree`)
    return 0
  }
  if (command === 'set') {
    const [version, ...options] = rest
    if (!version || !new RegExp(`^${SEMVER}$`).test(version)) {
      console.error(`set needs a version X.Y.Z (semantic versioning), got "${version ?? ''}"`)
      return 2
    }
    let date = new Date().toISOString().slice(0, 10)
    if (options[0] === '--date' && /^\d{4}-\d{2}-\d{2}$/.test(options[1] ?? '') && options.length === 2) date = options[1]
    else if (options.length > 0) {
      console.error(`set takes only --date YYYY-MM-DD after the version, got "${options.join(' ')}"`)
      return 2
    }
    for (const place of places()) place.set(version, date)
    const problems = disagreements(version)
    if (problems.length > 0) {
      for (const problem of problems) console.error(`  ${problem}`)
      return 1
    }
    console.log(`version ${version} written everywhere; fill in the changelogs' new entries`)
    return 0
  }
  if (command === 'files') {
    for (const file of new Set(places().map((place) => place.file))) console.log(file)
    return 0
  }
  console.error('usage: release-versions.mjs check | set X.Y.Z [--date YYYY-MM-DD] | files')
  return 2
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) process.exitCode = main(process.argv.slice(2))
