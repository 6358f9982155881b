// Share one file several ways: a link for one person (3 downloads, 7 days, a password), a plain
// link, and a lifetime for the file itself; download through the password; rotate; revoke.
//
//   FILESHARE_BASE_URL=... FILESHARE_API_KEY=... node examples/share-links.mjs [PATH]
import { randomBytes } from 'node:crypto'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { AuthenticationError, Fileshare } from '@fileshare/sdk'

const DAY = 86_400
const folder = mkdtempSync(path.join(tmpdir(), 'fileshare-links-'))
let source = process.argv[2]
if (!source) {
  source = path.join(folder, 'report.txt')
  writeFileSync(source, 'Quarterly report\n'.repeat(1000))
}
const password = randomBytes(12).toString('base64url')

const fileshare = new Fileshare() // FILESHARE_BASE_URL and FILESHARE_API_KEY
const file = await fileshare.files.upload(source, { expires_in: 30 * DAY })
console.log(`uploaded #${file.file_id}, gone at ${file.expiry?.toISOString()}; default link ${file.public_link}`)

let link = await fileshare.links.create(file.file_id, {
  label: 'for the auditors',
  expires_in: 7 * DAY,
  max_downloads: 3,
  password,
})
console.log(`link #${link.link_id} ${link.url}: ${link.downloads_left} downloads, until ${link.expiry?.toISOString()}`)
const plain = await fileshare.links.create(file.file_id, { label: 'team' })

try {
  await fileshare.download(link.url, path.join(folder, 'copy.txt'), { password: 'not the password' })
} catch (error) {
  if (!(error instanceof AuthenticationError)) throw error
  console.log(`wrong password refused (${error.code}); nothing was counted`)
}
const result = await fileshare.download(link, path.join(folder, 'copy.txt'), { password })
link = await fileshare.links.get(link.link_id)
console.log(`downloaded ${result.size} bytes through the link: ${link.download_count} of ${link.max_downloads} used`)

link = await fileshare.links.update(link.link_id, { max_downloads: null }) // lift the limit, keep the rest
const rotated = await fileshare.links.rotate(link.link_id)
console.log(`rotated: ${link.url} is dead, ${rotated.url} works (still ${rotated.download_count} download)`)
await fileshare.links.delete(plain.link_id)

for (const each of await fileshare.links.list(file.file_id)) {
  const kind = each.default ? 'default' : each.label
  console.log(`  #${String(each.link_id).padEnd(5)} ${each.status.padEnd(8)} ${each.download_count} downloads  ${kind}`)
}

await fileshare.files.update(file.file_id, { expires_at: null }) // keep the file after all
await fileshare.files.delete(file.file_id)
