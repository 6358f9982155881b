import { execFile } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort, ROOT, startServerProcess, stopServerProcess, type ServerProcess } from '../helpers/server-process.js'

/**
 * The Containerfile, read as text: what docs/deployment.md ("Container image") promises of the image,
 * and the copies that must not drift. Building and running the image is scripts/container/test-image's
 * part (CI: .ci/container); this runs in the plain test suite, in milliseconds.
 */
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8')
const containerfile = read('Containerfile')
const packageJson = JSON.parse(read('package.json')) as { version: string; license: string }

interface Instruction {
  keyword: string
  args: string
}

/** The instructions of each stage, continuation lines joined, comments dropped. */
function stages(text: string): Instruction[][] {
  const lines = text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
  const result: Instruction[][] = [[]]
  for (const line of lines) {
    const [, keyword, args] = /^(\S+)\s*(.*)$/.exec(line)!
    if (keyword!.toUpperCase() === 'FROM') result.push([])
    result.at(-1)!.push({ keyword: keyword!.toUpperCase(), args: args! })
  }
  return result
}
const [preamble, build, run] = stages(containerfile) as [Instruction[], Instruction[], Instruction[]]
const all = (stage: Instruction[], keyword: string) => stage.filter((instruction) => instruction.keyword === keyword).map((i) => i.args)
const one = (stage: Instruction[], keyword: string) => {
  const found = all(stage, keyword)
  expect(found, keyword).toHaveLength(1)
  return found[0]!
}
/** ENV's and LABEL's key=value pairs (values in double quotes or bare). */
const pairs = (args: string[]) =>
  Object.fromEntries(args.flatMap((text) => [...text.matchAll(/([\w.-]+)=("([^"]*)"|\S+)/g)].map((m) => [m[1]!, m[3] ?? m[2]!])))
/** HEALTHCHECK's CMD, in exec form. */
const healthcheck = JSON.parse(/CMD (\[.*\])$/.exec(one(run, 'HEALTHCHECK'))![1]!) as string[]

describe('Containerfile', () => {
  it('has its copies: Dockerfile (BuildKit cannot read a symlinked one) and .dockerignore', () => {
    expect(read('Dockerfile')).toBe(containerfile)
    expect(read('.dockerignore')).toBe(read('.containerignore'))
  })

  it('builds on the official Node.js image of the pinned major, named by an argument', () => {
    const major = read('.nvmrc').trim().split('.')[0]
    expect(one(preamble, 'ARG')).toBe(`NODE_IMAGE=node:${major}-bookworm-slim`)
    expect(all(build, 'FROM')).toEqual(['${NODE_IMAGE} AS build'])
    expect(all(run, 'FROM')).toEqual(['${NODE_IMAGE}'])
  })

  it('installs with dev dependencies but not the runtime pin, and keeps production dependencies only', () => {
    const commands = all(build, 'RUN').join('\n')
    expect(commands).toMatch(/npm ci --omit=optional\b/)
    expect(commands).toMatch(/npm run build\b/)
    expect(commands).toMatch(/npm prune --omit=dev --omit=optional\b/)
    expect(all(run, 'COPY')).toEqual(
      expect.arrayContaining(['--from=build /app/node_modules ./node_modules', '--from=build /app/dist ./dist']),
    )
  })

  it("carries OCI labels, its version being package.json's", () => {
    expect(all(run, 'ARG')).toContain(`VERSION=${packageJson.version}`)
    expect(pairs(all(run, 'LABEL'))).toMatchObject({
      'org.opencontainers.image.version': '${VERSION}',
      'org.opencontainers.image.licenses': packageJson.license,
      'org.opencontainers.image.source': expect.stringMatching(/^https:\/\//),
      'org.opencontainers.image.title': 'Fileshare',
      'org.opencontainers.image.description': expect.any(String),
    })
  })

  it('runs `node dist/server.js` under tini, as a user that is not root, on /data', () => {
    expect(JSON.parse(one(run, 'ENTRYPOINT'))).toEqual(['/usr/bin/tini', '--'])
    const command = JSON.parse(one(run, 'CMD')) as string[]
    expect(command[0]).toBe('node')
    expect(command.at(-1)).toBe('dist/server.js')
    expect(one(run, 'USER')).toBe('fileshare')
    expect(pairs(all(run, 'ENV'))).toMatchObject({ FILESHARE_DATA_DIR: '/data', HOST: '0.0.0.0', PORT: '3000' })
    expect(one(run, 'VOLUME')).toBe('/data')
    expect(one(run, 'EXPOSE')).toBe('3000')
    const commands = all(run, 'RUN').join('\n')
    expect(commands).toMatch(/chown fileshare:fileshare \/data/)
    expect(commands).toMatch(/ln -s \/app\/bin\/fileshare\.js \/usr\/local\/bin\/fileshare/)
  })

  it('leaves out of the build context what the image never copies, and nothing it does', () => {
    const ignored = read('.containerignore')
      .split('\n')
      .filter((line) => line.trim() && !line.startsWith('#'))
    expect(ignored).toEqual(expect.arrayContaining(['.git', '**/node_modules', 'dist', 'data', 'release', 'sdks']))
    const copied = [...all(build, 'COPY'), ...all(run, 'COPY')]
      .filter((args) => !args.startsWith('--from'))
      .flatMap((args) => args.split(/\s+/).slice(0, -1))
    expect(copied.sort()).toEqual([
      'bin',
      'package-lock.json',
      'package.json',
      'package.json',
      'public',
      'src',
      'tsconfig.build.json',
      'tsconfig.json',
    ])
    for (const file of copied) {
      expect(fs.existsSync(path.join(ROOT, file)), file).toBe(true)
      expect(ignored, file).not.toContain(file)
    }
  })

  describe('its HEALTHCHECK command', () => {
    let server: ServerProcess
    let dataDir: string
    beforeAll(async () => {
      dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'fileshare-healthcheck-'))
      server = await startServerProcess({ dataDir, env: { FILESHARE_LOG_LEVEL: 'warn' } })
    })
    afterAll(async () => {
      if (server) await stopServerProcess(server)
      fs.rmSync(dataDir, { recursive: true, force: true })
    })
    const check = (port: number) =>
      promisify(execFile)(process.execPath, healthcheck.slice(1), { env: { ...process.env, PORT: String(port) }, timeout: 10_000 }).then(
        () => 0,
        (error: { code?: number }) => error.code ?? -1,
      )

    it('is node asking /readyz on PORT, without curl', () => {
      expect(healthcheck.slice(0, 2)).toEqual(['node', '-e'])
      expect(healthcheck[2]).toContain('/readyz')
      expect(healthcheck[2]).toContain('process.env.PORT')
    })

    it('passes on a ready server and fails where none answers', async () => {
      expect(await check(server.port)).toBe(0)
      expect(await check(await freePort())).toBe(1)
    })
  })
})
