import { createHash, randomBytes, randomInt } from 'node:crypto'
import { newKnownFile, type Account, type KnownFile } from './accounts.js'
import { contentRange, randomName, randomSize } from './content.js'
import { SETTINGS } from './settings.js'
import type { Exchange } from './exchanges.js'
import { resumableUpload, type ResumableSettings } from './resumable-upload.js'
import type { Operation, Tally } from './tally.js'

/*
 * The load: clients that each, until the deadline, pick an account and one operation on it, check
 * the answer against what they know, and count it.
 */

function pick<T>(items: T[]): T | undefined {
  return items.length === 0 ? undefined : items[randomInt(items.length)]
}

function liveFiles(account: Account): KnownFile[] {
  return [...account.files.values()].filter((file) => !file.deleting)
}

function chooseOperation(account: Account, resumable: boolean): Operation {
  const full = account.files.size >= SETTINGS.maxFilesPerAccount
  const roll = Math.random()
  if (resumable && roll < 0.03) return full ? 'delete' : 'resumable_upload'
  if (roll < 0.22) return full ? 'delete' : 'upload'
  if (roll < 0.52) return 'download_range'
  if (roll < 0.58) return 'download_full'
  if (roll < 0.72) return 'list'
  if (roll < 0.84) return 'get'
  if (roll < 0.95) return 'delete'
  return 'stats'
}

/** How a client sends its requests: plain fetch, or one that records every exchange (the chaos soak). */
export type Fetch = (url: string, init?: RequestInit) => Promise<Response>

export interface ClientOptions {
  fetch?: Fetch
  /** Resumable (tus) uploads in the mix, with their settings; off in the embedded soak. */
  resumable?: ResumableSettings
  /** Where exchanges made without `fetch` are recorded (a resumable upload's cut chunks). */
  record?: (exchange: Exchange) => void
}

export function makeClient(base: string, accounts: Account[], deadline: number, tally: Tally, options: ClientOptions = {}) {
  const api = `${base}/api/v1`
  const fetch = options.fetch ?? globalThis.fetch
  /** An answer that says nothing about whether the server acted: none at all, or the proxy's 502/504 (an instance died under it). */
  const unclear = (status: number | undefined) => status === undefined || status === 502 || status === 504
  const auth = (account: Account) => ({ authorization: `Bearer ${account.apiKey}` })

  /**
   * A GET of a file's link. One from byte 0 that the server answers with `expected` counts a download
   * there (the count is taken before the first byte goes out, so a body cut off later still counts);
   * one with no clear answer may or may not have counted.
   */
  async function countedFetch(file: KnownFile, url: string, fromStart: boolean, init: RequestInit, expected: number): Promise<Response> {
    let response: Response
    try {
      response = await fetch(url, init)
    } catch (error) {
      if (fromStart) file.uncertainDownloads++
      throw error
    }
    if (fromStart && response.status === expected) file.countedDownloads++
    else if (fromStart && response.status >= 500) file.uncertainDownloads++
    return response
  }

  const operations: Record<Operation, (account: Account) => Promise<number | undefined>> = {
    async upload(account) {
      const size = randomSize()
      const seed = randomBytes(16)
      const content = contentRange(seed, 0, size - 1)
      const filename = randomName()
      const sha256 = createHash('sha256').update(content).digest('hex')
      const form = new FormData()
      form.append('file', new Blob([content]), filename)
      let response: Response
      try {
        response = await fetch(`${api}/files/upload`, { method: 'POST', headers: auth(account), body: form })
      } catch (error) {
        account.uncertainUploads++
        throw error
      }
      if (unclear(response.status)) account.uncertainUploads++
      const body = (await response.json().catch(() => ({}))) as Record<string, unknown>
      if (response.status !== 201) {
        if (response.status < 500) tally.problem(`upload: HTTP ${response.status} ${JSON.stringify(body)}`)
        return response.status
      }
      if (body.size !== size || body.sha256 !== sha256 || body.filename !== filename) {
        tally.problem(`upload: answer ${JSON.stringify(body)} does not match size ${size}, sha256 ${sha256}, name ${filename}`)
      }
      const fileId = body.file_id as number
      account.uploads++
      account.files.set(fileId, newKnownFile({ fileId, seed, size, sha256, filename }, body.public_link as string))
      return response.status
    },

    async download_range(account) {
      const file = pick(liveFiles(account))
      if (!file) return undefined
      if (file.size === 0) return operations.download_full(account)
      let start: number
      let end: number
      let header: string
      const shape = randomInt(10)
      if (shape < 6) {
        start = randomInt(file.size)
        end = Math.min(file.size - 1, start + randomInt(256 * 1024))
        header = `bytes=${start}-${end}`
      } else if (shape < 8) {
        start = randomInt(file.size)
        end = file.size - 1
        header = `bytes=${start}-`
      } else {
        const suffix = randomInt(1, file.size + 1)
        start = file.size - suffix
        end = file.size - 1
        header = `bytes=-${suffix}`
      }
      const response = await countedFetch(file, `${base}${file.downloadPath}`, start === 0, { headers: { range: header } }, 206)
      const bytes = Buffer.from(await response.arrayBuffer())
      if (response.status === 404 && file.deleting) return response.status
      if (response.status !== 206) {
        if (response.status < 500) tally.problem(`range ${header} of file ${file.fileId} (${file.size} bytes): HTTP ${response.status}`)
        return response.status
      }
      const contentRangeHeader = response.headers.get('content-range')
      if (contentRangeHeader !== `bytes ${start}-${end}/${file.size}`) {
        tally.problem(`range ${header} of file ${file.fileId}: Content-Range ${contentRangeHeader}`)
      } else if (!bytes.equals(contentRange(file.seed, start, end))) {
        tally.problem(`range ${header} of file ${file.fileId}: wrong bytes`)
      }
      return response.status
    },

    async download_full(account) {
      const file = pick(liveFiles(account))
      if (!file) return undefined
      const response = await countedFetch(file, `${base}${file.downloadPath}`, true, {}, 200)
      const bytes = Buffer.from(await response.arrayBuffer())
      if (response.status === 404 && file.deleting) return response.status
      if (response.status !== 200) {
        if (response.status < 500) tally.problem(`download of file ${file.fileId}: HTTP ${response.status}`)
        return response.status
      }
      if (createHash('sha256').update(bytes).digest('hex') !== file.sha256) tally.problem(`download of file ${file.fileId}: wrong checksum`)
      return response.status
    },

    async list(account) {
      const limit = randomInt(1, 101)
      const page = randomInt(1, Math.max(1, Math.ceil(account.files.size / limit)) + 1)
      const response = await fetch(`${api}/files?page=${page}&limit=${limit}`, { headers: auth(account) })
      const body = (await response.json().catch(() => ({}))) as { files?: Array<{ file_id: number; size: number; sha256: string }> }
      if (response.status !== 200) {
        if (response.status < 500) tally.problem(`list: HTTP ${response.status}`)
        return response.status
      }
      for (const listed of body.files ?? []) {
        const known = account.files.get(listed.file_id)
        // A file still uploading on another client is not known yet; one we know must match.
        if (known && (known.size !== listed.size || known.sha256 !== listed.sha256)) tally.problem(`list: file ${listed.file_id} differs`)
      }
      return response.status
    },

    async get(account) {
      const file = pick(liveFiles(account))
      if (!file) return undefined
      const response = await fetch(`${api}/files/${file.fileId}`, { headers: auth(account) })
      const body = (await response.json().catch(() => ({}))) as { file?: { size: number; sha256: string; filename: string } }
      if (response.status === 404 && file.deleting) return response.status
      if (response.status !== 200) {
        if (response.status < 500) tally.problem(`get of file ${file.fileId}: HTTP ${response.status}`)
        return response.status
      }
      if (body.file?.size !== file.size || body.file.sha256 !== file.sha256 || body.file.filename !== file.filename) {
        tally.problem(`get of file ${file.fileId}: ${JSON.stringify(body.file)} differs`)
      }
      return response.status
    },

    async delete(account) {
      const file = pick(liveFiles(account))
      if (!file) return undefined
      file.deleting = true
      const response = await fetch(`${api}/files/${file.fileId}`, { method: 'DELETE', headers: auth(account) })
      await response.arrayBuffer()
      if (response.status !== 200) {
        if (response.status < 500) tally.problem(`delete of file ${file.fileId}: HTTP ${response.status}`)
        return response.status
      }
      account.files.delete(file.fileId)
      const after = await fetch(`${base}${file.downloadPath}`, { method: 'HEAD' })
      // A 5xx is judged with every other (a dependency may be away); any other answer but 404 is wrong.
      if (after.status !== 404 && after.status < 500)
        tally.problem(`file ${file.fileId}: its link answers ${after.status} after the delete`)
      return response.status
    },

    async resumable_upload(account) {
      if (!options.resumable) return undefined
      return resumableUpload({ api, account, fetch, tally, settings: options.resumable, record: options.record })
    },

    async stats(account) {
      const response = await fetch(`${api}/stats`, { headers: auth(account) })
      await response.arrayBuffer()
      if (response.status !== 200 && response.status < 500) tally.problem(`stats: HTTP ${response.status}`)
      return response.status
    },
  }

  return async function client() {
    while (Date.now() < deadline) {
      const account = accounts[randomInt(accounts.length)]!
      const operation = chooseOperation(account, options.resumable !== undefined)
      const started = performance.now()
      try {
        const status = await operations[operation](account)
        if (status === undefined) continue
        tally.noteStatus(operation, status)
      } catch (error) {
        tally.noteFailure(operation, error as Error)
        continue
      }
      tally.noteLatency(operation, performance.now() - started)
    }
  }
}
