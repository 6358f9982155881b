// What a guest does on an upload request's page, with plain fetch (no SDK, no key): a password
// grant (POST /r/<token>/grant) and a one-request tus upload with `Authorization: UploadRequest <token>`.
import { server } from './env.js'

/** The token of an upload request's url: its last path segment. */
export function tokenOf(url: string): string {
  return new URL(url).pathname.split('/').filter(Boolean).pop()!
}

/** `POST <server>/r/<token>/grant` with the password: the raw answer. */
export function grantFor(url: string, password: string): Promise<Response> {
  return fetch(`${server().server_url}/r/${tokenOf(url)}/grant`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ password }),
  })
}

/**
 * A tus creation-with-upload of `data` as `filename` through the request of `url` (and its grant,
 * when given), complete in one request. The raw answer: 201 with `Fileshare-File-Id` when stored.
 */
export function guestUpload(url: string, data: Uint8Array, filename: string, grant?: string): Promise<Response> {
  const headers: Record<string, string> = {
    'tus-resumable': '1.0.0',
    authorization: `UploadRequest ${tokenOf(url)}`,
    'upload-length': String(data.length),
    'upload-metadata': `filename ${Buffer.from(filename).toString('base64')}`,
    'content-type': 'application/offset+octet-stream',
  }
  if (grant !== undefined) headers['fileshare-upload-grant'] = grant
  return fetch(`${server().base_url}/uploads`, { method: 'POST', headers, body: Buffer.from(data) })
}

/** The error code of a JSON error answer, or undefined. */
export async function errorCode(response: Response): Promise<string | undefined> {
  const text = await response.text()
  try {
    return (JSON.parse(text) as { error?: { code?: string } }).error?.code
  } catch {
    return undefined
  }
}
