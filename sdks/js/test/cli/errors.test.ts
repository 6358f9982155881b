// Exit codes, one per error class, as the built `fshare` reports them: on stderr for people,
// as {"error":{…}} on stdout with --json. 400 and 500 come from a small stand-in server (the real
// one gives neither to a well-formed request); everything else from the launcher's server.
import { createServer as createHttpServer, type Server } from 'node:http'
import { createServer as createTcpServer } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fshare, outputs } from '../helpers/cli.js'
import { server } from '../helpers/env.js'

let standIn: Server
let standInUrl: string
let closedPort: number

beforeAll(async () => {
  // /s400/api/v1/... answers 400, /s500/api/v1/... answers 500, like the API would.
  standIn = createHttpServer((req, res) => {
    const status = Number(/^\/s(\d{3})\//.exec(req.url ?? '')?.[1] ?? 404)
    const code = status === 400 ? 'invalid_request' : status === 500 ? 'internal_error' : 'not_found'
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'x-request-id': 'req-stand-in' })
    res.end(JSON.stringify({ success: false, error: { code, message: `stand-in ${status}` } }))
  })
  await new Promise<void>((resolve) => standIn.listen(0, '127.0.0.1', resolve))
  standInUrl = `http://127.0.0.1:${(standIn.address() as { port: number }).port}`
  // A port nothing listens on.
  const probe = createTcpServer()
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
  closedPort = (probe.address() as { port: number }).port
  await new Promise((resolve) => probe.close(resolve))
})

afterAll(async () => {
  await new Promise((resolve) => standIn?.close(resolve))
})

const BAD_KEY = 'fsk_' + 'A'.repeat(43)

describe('exit codes', () => {
  it.each([
    ['AuthenticationError', 3, ['ls'], { env: { FILESHARE_API_KEY: BAD_KEY } }, { status: 401, code: 'unauthorized' }],
    ['PermissionDeniedError', 4, ['stats'], { account: 'free' }, { status: 403, code: 'plan_not_supported' }],
    ['NotFoundError', 6, ['info', '987654321'], {}, { status: 404, code: 'not_found' }],
  ] as const)('%s → %i (from the server)', async (type, exitCode, args, options, fields) => {
    const [human, json] = await Promise.all([fshare([...args], options), fshare([...args, '--json'], options)])
    expect(human.code).toBe(exitCode)
    expect(human.stdout).toBe('')
    expect(human.stderr).toMatch(new RegExp(`^fshare: ${type}: ${fields.status} ${fields.code}: .+ \\(request id [0-9a-f-]{36}\\)\\n$`))
    expect(json.code).toBe(exitCode)
    expect(JSON.parse(json.stdout)).toEqual({
      error: {
        type,
        message: expect.any(String),
        exit_code: exitCode,
        status: fields.status,
        code: fields.code,
        request_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        retry_after: null,
      },
    })
  })

  it('BadRequestError → 7 and ServerError → 9 (a stand-in server answering 400 and 500)', async () => {
    const [bad, broken] = await Promise.all([
      fshare(['ls', '--json', '--retries', '0'], { env: { FILESHARE_BASE_URL: `${standInUrl}/s400/api/v1` } }),
      fshare(['stats', '--retries', '0'], { env: { FILESHARE_BASE_URL: `${standInUrl}/s500/api/v1` } }),
    ])
    expect(bad.code).toBe(7)
    expect(JSON.parse(bad.stdout).error).toMatchObject({
      type: 'BadRequestError',
      status: 400,
      code: 'invalid_request',
      request_id: 'req-stand-in',
    })
    expect(broken.code).toBe(9)
    expect(broken.stderr).toBe('fshare: ServerError: 500 internal_error: stand-in 500 (request id req-stand-in)\n')
  })

  it('APIConnectionError → 10 when nothing answers at the base URL', async () => {
    const run = await fshare(['ls', '--json', '--retries', '0'], { env: { FILESHARE_BASE_URL: `http://127.0.0.1:${closedPort}/api/v1` } })
    expect(run.code).toBe(10)
    expect(JSON.parse(run.stdout).error).toMatchObject({ type: 'APIConnectionError', exit_code: 10, status: null })
    expect(run.stderr).toMatch(/^fshare: APIConnectionError: connection failed/)
  })

  it('ConfigurationError → 12 without a base URL or key, or with a base URL that is not http(s)', async () => {
    const [noUrl, noKey, badUrl, emptyKey] = await Promise.all([
      fshare(['ls'], { env: { FILESHARE_BASE_URL: undefined } }),
      fshare(['stats', '--json'], { env: { FILESHARE_API_KEY: undefined } }),
      fshare(['ls', '--base-url', 'ftp://files.example.com/api/v1']),
      fshare(['upload', 'x'], { env: { FILESHARE_API_KEY: '' } }),
    ])
    for (const run of [noUrl, noKey, badUrl, emptyKey]) expect(run.code).toBe(12)
    expect(noUrl.stderr).toContain('no base URL: pass --base-url URL')
    expect(JSON.parse(noKey.stdout).error).toMatchObject({
      type: 'ConfigurationError',
      message: expect.stringContaining('FILESHARE_API_KEY'),
    })
    expect(badUrl.stderr).toContain('must be an http(s) URL')
  })

  it('flags win over the environment', async () => {
    const run = await fshare(['stats', '--json', '--api-key', server().keys.pro, '--base-url', server().base_url], {
      env: { FILESHARE_API_KEY: BAD_KEY, FILESHARE_BASE_URL: `http://127.0.0.1:${closedPort}/api/v1` },
    })
    expect(run.code).toBe(0)
    expect(JSON.parse(run.stdout)).toMatchObject({ plan: 'pro' })
  })

  it('no key in any output', () => {
    expect(outputs.length).toBeGreaterThan(10)
    for (const key of [...Object.values(server().keys), BAD_KEY]) for (const output of outputs) expect(output).not.toContain(key)
  })
})
