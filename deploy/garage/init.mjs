// One-shot set-up of Garage for deploy/compose.scale-out.yaml, through Garage's admin API (v2):
// a layout for its single node, the key Fileshare uses (imported, so that its ID and secret are
// the ones in deploy/.env), and the bucket, which that key may read, write and own. It runs in the
// Fileshare image (Node.js, no other tool) at every start of the stack and adds only what is
// missing. Secrets are never printed.
/* global fetch, AbortSignal */
import { setTimeout as sleep } from 'node:timers/promises'

const admin = process.env.GARAGE_ADMIN_URL ?? 'http://garage:3903'
const token = required('GARAGE_ADMIN_TOKEN')
const bucket = required('FILESHARE_S3_BUCKET')
const keyId = required('AWS_ACCESS_KEY_ID')
const secret = required('AWS_SECRET_ACCESS_KEY')
// A single node's capacity only weighs it against others; there are none.
const CAPACITY = 1e12

function required(name) {
  const value = process.env[name]?.trim()
  if (!value) fail(`${name} is not set`)
  return value
}

function fail(message) {
  console.error(`garage-init: ${message}`)
  process.exit(1)
}

/** One admin API call; undefined for a 404 when `missingOk`. */
async function call(endpoint, { body, missingOk = false } = {}) {
  const response = await fetch(`${admin}/v2/${endpoint}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  })
  const text = await response.text()
  if (response.status === 404 && missingOk) return undefined
  if (!response.ok) fail(`${endpoint} answered ${response.status}: ${text.slice(0, 300)}`)
  return text ? JSON.parse(text) : {}
}

// Garage is healthy (compose waits for that) but its admin API may take a moment more.
let status
for (let attempt = 1; !status; attempt++) {
  status = await call('GetClusterStatus').catch((error) => {
    if (attempt === 30) fail(`no answer from ${admin}: ${error.message}`)
  })
  if (!status) await sleep(2000)
}

if (status.layoutVersion === 0) {
  if (status.nodes.length !== 1) fail(`expected one Garage node, found ${status.nodes.length}: lay out a cluster by hand`)
  const [node] = status.nodes
  await call('UpdateClusterLayout', { body: { roles: [{ id: node.id, zone: 'dc1', capacity: CAPACITY, tags: [] }] } })
  await call('ApplyClusterLayout', { body: { version: 1 } })
  console.log(`garage-init: layout version 1 applied (node ${node.id.slice(0, 16)})`)
}

if (!(await call(`GetKeyInfo?id=${encodeURIComponent(keyId)}`, { missingOk: true }))) {
  await call('ImportKey', { body: { accessKeyId: keyId, secretAccessKey: secret, name: 'fileshare' } })
  console.log(`garage-init: key ${keyId} imported`)
}

let info = await call(`GetBucketInfo?globalAlias=${encodeURIComponent(bucket)}`, { missingOk: true })
if (!info) {
  info = await call('CreateBucket', { body: { globalAlias: bucket } })
  console.log(`garage-init: bucket ${bucket} created`)
}
await call('AllowBucketKey', {
  body: { bucketId: info.id, accessKeyId: keyId, permissions: { read: true, write: true, owner: true } },
})
console.log(`garage-init: bucket ${bucket} ready for key ${keyId}`)
