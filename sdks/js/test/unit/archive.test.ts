// files.downloadArchive() against the fake fetch: how often it asks again when the server cuts the
// archive. An archive does not resume, so each attempt costs the whole download from its first byte.
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { APIConnectionError } from '../../src/index.js'
import { fakeClient } from '../helpers/fake-fetch.js'

const LENGTH = 10_000
const dir = mkdtempSync(path.join(tmpdir(), 'fileshare-archive-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** A 200 that declares the whole archive, sends `cutAt` bytes of it and drops the connection. */
function cutArchive(cutAt: number): Response {
  let pulls = 0
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (pulls++ === 0) controller.enqueue(new Uint8Array(cutAt))
      else controller.error(new TypeError('terminated', { cause: Object.assign(new Error('socket closed'), { code: 'ECONNRESET' }) }))
    },
  })
  return new Response(body, {
    status: 200,
    headers: {
      'content-type': 'application/zip',
      'content-length': String(LENGTH),
      'content-disposition': 'attachment; filename="files.zip"',
    },
  })
}

describe('downloadArchive retries', () => {
  it('never gives the retry budget back, even when each cut attempt gets a little further than the last', async () => {
    let attempts = 0
    // Each attempt is cut a few bytes later than the one before (a corrupt stored file, socket
    // chunking moving the cut): the budget must still run out after maxRetries more attempts.
    // The 20th attempt would succeed, so a budget that is given back ends in a success.
    const { client, requests } = fakeClient([
      () =>
        ++attempts >= 20
          ? new Response(new Uint8Array(LENGTH), { status: 200, headers: { 'content-length': String(LENGTH) } })
          : cutArchive(1000 + attempts * 100),
    ])
    const target = path.join(dir, 'cut.zip')
    await expect(client.files.downloadArchive([1, 2], target)).rejects.toBeInstanceOf(APIConnectionError)
    expect(requests).toHaveLength(client.maxRetries + 1)
    expect(requests.every((request) => request.method === 'POST' && request.url.endsWith('/files/archive'))).toBe(true)
    // The path that did not get the whole archive is removed.
    expect(existsSync(target)).toBe(false)
  })

  it('asks again after a cut, from the first byte, and finishes within the budget', async () => {
    let attempts = 0
    const { client, requests } = fakeClient([
      () =>
        ++attempts > 2
          ? new Response(new Uint8Array(LENGTH).fill(7), { status: 200, headers: { 'content-length': String(LENGTH) } })
          : cutArchive(3000),
    ])
    const target = path.join(dir, 'whole.zip')
    const result = await client.files.downloadArchive([1], target)
    expect(result.size).toBe(LENGTH)
    expect(requests).toHaveLength(3)
  })
})
