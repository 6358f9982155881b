import { createHash, randomBytes, randomInt } from 'node:crypto'
import http from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import { newKnownFile, type Account } from './accounts.js'
import { contentRange, randomName } from './content.js'
import { CUT_BY_CLIENT, newExchange, routeOf, type Exchange } from './exchanges.js'
import type { Fetch } from './load.js'
import type { Tally } from './tally.js'

/*
 * One resumable (tus) upload as a careful client makes it: create, then several PATCHes; some
 * chunks are cut off by the client part-way (the connection dropped), after which it asks HEAD how
 * far the upload got and resumes there. 409 and 423 are the documented answers to a resume that
 * meets the cut request still writing, and a 503 or no answer is retried after a pause, as
 * tus-js-client does; the upload is given up (and deleted) only after `giveUpAfterMs`.
 */

export interface ResumableSettings {
  minBytes: number
  maxBytes: number
  /** The share of chunks that the client cuts off part-way. */
  cutShare: number
  giveUpAfterMs: number
}

const TUS = { 'tus-resumable': '1.0.0' }

export async function resumableUpload(run: {
  api: string
  account: Account
  fetch: Fetch
  tally: Tally
  settings: ResumableSettings
  record?: (exchange: Exchange) => void
}): Promise<number | undefined> {
  const { api, account, fetch, tally, settings } = run
  const auth = { authorization: `Bearer ${account.apiKey}`, ...TUS }
  const size = randomInt(settings.minBytes, settings.maxBytes + 1)
  const seed = randomBytes(16)
  const sha256 = createHash('sha256')
    .update(contentRange(seed, 0, size - 1))
    .digest('hex')
  const filename = randomName()
  const giveUpAt = Date.now() + settings.giveUpAfterMs

  let created: Response
  try {
    created = await fetch(`${api}/uploads`, {
      method: 'POST',
      headers: { ...auth, 'upload-length': String(size), 'upload-metadata': `filename ${Buffer.from(filename).toString('base64')}` },
    })
  } catch (error) {
    account.uncertainUploads++
    throw error
  }
  await created.arrayBuffer().catch(() => undefined)
  if (created.status === 502 || created.status === 504) account.uncertainUploads++
  if (created.status !== 201) {
    if (created.status < 500) tally.problem(`resumable upload: creation answered HTTP ${created.status}`)
    return created.status
  }
  account.uploads++
  const url = new URL(created.headers.get('location')!, api).href

  /** HEAD until it answers: the upload's offset, or undefined once the upload is given up. */
  async function currentOffset(): Promise<number | undefined> {
    while (Date.now() < giveUpAt) {
      const response = await fetch(url, { method: 'HEAD', headers: auth }).catch(() => undefined)
      if (response?.status === 200) return Number(response.headers.get('upload-offset'))
      if (response && response.status < 500 && response.status !== 423) {
        tally.problem(`resumable upload ${routeOf(url)}: HEAD answered HTTP ${response.status}`)
        return undefined
      }
      await sleep(1000)
    }
    return undefined
  }

  let offset = 0
  let fileId: number | undefined
  let lastStatus: number | undefined
  while (fileId === undefined && Date.now() < giveUpAt) {
    const end = Math.min(
      size,
      offset + randomInt(Math.max(256 * 1024, Math.floor(size / 6)), Math.max(256 * 1024 + 1, Math.floor(size / 2))),
    )
    const chunk = contentRange(seed, offset, end - 1)
    if (chunk.length > 1024 && Math.random() < settings.cutShare) {
      await cutChunk(url, auth, offset, chunk, run.record)
      const resumed = await currentOffset()
      if (resumed === undefined) break
      offset = resumed
      continue
    }
    let response: Response | undefined
    try {
      response = await fetch(url, {
        method: 'PATCH',
        headers: { ...auth, 'upload-offset': String(offset), 'content-type': 'application/offset+octet-stream' },
        body: chunk,
      })
      await response.arrayBuffer()
    } catch {
      response = undefined
    }
    lastStatus = response?.status
    if (response?.status === 204) {
      offset = Number(response.headers.get('upload-offset'))
      const id = response.headers.get('fileshare-file-id')
      if (id) fileId = Number(id)
      continue
    }
    if (response && response.status < 500 && response.status !== 409 && response.status !== 423) {
      tally.problem(`resumable upload ${routeOf(url)}: PATCH at ${offset} answered HTTP ${response.status}`)
      break
    }
    // 409 (the cut request kept more than we knew), 423 (it still writes), 5xx or no answer: ask again.
    if (response?.status !== 409) await sleep(1000)
    const resumed = await currentOffset()
    if (resumed === undefined) break
    offset = resumed
  }

  if (fileId === undefined) {
    // Given up: delete it, which gives the daily slot back.
    const deleted = await fetch(url, { method: 'DELETE', headers: auth }).catch(() => undefined)
    await deleted?.arrayBuffer().catch(() => undefined)
    if (deleted?.status === 204) account.uploads--
    tally.problem(`resumable upload ${routeOf(url)}: given up at ${offset} of ${size} bytes (last answer ${lastStatus ?? 'none'})`)
    return lastStatus
  }

  // The file object, for its link: GET /uploads/{id}, retried like the chunks.
  while (Date.now() < giveUpAt + 60_000) {
    const response = await fetch(url, { headers: auth }).catch(() => undefined)
    const body = (await response?.json().catch(() => undefined)) as
      { upload?: { file?: { file_id: number; size: number; sha256: string; filename: string; public_link: string } } } | undefined
    const file = body?.upload?.file
    if (response?.status === 200 && file) {
      if (file.file_id !== fileId || file.size !== size || file.sha256 !== sha256 || file.filename !== filename) {
        tally.problem(`resumable upload ${routeOf(url)}: file ${JSON.stringify(file)} does not match size ${size}, sha256 ${sha256}`)
      }
      account.files.set(fileId, newKnownFile({ fileId, seed, size, sha256, filename }, file.public_link))
      return 204
    }
    if (response && response.status < 500) {
      tally.problem(`resumable upload ${routeOf(url)}: GET after completion answered HTTP ${response.status}`)
      break
    }
    await sleep(1000)
  }
  // Completed, but its link never came: the final listing will show it as a file the clients do not know.
  account.uncertainUploads++
  return 204
}

/**
 * A PATCH whose connection the client drops part-way through the chunk (over node:http, which can
 * write part of a body and then cut). Its answer, if one comes before the cut, is recorded.
 */
function cutChunk(
  url: string,
  headers: Record<string, string>,
  offset: number,
  chunk: Buffer,
  record?: (exchange: Exchange) => void,
): Promise<void> {
  const exchange = newExchange('PATCH', url)
  const sent = Math.max(1, Math.floor(chunk.length * Math.random()))
  return new Promise((resolve) => {
    const request = http.request(url, {
      method: 'PATCH',
      agent: false,
      headers: {
        ...headers,
        'upload-offset': String(offset),
        'content-type': 'application/offset+octet-stream',
        'content-length': String(chunk.length),
      },
    })
    const done = (error: string | undefined) => {
      if (exchange.endedAt !== 0) return
      exchange.endedAt = Date.now()
      exchange.error = error
      record?.(exchange)
      resolve()
    }
    request.on('response', (response) => {
      exchange.headersAt = Date.now()
      exchange.status = response.statusCode
      exchange.retryAfter = (response.headers['retry-after'] as string | undefined) ?? null
      response.resume()
      response.on('end', () => done(undefined))
      response.on('error', () => done(CUT_BY_CLIENT))
    })
    request.on('error', () => done(CUT_BY_CLIENT))
    request.write(chunk.subarray(0, sent), () => {
      // Let the bytes reach the server, then drop the connection.
      setTimeout(
        () => {
          request.destroy()
          done(CUT_BY_CLIENT)
        },
        randomInt(50, 400),
      )
    })
  })
}
