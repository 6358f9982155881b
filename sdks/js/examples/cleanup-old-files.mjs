// Delete every file older than N days (30 by default), oldest first, deleting while iterating.
//
//   FILESHARE_BASE_URL=... FILESHARE_API_KEY=... node examples/cleanup-old-files.mjs [--days N] [--dry-run]
//
// files.iterate({ order: 'asc' }) goes oldest first and asks for each page with the next_before_id
// of the one before (the files newer than the last one seen), so deleting the files it yields
// shifts nothing: no file is skipped. The first file young enough ends the walk: the rest are newer.
import { parseArgs } from 'node:util'
import { Fileshare } from '@fileshare/sdk'

const { values } = parseArgs({ options: { days: { type: 'string', default: '30' }, 'dry-run': { type: 'boolean', default: false } } })
const days = Number(values.days)
const dryRun = values['dry-run'] === true
const cutoff = Date.now() - days * 86_400_000

const fileshare = new Fileshare() // FILESHARE_BASE_URL and FILESHARE_API_KEY
let deleted = 0
let freed = 0
for await (const file of fileshare.files.iterate({ order: 'asc', limit: 100 })) {
  if (file.uploaded_at.getTime() >= cutoff) break // oldest first: every file after it is newer
  if (!dryRun) await fileshare.files.delete(file.file_id)
  deleted++
  freed += file.size
}
const kept = (await fileshare.files.list({ limit: 1 })).pagination.total - (dryRun ? deleted : 0)
console.log(`${dryRun ? 'would delete' : 'deleted'} ${deleted} files older than ${days} days (${freed} bytes); kept ${kept}`)

const { stats, limits } = await fileshare.stats()
const quota = limits.max_storage === null ? 'no quota' : `a quota of ${limits.max_storage} bytes`
console.log(`now ${stats.total_size} bytes used, ${stats.storage_reserved} reserved by uploads in progress, ${quota}`)
