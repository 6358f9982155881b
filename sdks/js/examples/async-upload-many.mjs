// Upload several files at once (Promise.all), then list them.
//
//   FILESHARE_BASE_URL=... FILESHARE_API_KEY=... node examples/async-upload-many.mjs [PATH ...]
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Fileshare } from '@fileshare/sdk'

let targets = process.argv.slice(2)
if (targets.length === 0) {
  const folder = mkdtempSync(path.join(tmpdir(), 'fileshare-many-'))
  targets = [0, 1, 2].map((number) => {
    const target = path.join(folder, `note-${number}.txt`)
    writeFileSync(target, `note ${number}\n`)
    return target
  })
}

const fileshare = new Fileshare({ maxRetries: 3 })
const files = await Promise.all(targets.map((target) => fileshare.files.upload(target)))
for (const file of files) console.log(`#${file.file_id} ${file.filename}: ${file.public_link}`)

const page = await fileshare.files.list({ page: 1, limit: 10 })
console.log(`${page.pagination.total} files in the account`)

const ours = new Set(files.map((file) => file.file_id))
const found = []
for await (const file of fileshare.files.iterate({ limit: 50 })) {
  if (ours.has(file.file_id)) found.push(file.file_id)
}
// Delete after the iteration, so that the pages do not shift under it.
await Promise.all(found.map((id) => fileshare.files.delete(id)))
console.log(`deleted ${found.length} of ${files.length} uploaded files`)
