// Issue 30 against the real server: RateLimit-Remaining of a successful call through
// withResponse(), httpAgent honoured by JSON calls, streamed uploads and downloads, the logger.
import http from 'node:http'
import type { Duplex } from 'node:stream'
import { readFileSync, writeFileSync } from 'node:fs'
import { afterAll, describe, expect, it } from 'vitest'
import { NotFoundError } from '../../src/index.js'
import { client, randomBytes, server, sha256Hex, tempDir } from '../helpers/env.js'

const tmp = tempDir()
afterAll(() => tmp.remove())

/** An http.Agent that counts the connections it opens. */
class CountingAgent extends http.Agent {
  connections = 0
  override createConnection(...args: Parameters<http.Agent['createConnection']>): Duplex {
    this.connections++
    return super.createConnection(...args) as Duplex
  }
}

describe('the raw answer of a successful call', () => {
  it('shows RateLimit-Remaining and the request id', async () => {
    const { data, response } = await client('pro').files.list({ limit: 1 }).withResponse()
    expect(data.pagination.limit).toBe(1)
    expect(response.status).toBe(200)
    expect(response.headers.get('ratelimit-remaining')).toMatch(/^\d+$/)
    expect(response.headers.get('x-request-id')).toBeTruthy()
  })

  it('an error carries the headers and the parsed body', async () => {
    const error = (await client('pro')
      .files.get(987654321)
      .catch((e: unknown) => e)) as NotFoundError
    expect(error).toBeInstanceOf(NotFoundError)
    expect(error.headers?.get('x-request-id')).toBe(error.requestId)
    expect(error.body).toMatchObject({ error: { code: 'not_found' } })
    expect(error.message).toContain(`(request id ${error.requestId})`)
  })
})

describe('httpAgent', () => {
  it('carries every request: JSON calls, a streamed upload from a path, a download', async () => {
    const agent = new CountingAgent({ keepAlive: false })
    const fs = client('pro', { httpAgent: agent })
    const data = randomBytes(300_000, 40)
    writeFileSync(tmp.file('agent.bin'), data)
    const before = agent.connections
    await fs.stats()
    expect(agent.connections).toBeGreaterThan(before)
    const file = await fs.files.upload(tmp.file('agent.bin'), { resumable: false })
    const uploaded = agent.connections
    expect(file.sha256).toBe(sha256Hex(data))
    const result = await fs.download(file, tmp.file('agent-copy.bin'))
    expect(result.sha256).toBe(sha256Hex(data))
    expect(agent.connections).toBeGreaterThan(uploaded)
    expect(sha256Hex(readFileSync(tmp.file('agent-copy.bin')))).toBe(sha256Hex(data))
    await fs.files.delete(file.file_id)
  })
})

describe('the logger', () => {
  it('logs each request at debug, never the key', async () => {
    const lines: string[] = []
    const logger = { debug: (m: string) => lines.push(m), info: (m: string) => lines.push(m) }
    const fs = client('pro', { logger, logLevel: 'debug' })
    await fs.files.upload(new TextEncoder().encode('logged'), { filename: 'log.txt' })
    expect(lines.some((l) => l.startsWith(`fileshare: POST ${server().base_url}/files/upload -> 201`))).toBe(true)
    expect(lines.join('\n')).not.toContain(server().keys.pro)
  })
})
