import { createHash, randomBytes, randomInt } from 'node:crypto'
import type { Account, KnownFile } from './accounts.js'
import { contentRange, randomName, randomSize } from './content.js'
import { SETTINGS } from './settings.js'
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

function chooseOperation(account: Account): Operation {
  const full = account.files.size >= SETTINGS.maxFilesPerAccount
  const roll = Math.random()
  if (roll < 0.22) return full ? 'delete' : 'upload'
  if (roll < 0.52) return 'download_range'
  if (roll < 0.58) return 'download_full'
  if (roll < 0.72) return 'list'
  if (roll < 0.84) return 'get'
  if (roll < 0.95) return 'delete'
  return 'stats'
}

export function makeClient(base: string, accounts: Account[], deadline: number, tally: Tally) {
  const api = `${base}/api/v1`
  const auth = (account: Account) => ({ authorization: `Bearer ${account.apiKey}` })

  const operations: Record<Operation, (account: Account) => Promise<number | undefined>> = {
    async upload(account) {
      const size = randomSize()
      const seed = randomBytes(16)
      const content = contentRange(seed, 0, size - 1)
      const filename = randomName()
      const sha256 = createHash('sha256').update(content).digest('hex')
      const form = new FormData()
      form.append('file', new Blob([content]), filename)
      const response = await fetch(`${api}/files/upload`, { method: 'POST', headers: auth(account), body: form })
      const body = (await response.json()) as Record<string, unknown>
      if (response.status !== 201) {
        if (response.status < 500) tally.problem(`upload: HTTP ${response.status} ${JSON.stringify(body)}`)
        return response.status
      }
      if (body.size !== size || body.sha256 !== sha256 || body.filename !== filename) {
        tally.problem(`upload: answer ${JSON.stringify(body)} does not match size ${size}, sha256 ${sha256}, name ${filename}`)
      }
      const fileId = body.file_id as number
      account.uploads++
      account.files.set(fileId, {
        fileId,
        seed,
        size,
        sha256,
        filename,
        downloadPath: new URL(body.public_link as string).pathname,
        countedDownloads: 0,
        deleting: false,
      })
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
      const response = await fetch(`${base}${file.downloadPath}`, { headers: { range: header } })
      const bytes = Buffer.from(await response.arrayBuffer())
      if (response.status === 404 && file.deleting) return response.status
      if (response.status !== 206) {
        if (response.status < 500) tally.problem(`range ${header} of file ${file.fileId} (${file.size} bytes): HTTP ${response.status}`)
        return response.status
      }
      if (start === 0) file.countedDownloads++
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
      const response = await fetch(`${base}${file.downloadPath}`)
      const bytes = Buffer.from(await response.arrayBuffer())
      if (response.status === 404 && file.deleting) return response.status
      if (response.status !== 200) {
        if (response.status < 500) tally.problem(`download of file ${file.fileId}: HTTP ${response.status}`)
        return response.status
      }
      file.countedDownloads++
      if (createHash('sha256').update(bytes).digest('hex') !== file.sha256) tally.problem(`download of file ${file.fileId}: wrong checksum`)
      return response.status
    },

    async list(account) {
      const limit = randomInt(1, 101)
      const page = randomInt(1, Math.max(1, Math.ceil(account.files.size / limit)) + 1)
      const response = await fetch(`${api}/files?page=${page}&limit=${limit}`, { headers: auth(account) })
      const body = (await response.json()) as { files?: Array<{ file_id: number; size: number; sha256: string }> }
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
      const body = (await response.json()) as { file?: { size: number; sha256: string; filename: string } }
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
      if (after.status !== 404) tally.problem(`file ${file.fileId}: its link answers ${after.status} after the delete`)
      return response.status
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
      const operation = chooseOperation(account)
      const started = performance.now()
      try {
        const status = await operations[operation](account)
        if (status === undefined) continue
        tally.noteStatus(operation, status)
      } catch (error) {
        tally.problem(`${operation}: ${(error as Error).message} ${String((error as Error).cause ?? '')}`)
        continue
      }
      tally.noteLatency(operation, performance.now() - started)
    }
  }
}
