// The first step of every download: POST to the link, which checks its password, counts one
// download and answers 303 See Other to a grant URL (`<link>/<grant>`). The grant serves the file
// for an hour, with Range, without counting again: resuming goes back to it, never to the POST.
import { FileshareError, errorFromResponse } from './errors.js'
import type { Exchange, Http, SendInit } from './http.js'
import { answered, withRetries } from './retry.js'
import { isNode } from './runtime.js'

export interface Grant {
  /** Where the file is, for an hour. */
  url: string
  /** UTC `YYYY-MM-DD HH:MM:SS`, when the server said. */
  expiresAt: string | undefined
  /** Outside Node, fetch followed the 303: the grant's answer from byte 0, not read yet. */
  exchange?: Exchange | undefined
}

/** A grant URL (`…/download/<token>/<grant>`), as opposed to a link (`…/download/<token>`). */
export function isGrantUrl(url: string): boolean {
  return /\/download\/[^/]+\/[^/]+\/?$/.test(new URL(url).pathname)
}

/**
 * POSTs to a link (`{"password": …}` as JSON when given, else no body) and answers its grant.
 *
 * In Node, fetch is told not to follow redirects, so the 303 itself comes back and the grant URL
 * is read from its JSON (`download_url`) or its `Location`. Browsers hide a redirect that is not
 * followed (an opaque answer without headers or body), so there fetch follows the 303 with a GET
 * and the grant URL is the answer's `url`; that answer is the file, handed on to be read.
 *
 * Retried only when the server answered 429 or 503 (nothing was counted): a connection that
 * failed or timed out may have failed after the server counted the download. A 429 that asks for
 * more than a minute (ten wrong passwords: 15 minutes) is thrown at once.
 */
export function requestGrant(http: Http, link: string, password: string | undefined, signal: AbortSignal | undefined): Promise<Grant> {
  const headers: Record<string, string> = { accept: 'application/json' }
  const init: SendInit = { method: 'POST', url: link, auth: false, headers, signal, redirect: isNode ? 'manual' : 'follow' }
  if (password !== undefined) {
    headers['content-type'] = 'application/json'
    init.body = JSON.stringify({ password })
  }
  return withRetries(
    http.options.retry,
    signal,
    async () => {
      const exchange = await http.send(init)
      const { response } = exchange
      if (response.redirected && (response.status === 200 || response.status === 206)) {
        return { url: response.url, expiresAt: undefined, exchange }
      }
      const text = await http.readText(exchange)
      const { status, headers: answer } = response
      if (status !== 303 && (status < 200 || status > 299)) throw errorFromResponse(status, answer, text)
      let body: { download_url?: unknown; expires_at?: unknown } | undefined
      try {
        body = JSON.parse(text) as typeof body
      } catch {
        // The Location header says it as well.
      }
      const url = typeof body?.download_url === 'string' ? body.download_url : answer.get('location')
      if (!url) {
        throw new FileshareError(`${status}: the link granted no download URL`, {
          status,
          requestId: answer.get('x-request-id') ?? undefined,
        })
      }
      return { url: new URL(url, link).href, expiresAt: typeof body?.expires_at === 'string' ? body.expires_at : undefined }
    },
    answered,
  )
}
