/**
 * s3rver (test/helpers/scale-out-env.ts startS3rver) in a process of its own, for the scan section:
 * its work (storing the upload, sending the object to the scanner) must not run on the bench's
 * event loop or count as the server's. Prints one JSON line `{"endpoint": "...", "bucket": "...",
 * "directory": "..."}` when it listens; closes and removes its folder on SIGTERM or when its
 * standard input closes. Argument: the bucket's name.
 */
import { startS3rver } from '../test/helpers/scale-out-env.js'

const s3 = await startS3rver(process.argv[2] ?? 'fileshare-bench')
let closing = false
const close = () => {
  if (closing) return
  closing = true
  void s3.close().finally(() => process.exit(0))
}
process.on('SIGTERM', close)
process.stdin.on('data', () => {})
process.stdin.on('end', close)
console.log(JSON.stringify({ endpoint: s3.endpoint, bucket: s3.bucket, directory: s3.directory }))
