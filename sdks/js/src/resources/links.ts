// client.links: a file's links (its default link, the contract's public_link, and any others),
// each with its own token, expiry, download limit and password.
import { FileshareError } from '../errors.js'
import { call, type APIPromise } from '../api-promise.js'
import type { Http } from '../http.js'
import { toLink, type RawLink } from '../records.js'
import type { IdempotencyOptions, Link, LinkOptions, RequestOptions } from '../types.js'
import { idempotencyHeader, jsonBody, resourceId } from './params.js'

export class Links {
  /** @internal */
  constructor(private readonly http: Http) {}

  /**
   * A new link to a file, with the policy given (none: a link like the public one). Every attempt
   * carries the call's `Idempotency-Key` (`idempotencyKey`, else a new UUID), so a retry after a
   * lost answer gets the link made the first time, never a second one. A file has at most 100
   * links that are not revoked: the next one is a `LimitExceededError` (`link_limit_exceeded`).
   */
  create(fileId: number | string, options: LinkOptions & IdempotencyOptions & RequestOptions = {}): APIPromise<Link> {
    return call(this.http, options, async (http) => {
      const path = `/files/${resourceId(fileId, 'file')}/links`
      const headers = idempotencyHeader(options.idempotencyKey)
      const data = await http.json<{ link: RawLink }>('POST', path, { body: jsonBody(options), headers, signal: options.signal })
      return toLink(data.link)
    })
  }

  /** A file's links: the default link first, then the newest first; revoked ones stay listed for 30 days. */
  list(fileId: number | string, options: RequestOptions = {}): APIPromise<Link[]> {
    return call(this.http, options, async (http) => {
      const data = await http.json<{ links: RawLink[] }>('GET', `/files/${resourceId(fileId, 'file')}/links`, { signal: options.signal })
      if (!Array.isArray(data?.links)) throw new FileshareError('the answer holds no link list')
      return data.links.map(toLink)
    })
  }

  /** One link. */
  get(linkId: number | string, options: RequestOptions = {}): APIPromise<Link> {
    return call(this.http, options, async (http) => {
      const data = await http.json<{ link: RawLink }>('GET', `/links/${resourceId(linkId, 'link')}`, { signal: options.signal })
      return toLink(data.link)
    })
  }

  /**
   * Changes a link's policy: the fields given are set, `null` clears one (`label`, `expires_at`,
   * `max_downloads`, `password`), the others are kept.
   */
  update(linkId: number | string, changes: LinkOptions & RequestOptions = {}): APIPromise<Link> {
    return call(this.http, changes, async (http) => {
      const path = `/links/${resourceId(linkId, 'link')}`
      const data = await http.json<{ link: RawLink }>('PATCH', path, { body: jsonBody(changes), signal: changes.signal })
      return toLink(data.link)
    })
  }

  /**
   * Revokes a link: its URL answers 404 at once (it stays listed as `revoked` for 30 days). The
   * default link cannot be deleted (a `BadRequestError`, 409 `default_link_required`): rotate it.
   */
  delete(linkId: number | string, options: RequestOptions = {}): APIPromise<void> {
    return call(this.http, options, async (http) => {
      await http.json<unknown>('DELETE', `/links/${resourceId(linkId, 'link')}`, { signal: options.signal })
    })
  }

  /**
   * Gives a link a new token: the old URL answers 404 at once, the counts and the policy stay.
   * Rotating the default link changes the file's `public_link`. Retried only when the server
   * answered 429 or 503.
   */
  rotate(linkId: number | string, options: RequestOptions = {}): APIPromise<Link> {
    return call(this.http, options, async (http) => {
      const path = `/links/${resourceId(linkId, 'link')}/rotate`
      const data = await http.json<{ link: RawLink }>('POST', path, { signal: options.signal, once: true })
      return toLink(data.link)
    })
  }
}
