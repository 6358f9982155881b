// Ask someone without an account for files: an upload request, and what the account's requests received.
//
//   FILESHARE_BASE_URL=https://files.example.com/api/v1 FILESHARE_API_KEY=fsk_... node examples/upload-requests.mjs
//
// Makes an upload request (at most 10 files of 100 MiB each, open for 7 days, each file kept 30
// days) and prints its URL for the guest; then lists the account's requests with their counts and
// the files each received (`client.uploadRequests`; the key needs `requests:manage`). Closes the
// request it made, since this is a demonstration.
import { Fileshare, InsufficientScopeError } from '@fileshare/sdk'

const DAY = 86_400
const fileshare = new Fileshare() // FILESHARE_BASE_URL and FILESHARE_API_KEY

let request
try {
  request = await fileshare.uploadRequests.create({
    label: 'Documents for your application',
    message: 'Please upload your CV and your certificates (PDF).\nThank you!',
    expires_in: 7 * DAY,
    max_files: 10,
    max_file_size: 100 * 1024 * 1024,
    file_expires_in: 30 * DAY,
  })
} catch (error) {
  if (!(error instanceof InsufficientScopeError)) throw error
  console.log(`the server refused: the key needs ${error.requiredScope}`)
  process.exit(1)
}
console.log(`send this link to the guest: ${request.url}`)
console.log(`  open until ${request.expiry.toISOString().slice(0, 16).replace('T', ' ')} UTC, ${request.files_left} files at most`)

for (const each of (await fileshare.uploadRequests.list()).slice(0, 10)) {
  console.log(
    `#${each.request_id} ${JSON.stringify(each.label)}: ${each.status}, ${each.files_received} files, ${each.bytes_received} bytes`,
  )
  let count = 0
  for await (const file of fileshare.uploadRequests.iterateFiles(each.request_id, { limit: 50 })) {
    if (count++ === 5) {
      console.log('    …')
      break
    }
    console.log(`    ${file.filename} (${file.size} bytes, ${file.upload_date})`)
  }
}

const closed = await fileshare.uploadRequests.close(request.request_id) // the link takes no more files
console.log(`#${closed.request_id} is now ${closed.status}`)
