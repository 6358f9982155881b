// Telling the SDK's errors apart.
//
//   FILESHARE_BASE_URL=... FILESHARE_API_KEY=... node examples/error-handling.mjs
import {
  APIConnectionError,
  AuthenticationError,
  Fileshare,
  FileshareError,
  LimitExceededError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
} from '@fileshare/sdk'

const fileshare = new Fileshare({ maxRetries: 2 })

try {
  await fileshare.files.get(987654321)
} catch (error) {
  if (!(error instanceof NotFoundError)) throw error
  console.log(`not found: ${error.code} (request id ${error.requestId})`)
}

let uploaded
try {
  uploaded = await fileshare.files.upload(new TextEncoder().encode('hello'), { filename: 'hello.txt' })
} catch (error) {
  if (error instanceof LimitExceededError) {
    if (error.code === 'daily_upload_limit_exceeded') console.log('no uploads left today; they come back at 00:00 UTC')
    else console.log(`too large for this plan: ${error.message}`)
  } else if (error instanceof RateLimitError) {
    console.log(`slow down: retry in ${error.retryAfter} s (${error.rateLimit.remaining} left of ${error.rateLimit.limit})`)
  } else if (error instanceof AuthenticationError) {
    console.log('the key is wrong, revoked or expired')
  } else if (error instanceof PermissionDeniedError) {
    console.log('this plan has no API access')
  } else if (error instanceof APIConnectionError) {
    console.log(`no answer from the server: ${error.message}`)
  } else if (error instanceof FileshareError) {
    console.log(`${error.name}: ${error.status} ${error.code}: ${error.message}`)
  } else {
    throw error
  }
}

if (uploaded) {
  console.log(`uploaded #${uploaded.file_id} ${uploaded.filename}`)
  await fileshare.files.delete(uploaded.file_id)
  console.log(`deleted #${uploaded.file_id}`)
}
