import { afterEach, beforeAll, expect } from 'vitest'
import { undocumented } from './openapi-responses.js'

/**
 * Setup file of the vitest projects (vitest.config.ts): in the contract suite, every answer a test
 * fetches from a test app is checked against that app's OpenAPI document, and a test fails when
 * one is undocumented (a status the operation does not list, or a JSON body off its schema).
 */
const original = globalThis.fetch
const violations: string[] = []
const pending: Array<Promise<void>> = []

function requestOf(input: Parameters<typeof fetch>[0], init?: RequestInit): { method: string; url: string } {
  if (input instanceof Request) return { method: init?.method ?? input.method, url: input.url }
  return { method: (init?.method ?? 'GET').toUpperCase(), url: input instanceof URL ? input.href : String(input) }
}

beforeAll(() => {
  const testPath = expect.getState().testPath ?? ''
  if (!/[/\\]test[/\\]contract[/\\]/.test(testPath)) return
  globalThis.fetch = async (input, init) => {
    const response = await original(input, init)
    const { method, url } = requestOf(input, init)
    // Only a JSON body is read (from a clone); a download's bytes stay the test's own.
    const json = (response.headers.get('content-type') ?? '').startsWith('application/json')
    pending.push(
      undocumented(method, url, json ? response.clone() : response, original).then(
        (problems) => void violations.push(...problems),
        (error: Error) => void violations.push(`${method} ${url}: could not check the answer: ${error.message}`),
      ),
    )
    return response
  }
})

afterEach(async () => {
  await Promise.all(pending.splice(0))
  const found = violations.splice(0)
  expect(found, 'answers the OpenAPI document does not describe').toEqual([])
})
