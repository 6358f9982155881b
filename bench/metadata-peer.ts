/**
 * The peer of the metadata calls: the Express 5 + better-sqlite3 app a user would write for
 * `GET /api/v1/files/:id` and `GET /api/v1/stats`, doing the same work as Fileshare on the same
 * database file, in a process of its own (bench/run.ts starts it), with Express's defaults and
 * NODE_ENV=production. Per request:
 *
 *   - the Bearer key is hashed (SHA-256) and looked up with its account (not revoked, not expired);
 *   - the account's requests are counted in memory, a window per minute, against its plan's limit
 *     (429 past it), with the same RateLimit-* headers;
 *   - GET /files/:id reads the live row by id and account, GET /stats the account's kept counters
 *     less its expired files not collected yet;
 *   - the answer is the same JSON as Fileshare's (bench/run.ts checks it is before the runs): the
 *     file object is built by the same function (src/services/records.ts).
 *
 * Environment: PEER_PORT, PEER_DATABASE (the SQLite file), PEER_LINK_BASE_URL (for public_link),
 * PEER_PLAN_LIMITS (the plan's limits as GET /stats shows them: the app's configuration).
 */
import { createHash } from 'node:crypto'
import Database from 'better-sqlite3'
import express, { type NextFunction, type Request, type Response } from 'express'
import type { AccountRow, ListedFile } from '../src/db/schema.js'
import { fileRecord } from '../src/services/records.js'

interface PlanLimits {
  max_file_size: number
  daily_uploads: number
  requests_per_minute: number
  requests_per_day: number
  max_storage: number | null
}

const port = Number(process.env.PEER_PORT)
const linkBaseUrl = process.env.PEER_LINK_BASE_URL!
const plan = JSON.parse(process.env.PEER_PLAN_LIMITS!) as PlanLimits
const db = new Database(process.env.PEER_DATABASE!, { fileMustExist: true })
db.pragma('journal_mode = WAL')
db.pragma('busy_timeout = 5000')

const keyQuery = db.prepare<[string, number], AccountRow>(
  `SELECT accounts.* FROM api_keys JOIN accounts ON accounts.id = api_keys.account_id
   WHERE api_keys.key_hash = ? AND api_keys.revoked_at IS NULL AND (api_keys.expires_at IS NULL OR api_keys.expires_at > ?)`,
)
const fileQuery = db.prepare<[number, number, number], ListedFile>(
  'SELECT * FROM files WHERE id = ? AND account_id = ? AND (expires_at IS NULL OR expires_at > ?)',
)
const expiredQuery = db.prepare<[number, number], { files: number; size: number; downloads: number }>(
  `SELECT count(*) AS files, coalesce(sum(size), 0) AS size, coalesce(sum(download_count), 0) AS downloads
   FROM files WHERE account_id = ? AND expires_at <= ?`,
)

const windows = new Map<number, { minute: number; count: number }>()

declare module 'express-serve-static-core' {
  interface Request {
    account: AccountRow
  }
}

function fail(response: Response, status: number, code: string, message: string): void {
  response.status(status).json({ success: false, error: { code, message } })
}

function authenticate(request: Request, response: Response, next: NextFunction): void {
  const key = /^bearer +([^\s]+) *$/i.exec(request.headers.authorization ?? '')?.[1]
  const now = Date.now()
  const account = key ? keyQuery.get(createHash('sha256').update(key).digest('hex'), now) : undefined
  if (!account) return fail(response, 401, 'unauthorized', 'Invalid or missing API key.')
  const limit = account.requests_per_minute ?? plan.requests_per_minute
  const minute = Math.floor(now / 60_000)
  let window = windows.get(account.id)
  if (!window || window.minute !== minute) windows.set(account.id, (window = { minute, count: 0 }))
  window.count++
  response.set({
    'RateLimit-Limit': String(limit),
    'RateLimit-Remaining': String(Math.max(0, limit - window.count)),
    'RateLimit-Reset': String(60 - Math.floor((now % 60_000) / 1000)),
  })
  if (window.count > limit) return fail(response, 429, 'rate_limited', 'Too many requests.')
  request.account = account
  next()
}

const app = express()

app.get('/json', (_request, response) => {
  response.json({ success: true })
})

app.get('/api/v1/files/:id', authenticate, (request, response) => {
  const id = Number(request.params.id)
  const file = Number.isSafeInteger(id) && id > 0 ? fileQuery.get(id, request.account.id, Date.now()) : undefined
  if (!file) return fail(response, 404, 'not_found', `No file with id ${request.params.id}.`)
  response.json({ success: true, file: fileRecord(file, linkBaseUrl) })
})

app.get('/api/v1/stats', authenticate, (request, response) => {
  const { account } = request
  const now = Date.now()
  const expired = account.total_files > 0 ? expiredQuery.get(account.id, now)! : { files: 0, size: 0, downloads: 0 }
  const today = new Date(now).toISOString().slice(0, 10)
  response.json({
    success: true,
    plan: account.plan,
    stats: {
      total_files: account.total_files - expired.files,
      total_size: account.total_size - expired.size,
      total_downloads: account.total_downloads - expired.downloads,
      uploads_today: account.uploads_day >= today ? account.uploads_today : 0,
      storage_reserved: account.storage_reserved,
    },
    limits: {
      max_file_size: account.max_file_size ?? plan.max_file_size,
      daily_uploads: account.daily_uploads ?? plan.daily_uploads,
      requests_per_minute: account.requests_per_minute ?? plan.requests_per_minute,
      requests_per_day: account.requests_per_day ?? plan.requests_per_day,
      // An account's own max_storage: null follows the plan, -1 is unlimited.
      max_storage: account.max_storage === null ? plan.max_storage : account.max_storage === -1 ? null : account.max_storage,
    },
  })
})

app.listen(port, '127.0.0.1')
