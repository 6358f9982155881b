// What this key may do, and what the account's audit log recorded.
//
//   FILESHARE_BASE_URL=... FILESHARE_API_KEY=... node examples/audit-log.mjs
//
// Shows the key (`key()`: its scopes, allowed addresses, plan), then uploads, renames and deletes a
// small file when the key may, and lists the events that recorded it, newest first.
import { Fileshare, InsufficientScopeError, IpNotAllowedError } from '@fileshare/sdk'

const fileshare = new Fileshare()

let key
try {
  key = await fileshare.key()
} catch (error) {
  if (!(error instanceof IpNotAllowedError)) throw error
  console.log(`this key may not be used from this address: ${error.message}`)
  process.exit(1)
}
console.log(`key ${key.prefix}… "${key.name}" on the ${key.plan} plan`)
console.log(`scopes: ${key.scopes.join(' ')}`)
console.log(`usable from: ${key.allowed_ips.length === 0 ? 'anywhere' : key.allowed_ips.join(', ')}`)
console.log(`expires: ${key.expiry ? key.expiry.toISOString() : 'never'}; last used: ${key.last_used?.toISOString() ?? 'never'}`)

/** @param {string} scope */
const can = (scope) => key.scopes.includes(scope)
/** @type {number | undefined} */
let fileId
if (can('files:write') && can('files:delete')) {
  const file = await fileshare.files.upload(new TextEncoder().encode('audited\n'), { filename: 'audit-example.txt' })
  await fileshare.files.update(file.file_id, { filename: 'audit-example-renamed.txt' })
  await fileshare.files.delete(file.file_id)
  fileId = file.file_id
  console.log(`uploaded, renamed and deleted #${fileId}`)
} else {
  console.log('this key may not upload and delete files: nothing to record')
}

try {
  const { events } = await fileshare.auditEvents.list({ action: 'file.*', limit: 10 })
  for (const event of events) {
    const actor = `${event.actor.type} ${event.actor.name ?? event.actor.id ?? ''}`.trim()
    const target = event.target ? `${event.target.type} #${event.target.id}` : '-'
    console.log(`${event.at}  ${event.action.padEnd(14)} ${target.padEnd(12)} by ${actor} from ${event.ip ?? '?'}`)
  }
  if (fileId !== undefined) {
    const mine = events.filter((event) => event.target?.type === 'file' && event.target.id === fileId).map((event) => event.action)
    console.log(`#${fileId}: ${mine.join(' after ')}`)
  }
  // Every event of the last 24 hours, across pages.
  let count = 0
  for await (const _event of fileshare.auditEvents.iterate({ since: new Date(Date.now() - 86_400_000), limit: 50 })) count++
  console.log(`${count} events in the last 24 hours`)
} catch (error) {
  if (!(error instanceof InsufficientScopeError)) throw error
  console.log(`reading the audit log needs the ${error.requiredScope} scope, which this key does not hold`)
}
