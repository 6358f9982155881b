// A large upload through resumable uploads (tus), in 8 MiB chunks, with a progress bar.
// A dropped connection is resumed where the server stands, within maxRetries failures in a row.
// The upload's URL is kept in PATH.upload-url while it runs: if the process dies (Ctrl-C, a crash),
// running the example again continues that upload instead of starting over.
//
//   FILESHARE_BASE_URL=... FILESHARE_API_KEY=... node examples/resumable-upload.mjs [PATH]
import { existsSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Fileshare } from '@fileshare/sdk'

let source = process.argv[2]
if (!source) {
  source = path.join(mkdtempSync(path.join(tmpdir(), 'fileshare-resumable-')), 'twenty-mib.bin')
  writeFileSync(source, '')
  truncateSync(source, 20 * 1024 * 1024)
}

/**
 * @param {number} sent
 * @param {number | undefined} total
 */
function bar(sent, total) {
  if (total)
    process.stdout.write(
      `\r[${'#'.repeat(Math.floor((40 * sent) / total)).padEnd(40)}] ${String(Math.floor((100 * sent) / total)).padStart(3)}%`,
    )
}

const fileshare = new Fileshare({ maxRetries: 5, chunkSize: 8 * 1024 * 1024 })
if (!(await fileshare.resumableUploads()).available) {
  console.error('this server does not offer resumable uploads')
  process.exit(1)
}
const state = `${source}.upload-url`
const file = await fileshare.files.upload(source, {
  resumable: true,
  onProgress: bar,
  uploadUrl: existsSync(state) ? readFileSync(state, 'utf8') : undefined, // continue the upload a crash left
  onUploadCreated: (url) => writeFileSync(state, url),
})
rmSync(state)
console.log(`\nstored #${file.file_id} (${file.size} bytes), SHA-256 ${file.sha256} (checked against the bytes sent)`)
await fileshare.files.delete(file.file_id)
