// Upload a file at most once, even when the script runs again after a crash or a lost answer.
//
//   FILESHARE_BASE_URL=... FILESHARE_API_KEY=... node examples/upload-once.mjs [PATH]
//
// Every upload carries an idempotency key: the SDK makes one per call, so its own retries never
// store a file twice. A key of your own, derived from what you upload, extends that across calls
// and processes for 24 hours: a second run gets the first run's file back (the answer is
// replayed; nothing is stored or counted again), or continues its resumable upload where it stands.
import { createHash } from 'node:crypto'
import { appendFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { BadRequestError, Fileshare } from '@fileshare/sdk'

/**
 * The same file (name and bytes) gives the same key: printable ASCII, at most 255 characters.
 * @param {string} file
 */
function keyFor(file) {
  const digest = createHash('sha256')
    .update(`${path.basename(file)}\0`)
    .update(readFileSync(file))
  return `upload-once-${digest.digest('hex')}`
}

let source = process.argv[2]
if (!source) {
  source = path.join(mkdtempSync(path.join(tmpdir(), 'fileshare-upload-once-')), 'nightly-report.txt')
  writeFileSync(source, `report of ${new Date().toISOString()}\n`)
}
const idempotencyKey = keyFor(source)

const fileshare = new Fileshare() // FILESHARE_BASE_URL and FILESHARE_API_KEY
const file = await fileshare.files.upload(source, { idempotencyKey })
console.log(`#${file.file_id} ${file.filename} (${file.size} bytes), key ${idempotencyKey}`)

// What a second run (or a retry after a crash) does: the same key, the same file back.
const again = await fileshare.files.upload(source, { idempotencyKey })
console.log(`uploaded again with the same key: #${again.file_id}, ${again.file_id === file.file_id ? 'the same file' : 'ANOTHER file?'}`)

if (!process.argv[2]) {
  appendFileSync(source, 'changed\n')
  try {
    await fileshare.files.upload(source, { idempotencyKey })
  } catch (error) {
    if (!(error instanceof BadRequestError)) throw error
    console.log(`other bytes with the same key: ${error.status} ${error.code}`)
  }
}
