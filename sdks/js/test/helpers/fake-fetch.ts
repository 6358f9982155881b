// A fetch that answers from a script, records the requests, and never touches the network.
import { Fileshare, type FileshareOptions } from '../../src/index.js'

export interface Recorded {
  method: string
  url: string
  headers: Headers
  body: Uint8Array | undefined
}

export type Responder = (request: Recorded) => Response | Error | Promise<Response | Error>

export function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(status === 204 ? null : JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', 'x-request-id': 'req-123', ...headers },
  })
}

export function apiError(status: number, code: string, headers: Record<string, string> = {}): Response {
  return json(status, { success: false, error: { code, message: `message for ${code}` } }, headers)
}

export const FILE = {
  file_id: 7,
  filename: 'a.txt',
  size: 5,
  upload_date: '2026-11-22 09:30:00',
  download_count: 0,
  public_link: 'http://fake.test/download/tok',
  content_type: 'text/plain',
  sha256: '2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824', // "hello"
  scan: null, // a server that does not scan
}

/** A link of FILE with a policy. */
export const LINK = {
  link_id: 12,
  file_id: 7,
  url: 'http://fake.test/download/tok2',
  default: false,
  label: 'for the auditors',
  expires_at: '2026-12-01 00:00:00',
  max_downloads: 3,
  download_count: 1,
  password_protected: true,
  status: 'active',
  created_at: '2026-11-27 10:00:00',
}

export function fakeClient(responders: Responder[], options: FileshareOptions = {}) {
  const requests: Recorded[] = []
  const sleeps: number[] = []
  let next = 0
  const fetch = async (input: RequestInfo | URL, init: RequestInit = {}): Promise<Response> => {
    let body: Uint8Array | undefined
    if (init.body instanceof ReadableStream) body = new Uint8Array(await new Response(init.body).arrayBuffer())
    else if (init.body !== undefined && init.body !== null) body = new Uint8Array(await new Response(init.body).arrayBuffer())
    const request: Recorded = { method: init.method ?? 'GET', url: String(input), headers: new Headers(init.headers), body }
    requests.push(request)
    if (init.signal?.aborted) throw init.signal.reason
    const responder = responders[Math.min(next++, responders.length - 1)]!
    const answer = await responder(request)
    if (answer instanceof Error) throw answer
    return answer
  }
  const client = new Fileshare({
    baseUrl: 'http://fake.test/api/v1',
    apiKey: 'fsk_' + 'k'.repeat(43),
    fetch: fetch as typeof globalThis.fetch,
    sleep: async (ms) => void sleeps.push(ms),
    random: () => 1,
    ...options,
  })
  return { client, requests, sleeps }
}

/** What fetch throws when the connection fails (undici: TypeError with a cause). */
export function connectionFailure(): Error {
  return new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) })
}
