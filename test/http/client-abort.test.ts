import net from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bearer, startTestApp, type TestApp } from '../helpers/test-app.js'

/**
 * A client that cuts its own upload off part-way (the chaos soak's flaky clients: a quarter of its
 * tus chunks) is not a failure of the service: one line at level info, no stack, and the access log
 * answers 499 (nginx's "client closed request"), not a 500 `internal_error` nobody receives.
 */

interface LogLine {
  level: number
  msg: string
  reqId?: string
  method?: string
  route?: string | null
  status?: number
  error?: string
  aborted?: boolean
  err?: unknown
  stack?: unknown
}

const TUS = { 'tus-resumable': '1.0.0' }
const NOTE = 'the client closed the request before its body ended'

describe('a request its client cuts off', () => {
  let t: TestApp
  const raw: string[] = []
  let apiKey: string

  beforeAll(async () => {
    t = await startTestApp({ FILESHARE_LOG_LEVEL: 'info' }, { logStream: { write: (line: string) => void raw.push(line) } })
    ;({ apiKey } = await t.createAccount('pro'))
  })
  afterAll(async () => {
    await t.close()
  })

  const lines = () => raw.map((line) => JSON.parse(line) as LogLine)

  /** Sends `head` and `body` on a connection of its own, then destroys it once the server has read them. */
  async function sendAndCut(head: string, body: Buffer): Promise<void> {
    const { hostname, port } = new URL(t.url)
    const socket = net.connect(Number(port), hostname)
    socket.on('error', () => {})
    await new Promise<void>((resolve) => socket.once('connect', resolve))
    socket.write(head)
    await new Promise<void>((resolve) => socket.write(body, () => resolve()))
    // The server reads what is in flight before the cut (a fixed pause: nothing else tells it).
    await sleep(300)
    socket.destroy()
  }

  /**
   * Every line about the one request to `method` `route` that arrived after `from` lines, found by
   * the request id of its first line (the note, or the access line), once `whole` holds for them
   * (the note and the access line come out in either order, each when its own event fires).
   */
  async function linesOfRequestAfter(
    from: number,
    method: string,
    route: string,
    whole: (about: LogLine[]) => boolean,
  ): Promise<LogLine[]> {
    let about: LogLine[] = []
    for (let i = 0; i < 250; i++) {
      const all = lines().slice(from)
      const first = all.find((l) => (l.msg === 'request completed' && l.method === method && l.route === route) || l.level >= 30)
      about = first?.reqId ? all.filter((l) => l.reqId === first.reqId) : []
      if (about.length > 0 && whole(about)) return about
      await sleep(20)
    }
    throw new Error(`not all lines about ${method} ${route}: ${raw.slice(from).join('')}`)
  }

  /**
   * Nothing at level warn or above and no stack; an access line says 499 ("client closed request")
   * and names no error code.
   */
  function expectHonest(about: LogLine[]) {
    expect(about.filter((l) => l.level >= 40)).toEqual([])
    expect(about.filter((l) => l.err !== undefined || l.stack !== undefined)).toEqual([])
    for (const access of about.filter((l) => l.msg === 'request completed')) {
      expect(access.status).toBe(499)
      expect(access.error).toBeUndefined()
    }
  }

  it('a tus PATCH cut part-way: one info line without a stack, 499 in the access log, and the bytes before the cut kept', async () => {
    const length = 2 * 1024 * 1024
    const created = await fetch(`${t.api}/uploads`, {
      method: 'POST',
      headers: { ...bearer(apiKey), ...TUS, 'upload-length': String(length), 'upload-metadata': 'filename Y3V0LmJpbg==' },
    })
    expect(created.status).toBe(201)
    const path = new URL(created.headers.get('location')!, t.url).pathname
    const from = raw.length
    const sent = Buffer.alloc(700 * 1024, 7)
    await sendAndCut(
      `PATCH ${path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${apiKey}\r\nTus-Resumable: 1.0.0\r\n` +
        `Upload-Offset: 0\r\nContent-Type: application/offset+octet-stream\r\nContent-Length: ${length}\r\n\r\n`,
      sent,
    )
    const about = await linesOfRequestAfter(
      from,
      'PATCH',
      '/api/v1/uploads/:upload_id',
      (lines) => lines.some((l) => l.msg === 'request completed') && lines.some((l) => l.msg === NOTE),
    )
    expectHonest(about)
    // The access log writes its line when the connection closes: 499, "client closed request".
    expect(about.filter((l) => l.msg === 'request completed').map((l) => l.status)).toEqual([499])
    const notes = about.filter((l) => l.msg === NOTE)
    expect(notes).toHaveLength(1)
    expect(notes[0]!.level).toBe(30)
    // The bytes before the cut stay, as documented: the client resumes from the offset HEAD gives.
    const head = await fetch(new URL(path, t.url), { method: 'HEAD', headers: { ...bearer(apiKey), ...TUS } })
    const offset = Number(head.headers.get('upload-offset'))
    expect(offset).toBeGreaterThan(0)
    expect(offset).toBeLessThanOrEqual(sent.length)
  })

  it('a multipart upload cut part-way: no line at level warn or above, no 500, and nothing stored', async () => {
    const from = raw.length
    const boundary = 'cutboundary'
    const preamble = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="cut.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`
    await sendAndCut(
      `POST /api/v1/files/upload HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${apiKey}\r\n` +
        `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${2 * 1024 * 1024}\r\n\r\n`,
      Buffer.concat([Buffer.from(preamble), Buffer.alloc(500 * 1024, 3)]),
    )
    // The upload fails as a cut body (a file part orphaned for ORPHANED_PART_MS at most): let it.
    await sleep(1_500)
    expectHonest(lines().slice(from))
    expect(await t.storedBlobs()).toEqual([])
  })
})
