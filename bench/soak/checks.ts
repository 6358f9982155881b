import { createHash } from 'node:crypto'
import { MiB, mib } from '../bench-plan.js'
import type { Account } from './accounts.js'
import type { Sample } from './resources.js'
import type { Tally } from './tally.js'

/* The checks after the load, and the pass rule. */

interface ListedFile {
  file_id: number
  filename: string
  size: number
  sha256: string
  download_count: number
  public_link: string
}

async function listEverything(api: string, account: Account): Promise<{ files: ListedFile[]; total: number }> {
  const files: ListedFile[] = []
  let total = 0
  for (let page = 1; ; page++) {
    const response = await fetch(`${api}/files?page=${page}&limit=100`, { headers: { authorization: `Bearer ${account.apiKey}` } })
    const body = (await response.json()) as { files: ListedFile[]; pagination: { total: number; pages: number } }
    if (response.status !== 200) throw new Error(`list page ${page}: HTTP ${response.status}`)
    files.push(...body.files)
    total = body.pagination.total
    if (page >= body.pagination.pages) return { files, total }
  }
}

export interface FinalChecks {
  filesVerified: number
  bytesVerified: number
  /** Listed files that are missing, unknown, or do not download in full with their checksum. */
  fileFailures: number
  statsMatch: boolean
  /** Listed files of uploads whose answer was lost (they still download with the listed SHA-256). */
  unacknowledged: number
}

/**
 * After the load: every account's listing, stats and files against what the clients know. Each
 * remaining file is downloaded in full and its checksum compared.
 */
export async function verifyAccounts(base: string, accounts: Account[], sameUtcDay: boolean, tally: Tally): Promise<FinalChecks> {
  const api = `${base}/api/v1`
  let filesVerified = 0
  let bytesVerified = 0
  let fileFailures = 0
  let statsMatch = true
  let unacknowledged = 0
  for (const account of accounts) {
    const { files, total } = await listEverything(api, account)
    const statsResponse = await fetch(`${api}/stats`, { headers: { authorization: `Bearer ${account.apiKey}` } })
    const { stats } = (await statsResponse.json()) as {
      stats: { total_files: number; total_size: number; total_downloads: number; uploads_today: number }
    }
    const recount = {
      total_files: files.length,
      total_size: files.reduce((sum, file) => sum + file.size, 0),
      total_downloads: files.reduce((sum, file) => sum + file.download_count, 0),
    }
    // uploads_today: each upload with no clear answer may or may not have taken its slot.
    const uploadsToday = sameUtcDay ? stats.uploads_today : undefined
    const uploadsTodayMatch =
      uploadsToday === undefined || (uploadsToday >= account.uploads && uploadsToday <= account.uploads + account.uncertainUploads)
    const got = { total_files: stats.total_files, total_size: stats.total_size, total_downloads: stats.total_downloads }
    if (JSON.stringify(got) !== JSON.stringify(recount) || total !== files.length || !uploadsTodayMatch) {
      statsMatch = false
      const expectedUploads =
        account.uncertainUploads === 0 ? `${account.uploads}` : `${account.uploads} to ${account.uploads + account.uncertainUploads}`
      tally.problem(
        `${account.email}: stats ${JSON.stringify({ ...got, uploads_today: uploadsToday })}, recount ${JSON.stringify(recount)}, ` +
          `uploads_today expected ${expectedUploads}, pagination.total ${total}`,
      )
    }
    const listedIds = new Set(files.map((file) => file.file_id))
    for (const known of account.files.values()) {
      // A delete with no clear answer may have happened.
      if (listedIds.has(known.fileId) || known.deleting) continue
      fileFailures++
      tally.problem(`${account.email}: file ${known.fileId} is missing from the listing`)
    }
    let unknownFiles = 0
    for (const listed of files) {
      let known = account.files.get(listed.file_id)
      if (!known) {
        // An upload whose answer was lost may have been stored: as many as there were such uploads.
        if (++unknownFiles > account.uncertainUploads) {
          fileFailures++
          tally.problem(`${account.email}: the listing has file ${listed.file_id}, which the clients do not know`)
          continue
        }
        unacknowledged++
        known = {
          fileId: listed.file_id,
          seed: Buffer.alloc(16),
          size: listed.size,
          sha256: listed.sha256,
          filename: listed.filename,
          downloadPath: new URL(listed.public_link).pathname,
          countedDownloads: listed.download_count,
          uncertainDownloads: 0,
          deleting: false,
        }
      }
      if (listed.download_count < known.countedDownloads || listed.download_count > known.countedDownloads + known.uncertainDownloads) {
        tally.problem(
          `file ${listed.file_id}: download_count ${listed.download_count}, clients counted ${known.countedDownloads}` +
            (known.uncertainDownloads > 0 ? ` (+ up to ${known.uncertainDownloads} without a clear answer)` : ''),
        )
      }
      const response = await fetch(`${base}${known.downloadPath}`)
      const hash = createHash('sha256')
      let size = 0
      for await (const chunk of response.body ?? []) {
        hash.update(chunk as Uint8Array)
        size += (chunk as Uint8Array).byteLength
      }
      tally.noteStatus('download_full', response.status)
      if (response.status !== 200 || size !== known.size || hash.digest('hex') !== known.sha256) {
        fileFailures++
        tally.problem(
          `final download of file ${listed.file_id}: HTTP ${response.status}, ${size} of ${known.size} bytes, or wrong checksum`,
        )
        continue
      }
      filesVerified++
      bytesVerified += size
    }
  }
  return { filesVerified, bytesVerified, fileFailures, statsMatch, unacknowledged }
}

/** Error and fatal lines (pino levels 50 and 60) in the server's log. */
export function countErrorLines(logText: string): number {
  return logText.split('\n').filter((line) => /"level":(50|60)/.test(line)).length
}

/** The error and fatal lines of a log by kind (the error's type and the start of its message), most frequent first. */
export function errorLineKinds(logText: string): Array<{ kind: string; count: number }> {
  const counts = new Map<string, number>()
  for (const line of logText.split('\n')) {
    if (!/"level":(50|60)/.test(line)) continue
    let kind = 'unparsed line'
    try {
      const entry = JSON.parse(line) as { msg?: string; err?: { type?: string; message?: string } }
      kind = entry.err ? `${entry.err.type ?? 'Error'}: ${(entry.err.message ?? '').slice(0, 90)}` : (entry.msg ?? '')
    } catch {
      // counted as unparsed
    }
    counts.set(kind, (counts.get(kind) ?? 0) + 1)
  }
  return [...counts.entries()].map(([kind, count]) => ({ kind, count })).sort((a, b) => b.count - a.count)
}

/** One check of the pass rule: what it says, and whether it held. The soak passes when every one holds. */
export type Verdict = [string, boolean]

export function verdicts(outcome: {
  tally: Tally
  checks: FinalChecks
  startSample: Sample
  endSample: Sample
  errorLines: number
  exitCode: number | null
}): Verdict[] {
  const { tally, checks, startSample, endSample, errorLines, exitCode } = outcome
  // RSS: the V8 heap and the allocator keep some of what the load needed, so "back near the start"
  // allows the larger of 64 MiB or half the start; a leak of buffers or streams grows past that.
  // File descriptors come back exactly, give or take a couple (log file, idle keep-alive sockets).
  const rssLimit = startSample.rssBytes + Math.max(64 * MiB, startSample.rssBytes / 2)
  return [
    [`no 5xx responses (saw ${tally.serverErrors})`, tally.serverErrors === 0],
    [`no other problem (wrong bytes, status, field, count; saw ${tally.problems.length})`, tally.problems.length === 0],
    [
      `every remaining file is listed and downloads in full with its checksum (${checks.filesVerified} files, ${mib(checks.bytesVerified)})`,
      checks.fileFailures === 0,
    ],
    ['stats (total_files, total_size, total_downloads, uploads_today) equal a recount from the listing', checks.statsMatch],
    [`RSS after settling ${mib(endSample.rssBytes)} <= ${mib(rssLimit)} (start + max(64 MiB, start/2))`, endSample.rssBytes <= rssLimit],
    [`open fds after settling ${endSample.fds} <= start ${startSample.fds} + 2`, endSample.fds <= startSample.fds + 2],
    [`no error lines in the server log (saw ${errorLines})`, errorLines === 0],
    [`SIGTERM stops the server with exit code 0 (got ${exitCode})`, exitCode === 0],
  ]
}
