import { execFile, spawn } from 'node:child_process'
import fs from 'node:fs'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { promisify } from 'node:util'
import { Ajv } from 'ajv'
import { parse } from 'yaml'
import { afterEach, describe, expect, it } from 'vitest'
import { sampleNginxConfig } from '../helpers/nginx.js'
import { ROOT } from '../helpers/server-process.js'

/**
 * deploy/compose.yaml and deploy/compose.scale-out.yaml, checked as far as a machine without a
 * container engine allows (docs/deployment.md, "Compose"): valid against the Compose
 * Specification's own JSON schema (compose-spec/compose-spec, schema/compose-spec.json, copied
 * unchanged into test/deploy/compose-spec/ with its Apache-2.0 licence), plus what
 * `docker compose config` would also refuse (a dependency or a volume that does not exist, a file
 * to mount that is missing, a variable left to expand to nothing), plus our own rules: every
 * FILESHARE_* variable is one docs/configuration.md documents, the health checks are the image's,
 * and nginx's configuration is docs/scale-out.md's tested sample. No container runs here.
 */
const DEPLOY = path.join(ROOT, 'deploy')
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8')

type Service = Record<string, unknown> & {
  build?: unknown
  image?: string
  environment?: Record<string, string>
  volumes?: string[]
  depends_on?: Record<string, { condition: string }>
  healthcheck?: { test: string[] }
  restart?: string
  ports?: string[]
}
interface Compose {
  services: Record<string, Service>
  volumes?: Record<string, unknown>
}
const FILES = ['deploy/compose.yaml', 'deploy/compose.scale-out.yaml']
const text = Object.fromEntries(FILES.map((file) => [file, read(file)]))
const compose = Object.fromEntries(FILES.map((file) => [file, parse(text[file]!) as Compose]))
const embedded = compose['deploy/compose.yaml']!
const scaleOut = compose['deploy/compose.scale-out.yaml']!

/** The Containerfile's HEALTHCHECK, as compose writes it (["CMD", ...exec form]). */
const imageHealthcheck = [
  'CMD',
  ...(JSON.parse(/^HEALTHCHECK .* CMD (\[.*\])$/m.exec(read('Containerfile').replace(/\\\n\s*/g, ''))![1]!) as string[]),
]

const { $schema: _metaSchema, ...composeSpec } = JSON.parse(read('test/deploy/compose-spec/compose-spec.json')) as Record<string, unknown>
const validateCompose = new Ajv({ strict: false, allErrors: true }).compile(composeSpec)

it('the schema check refuses what Compose refuses', () => {
  expect(validateCompose({ services: { app: { image: 'x', depends_on: { db: { condition: 'service_ready' } } } } })).toBe(false)
  expect(validateCompose({ services: { app: { image: 'x', healthcheck: { test: 'true', intervall: '5s' } } } })).toBe(false)
  expect(validateCompose({ services: { app: { image: 'x' } }, volumez: {} })).toBe(false)
})

describe.each(FILES)('%s', (file) => {
  const document = compose[file]!

  it("is valid against the Compose Specification's schema", () => {
    const validate = validateCompose
    const valid = validate(document)
    expect(validate.errors ?? [], JSON.stringify(validate.errors, null, 1)).toEqual([])
    expect(valid).toBe(true)
  })

  it('depends only on services it has, and mounts only volumes it declares and files that exist', () => {
    for (const [name, service] of Object.entries(document.services)) {
      for (const dependency of Object.keys(service.depends_on ?? {}))
        expect(Object.keys(document.services), `${name} depends on ${dependency}`).toContain(dependency)
      for (const volume of service.volumes ?? []) {
        const source = volume.split(':')[0]!
        if (source.startsWith('.') || source.startsWith('/'))
          expect(fs.existsSync(path.resolve(DEPLOY, source)), `${name} mounts ${source}`).toBe(true)
        else expect(Object.keys(document.volumes ?? {}), `${name} mounts the volume ${source}`).toContain(source)
      }
      if (service.build) expect(service.build).toEqual({ context: '..' })
    }
  })

  it('waits only on dependencies that can say so: a health check, or a one-shot job', () => {
    for (const [name, service] of Object.entries(document.services)) {
      for (const [dependency, { condition }] of Object.entries(service.depends_on ?? {})) {
        const target = document.services[dependency]!
        if (condition === 'service_healthy') expect(target.healthcheck, `${name} waits for ${dependency} to be healthy`).toBeDefined()
        else expect([condition, target.restart], `${name} waits for ${dependency}`).toEqual(['service_completed_successfully', 'no'])
      }
    }
  })

  it('uses only FILESHARE_* variables that docs/configuration.md documents', () => {
    const configuration = read('docs/configuration.md')
    const names = new Set([
      ...Object.values(document.services).flatMap((service) => Object.keys(service.environment ?? {})),
      ...[...text[file]!.matchAll(/\$\{(\w+)/g)].map((match) => match[1]!),
    ])
    const fileshare = [...names].filter((name) => name.startsWith('FILESHARE_'))
    expect(fileshare.length).toBeGreaterThan(0)
    for (const name of fileshare) expect(configuration, name).toContain(`| \`${name}\` |`)
  })

  it('gives every ${VARIABLE} a default or a message that asks for it', () => {
    for (const [whole] of text[file]!.matchAll(/\$\{[^}]*\}/g)) expect(whole).toMatch(/^\$\{\w+(:-[^}]*|:\?[^}]+)\}$/)
  })

  it("checks the health of every Fileshare instance with the image's own command, and gives it the shutdown grace", () => {
    const instances = Object.entries(document.services).filter(([name]) => name.startsWith('fileshare'))
    expect(instances.length).toBeGreaterThan(0)
    for (const [name, service] of instances) {
      expect(service.healthcheck?.test, name).toEqual(imageHealthcheck)
      expect(service.restart, name).toBe('unless-stopped')
      // FILESHARE_SHUTDOWN_TIMEOUT_MS (30 s), then a margin before the engine's SIGKILL.
      expect(service.stop_grace_period, name).toBe('40s')
    }
  })
})

describe('deploy/compose.yaml', () => {
  it('is the whole set-up of docs: port 3000, a named volume on /data', () => {
    const service = embedded.services.fileshare!
    expect(service.ports).toEqual(['3000:3000'])
    expect(service.volumes).toEqual(['fileshare-data:/data'])
    expect(Object.keys(embedded.volumes ?? {})).toEqual(['fileshare-data'])
  })
})

describe('deploy/compose.scale-out.yaml', () => {
  it('runs two instances on PostgreSQL, S3 and Redis behind nginx, trusting only its headers', () => {
    const instances = ['fileshare-1', 'fileshare-2'].map((name) => scaleOut.services[name]!)
    for (const instance of instances) {
      expect(instance.environment).toMatchObject({
        FILESHARE_TRUST_PROXY: 'true',
        FILESHARE_DATABASE_URL: expect.stringMatching(/^postgres:\/\/.*@postgres:5432\//),
        FILESHARE_REDIS_URL: 'redis://redis:6379',
        FILESHARE_STORAGE: 's3',
        FILESHARE_S3_ENDPOINT: 'http://garage:3900',
        FILESHARE_S3_FORCE_PATH_STYLE: 'true',
      })
      expect(instance.ports).toBeUndefined()
    }
    expect(instances[0]).toEqual(instances[1])
    expect(Object.keys(scaleOut.services.nginx!.depends_on ?? {}).sort()).toEqual(['fileshare-1', 'fileshare-2'])
    // The bucket the instances use is the one the set-up job creates.
    expect(scaleOut.services['garage-init']!.environment!.FILESHARE_S3_BUCKET).toBe(instances[0]!.environment!.FILESHARE_S3_BUCKET)
  })

  it("has nginx serve docs/scale-out.md's sample, the upstream servers and the plain-HTTP listener aside", () => {
    expect(scaleOut.services.nginx!.volumes).toContain('./nginx/fileshare.conf:/etc/nginx/conf.d/default.conf:ro')
    const shipped = read('deploy/nginx/fileshare.conf')
      .replace(/^(#.*\n)+/, '')
      .replace(/^(\s*)server fileshare-(\d):3000\b/gm, (_line, space: string, n: string) => `${space}server 127.0.0.1:300${n}`)
      .replace(/^(\s*)listen 80;$/m, '$1listen 443 ssl;')
    expect(shipped).toBe(sampleNginxConfig())
    // Those upstream names are the instances'.
    const upstream = [...read('deploy/nginx/fileshare.conf').matchAll(/^\s*server (\S+):3000\b/gm)].map((m) => m[1])
    expect(upstream).toEqual(['fileshare-1', 'fileshare-2'])
  })

  it('has nginx close an idle connection to an instance before the instance does (else a POST on it can meet a reset: 502)', () => {
    const nginxSeconds = Number(/^\s*keepalive_timeout (\d+)s;/m.exec(sampleNginxConfig())?.[1])
    const instanceMs = Number(/keepAliveTimeout: ([\d_]+),/.exec(read('src/app.ts'))?.[1]?.replaceAll('_', ''))
    expect(nginxSeconds * 1000).toBeGreaterThan(0)
    expect(nginxSeconds * 1000).toBeLessThan(instanceMs)
  })

  it('asks for every secret in deploy/.env, as its header and docs/deployment.md say', () => {
    const required = new Set([...text['deploy/compose.scale-out.yaml']!.matchAll(/\$\{(\w+):\?/g)].map((m) => m[1]!))
    const header = text['deploy/compose.scale-out.yaml']!.split('\nname:')[0]!
    const deployment = read('docs/deployment.md')
    expect(required.size).toBeGreaterThan(0)
    for (const name of required) {
      expect(header, name).toMatch(new RegExp(`^#\\s+${name}=`, 'm'))
      expect(deployment, name).toContain(`${name}=`)
    }
  })
})

/**
 * deploy/garage/init.mjs against a stand-in for Garage's admin API v2 (request and answer shapes as
 * in Garage v2.0.0's src/api/admin/api.rs): what it asks on a fresh store, and that a second run
 * adds nothing. Garage itself cannot run here.
 */
describe('deploy/garage/init.mjs', () => {
  const TOKEN = 'admin-token-for-the-test'
  const SECRET = 'a'.repeat(64)
  let server: Server | undefined
  afterEach(() => server?.close())

  async function fakeGarage() {
    const state = { layoutVersion: 0, keys: new Set<string>(), buckets: new Map<string, string>(), allowed: [] as unknown[] }
    const calls: string[] = []
    const body = async (request: IncomingMessage) => {
      let data = ''
      for await (const chunk of request) data += chunk
      return data ? (JSON.parse(data) as Record<string, unknown>) : undefined
    }
    // A failed expectation answers 500 (init.mjs then fails, naming it) and is kept for the test.
    const failures: unknown[] = []
    const handle = async (request: IncomingMessage, response: ServerResponse) => {
      const url = new URL(request.url!, 'http://garage')
      const endpoint = url.pathname.replace('/v2/', '')
      calls.push(endpoint)
      const answer = (status: number, value: unknown) =>
        response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value))
      if (request.headers.authorization !== `Bearer ${TOKEN}`) return answer(403, { code: 'Forbidden' })
      const sent = await body(request)
      switch (endpoint) {
        case 'GetClusterStatus':
          return answer(200, { layoutVersion: state.layoutVersion, nodes: [{ id: 'f'.repeat(64), isUp: true, role: null }] })
        case 'UpdateClusterLayout':
          expect(sent).toEqual({ roles: [{ id: 'f'.repeat(64), zone: 'dc1', capacity: expect.any(Number), tags: [] }] })
          return answer(200, {})
        case 'ApplyClusterLayout':
          expect(sent).toEqual({ version: 1 })
          state.layoutVersion = 1
          return answer(200, {})
        case 'GetKeyInfo':
          return state.keys.has(url.searchParams.get('id')!)
            ? answer(200, { accessKeyId: url.searchParams.get('id') })
            : answer(404, { code: 'NoSuchAccessKey' })
        case 'ImportKey':
          expect(sent).toEqual({ accessKeyId: 'GK0123456789abcdef01234567', secretAccessKey: SECRET, name: 'fileshare' })
          state.keys.add(sent!.accessKeyId as string)
          return answer(200, { accessKeyId: sent!.accessKeyId })
        case 'GetBucketInfo': {
          const id = state.buckets.get(url.searchParams.get('globalAlias')!)
          return id ? answer(200, { id }) : answer(404, { code: 'NoSuchBucket' })
        }
        case 'CreateBucket':
          state.buckets.set(sent!.globalAlias as string, 'b'.repeat(64))
          return answer(200, { id: 'b'.repeat(64) })
        case 'AllowBucketKey':
          state.allowed.push(sent)
          return answer(200, { id: sent!.bucketId })
        default:
          return answer(404, { code: 'NoSuchEndpoint' })
      }
    }
    server = createServer((request, response) => {
      handle(request, response).catch((error: unknown) => {
        failures.push(error)
        response.writeHead(500).end(String(error))
      })
    })
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve))
    return { url: `http://127.0.0.1:${(server!.address() as AddressInfo).port}`, state, calls, failures }
  }

  const runInit = (adminUrl: string) =>
    new Promise<{ code: number | null; output: string }>((resolve) => {
      const child = spawn(process.execPath, [path.join(DEPLOY, 'garage/init.mjs')], {
        env: {
          PATH: process.env.PATH,
          GARAGE_ADMIN_URL: adminUrl,
          GARAGE_ADMIN_TOKEN: TOKEN,
          FILESHARE_S3_BUCKET: 'fileshare-blobs',
          AWS_ACCESS_KEY_ID: 'GK0123456789abcdef01234567',
          AWS_SECRET_ACCESS_KEY: SECRET,
        },
      })
      let output = ''
      child.stdout.on('data', (chunk) => (output += chunk))
      child.stderr.on('data', (chunk) => (output += chunk))
      child.on('close', (code) => resolve({ code, output }))
    })

  it('lays out the node, imports the key, creates the bucket and allows the key on it; a second run adds nothing', async () => {
    const garage = await fakeGarage()
    const first = await runInit(garage.url)
    expect(first.code, first.output).toBe(0)
    expect(garage.calls).toEqual([
      'GetClusterStatus',
      'UpdateClusterLayout',
      'ApplyClusterLayout',
      'GetKeyInfo',
      'ImportKey',
      'GetBucketInfo',
      'CreateBucket',
      'AllowBucketKey',
    ])
    expect(garage.state.allowed).toEqual([
      { bucketId: 'b'.repeat(64), accessKeyId: 'GK0123456789abcdef01234567', permissions: { read: true, write: true, owner: true } },
    ])
    expect(first.output).not.toContain(SECRET)
    expect(first.output).not.toContain(TOKEN)

    garage.calls.length = 0
    const second = await runInit(garage.url)
    expect(second.code, second.output).toBe(0)
    expect(garage.calls).toEqual(['GetClusterStatus', 'GetKeyInfo', 'GetBucketInfo', 'AllowBucketKey'])
    expect(garage.failures).toEqual([])
  })

  it('stops with one line when the admin token is refused', async () => {
    const garage = await fakeGarage()
    const result = await promisify(execFile)(process.execPath, [path.join(DEPLOY, 'garage/init.mjs')], {
      env: {
        PATH: process.env.PATH,
        GARAGE_ADMIN_URL: garage.url,
        GARAGE_ADMIN_TOKEN: 'wrong',
        FILESHARE_S3_BUCKET: 'b',
        AWS_ACCESS_KEY_ID: 'GK1',
        AWS_SECRET_ACCESS_KEY: 's',
      },
    }).then(
      () => ({ code: 0, stderr: '' }),
      (error: { code: number; stderr: string }) => error,
    )
    expect(result.code).toBe(1)
    expect(result.stderr.trim()).toMatch(/^garage-init: GetClusterStatus answered 403/)
  })
})
