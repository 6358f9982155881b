// Download a public link; run it again after an interruption and it continues where it stopped
// (Range + If-Range), then checks the whole file against the ETag (its SHA-256).
//
//   node examples/download-resume.mjs PUBLIC_LINK DESTINATION
//   (without arguments: uploads a file, half-downloads it, and resumes)
import { randomBytes } from 'node:crypto'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Fileshare, IntegrityError } from '@fileshare/sdk'

const fileshare = new Fileshare()
const [givenLink, givenDestination] = process.argv.slice(2)
let link
let destination
let uploaded
if (givenLink && givenDestination) {
  link = givenLink
  destination = givenDestination
} else {
  const data = randomBytes(3 * 1024 * 1024)
  uploaded = await fileshare.files.upload(data, { filename: 'resume-me.bin' })
  link = uploaded.public_link
  destination = path.join(mkdtempSync(path.join(tmpdir(), 'fileshare-resume-')), 'resume-me.bin')
  writeFileSync(destination, data.subarray(0, data.length / 2)) // as if an earlier download had stopped half-way
}

let result
try {
  result = await fileshare.download(link, destination, { onProgress: () => {} })
} catch (error) {
  if (!(error instanceof IntegrityError)) throw error
  // The partial file was not this file's beginning: start over.
  result = await fileshare.download(link, destination, { resume: false })
}
console.log(`${destination}: ${result.size} bytes (kept ${result.resumedFrom}), SHA-256 ${result.sha256}`)
if (uploaded) await fileshare.files.delete(uploaded.file_id)
