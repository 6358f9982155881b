import { expect } from 'vitest'
import type { TSchema } from 'typebox'
import { Value } from 'typebox/value'
import { ERROR_REGISTRY, type ErrorCode } from '../../src/errors.js'

/**
 * Statuses other than 400 that `invalid_request` may carry: the transport-level refusals of
 * docs/api.md (408, 413, 415, 431), plus 414, which Fastify's router gives a path segment longer
 * than 2048 characters (maxParamLength in src/app.ts).
 */
export const TRANSPORT_STATUSES = [408, 413, 414, 415, 431] as const

export interface SeenResponse {
  status: number
  headers: Record<string, string | string[] | undefined>
  /** The raw body text. */
  body: string
}

function header(response: SeenResponse, name: string): string | undefined {
  const value = response.headers[name]
  return Array.isArray(value) ? value.join(', ') : value
}

/**
 * The response is one the API documents: never a 5xx; an error carries exactly
 * `{"success": false, "error": {"code", "message"}}` with a registry code whose status is the
 * response's; a success body (when `success` is given) validates against its documented schema.
 * `head` is for HEAD requests, which carry no body.
 */
export function expectDocumented(
  response: SeenResponse,
  what: string,
  options: { success?: TSchema; head?: boolean } = {},
): { code?: ErrorCode; json?: Record<string, unknown> } {
  expect(response.status, `${what}: never a 5xx`).toBeLessThan(500)
  expect(response.status, what).toBeGreaterThanOrEqual(200)
  if (options.head || response.status === 304) {
    expect(response.body, `${what}: no body`).toBe('')
    return {}
  }
  if (response.status >= 300 && response.status < 400) {
    // A redirect (the root path to the dashboard): it must say where to.
    expect(header(response, 'location'), `${what}: redirect target`).toBeTruthy()
    return {}
  }
  expect(header(response, 'content-type'), `${what}: content type`).toMatch(/^application\/json/)
  let json: Record<string, unknown>
  try {
    json = JSON.parse(response.body) as Record<string, unknown>
  } catch {
    throw new Error(`${what}: the body is not JSON: ${JSON.stringify(response.body.slice(0, 200))}`)
  }
  // The OpenAPI document is the one JSON body without the API's envelope (docs/api.md, OpenAPI).
  if (response.status === 200 && typeof json.openapi === 'string') return { json }
  if (response.status < 400) {
    expect(json.success, what).toBe(true)
    if (options.success) {
      const errors = [...Value.Errors(options.success, json)].map((error) => `${error.instancePath} ${error.message}`)
      expect(errors, `${what}: documented success shape`).toEqual([])
    }
    return { json }
  }
  expect(Object.keys(json).sort(), `${what}: error body keys`).toEqual(['error', 'success'])
  expect(json.success, what).toBe(false)
  const error = json.error as Record<string, unknown>
  expect(Object.keys(error).sort(), `${what}: error object keys`).toEqual(['code', 'message'])
  expect(typeof error.message, what).toBe('string')
  expect((error.message as string).length, `${what}: message`).toBeGreaterThan(0)
  const code = error.code as ErrorCode
  expect(Object.keys(ERROR_REGISTRY), `${what}: code from the registry`).toContain(code)
  const documentedStatus = ERROR_REGISTRY[code].status
  if (code === 'invalid_request' && response.status !== 400) {
    expect(TRANSPORT_STATUSES, `${what}: invalid_request status`).toContain(response.status)
  } else {
    expect(response.status, `${what}: status of code ${code}`).toBe(documentedStatus)
  }
  if (code === 'unauthorized') expect(header(response, 'www-authenticate'), what).toMatch(/^Bearer\b/)
  if (code === 'rate_limited') expect(header(response, 'retry-after'), what).toMatch(/^[0-9]+$/)
  return { code, json }
}

/** The same for a light-my-request response (app.inject). */
export function fromInject(response: { statusCode: number; headers: Record<string, unknown>; body: string }): SeenResponse {
  return { status: response.statusCode, headers: response.headers as SeenResponse['headers'], body: response.body }
}
