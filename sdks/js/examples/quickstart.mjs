// Upload a file, list the account's files, download it back, delete it.
//
//   FILESHARE_BASE_URL=https://files.example.com/api/v1 FILESHARE_API_KEY=fsk_... node examples/quickstart.mjs [PATH]
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Fileshare } from '@fileshare/sdk'

const folder = mkdtempSync(path.join(tmpdir(), 'fileshare-quickstart-'))
let source = process.argv[2]
if (!source) {
  source = path.join(folder, 'hello.txt')
  writeFileSync(source, 'Hello from the Fileshare JavaScript SDK\n')
}

const fileshare = new Fileshare() // FILESHARE_BASE_URL and FILESHARE_API_KEY

const file = await fileshare.files.upload(source, {
  onProgress: (sent, total) => process.stdout.write(`\rsent ${sent} of ${total} bytes`),
})
console.log(`\nuploaded #${file.file_id} ${file.filename} (${file.size} bytes) at ${file.uploaded_at.toISOString()}`)
console.log(`public link: ${file.public_link}`)

for await (const each of fileshare.files.iterate({ limit: 100 })) {
  console.log(`  #${String(each.file_id).padEnd(6)} ${String(each.size).padStart(12)} ${each.filename}`)
}

const result = await fileshare.download(file, path.join(folder, `copy-of-${file.filename}`))
console.log(`downloaded ${result.size} bytes, SHA-256 ${result.sha256}`)

const { stats, limits, plan } = await fileshare.stats()
console.log(`${stats.total_files} files, ${stats.uploads_today}/${limits.daily_uploads} uploads today, plan ${plan}`)
await fileshare.files.delete(file.file_id)
console.log(`deleted #${file.file_id}`)
