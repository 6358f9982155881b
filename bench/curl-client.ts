/**
 * curl as the bench's transfer client: a C client that reads the upload from a file in the page
 * cache and drops a download into /dev/null, so that the figures are the server's, not the
 * client's (a body generated in Node was once slower than the server it measured). Its own
 * ceiling is measured in the same run against bench/sink-server.ts and nginx.
 */
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'

const run = promisify(execFile)
/** curl's own figures, after the body (if any) on stdout. */
const WRITE_OUT = '\n%{http_code} %{time_total} %{size_upload} %{size_download}'

export interface CurlResult {
  /** curl's time_total: from the start of the connection to the end of the response. */
  ms: number
  status: number
  /** Bytes curl sent (request body, multipart framing included) and received (response body). */
  uploaded: number
  downloaded: number
  /** The response body, for an upload (downloads go to /dev/null). */
  body: string
}

/** How an upload's body is sent: as the single file part `file` of a form (`-F`), or the raw bytes (`-T`, streamed). */
export type UploadBody = 'multipart' | 'raw'

/** The arguments of one curl call; exported for the bench's tests. */
export function curlArgs(
  request: { method: 'POST'; file: string; body: UploadBody } | { method: 'GET' },
  url: string,
  headers: Record<string, string> = {},
): string[] {
  // -sS: no progress meter, errors still said; no Expect: 100-continue, which some servers would make it wait a second for.
  const args = ['-sS', '--fail-with-body', '-H', 'Expect:']
  for (const [name, value] of Object.entries(headers)) args.push('-H', `${name}: ${value}`)
  if (request.method === 'POST') {
    // -F streams the file as it sends it; --data-binary @file would read all of it into memory first.
    if (request.body === 'multipart') args.push('-F', `file=@${request.file};type=application/octet-stream`)
    else args.push('-T', request.file, '-X', 'POST', '-H', 'Content-Type: application/octet-stream')
  } else {
    args.push('-o', '/dev/null')
  }
  args.push('-w', WRITE_OUT, url)
  return args
}

/** Parses what curl printed: the body, then the write-out line. */
export function parseCurlOutput(stdout: string): CurlResult {
  const at = stdout.lastIndexOf('\n')
  const [status, seconds, uploaded, downloaded] = stdout
    .slice(at + 1)
    .trim()
    .split(' ')
    .map(Number)
  if ([status, seconds, uploaded, downloaded].some((value) => value === undefined || Number.isNaN(value))) {
    throw new Error(`unexpected curl output: ${stdout.slice(-200)}`)
  }
  return { ms: seconds! * 1000, status: status!, uploaded: uploaded!, downloaded: downloaded!, body: stdout.slice(0, at) }
}

async function curl(args: string[]): Promise<CurlResult> {
  try {
    const { stdout } = await run('curl', args, { maxBuffer: 16 * 1024 * 1024 })
    return parseCurlOutput(stdout)
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string }
    throw new Error(`curl ${args.at(-1)} failed: ${(stderr ?? '').trim()} ${(stdout ?? '').slice(0, 300)}`, { cause: error })
  }
}

/** Uploads `file` to `url` with curl. */
export function curlUpload(url: string, file: string, body: UploadBody, headers: Record<string, string> = {}): Promise<CurlResult> {
  return curl(curlArgs({ method: 'POST', file, body }, url, headers))
}

/** Downloads `url` into /dev/null with curl. */
export function curlDownload(url: string): Promise<CurlResult> {
  return curl(curlArgs({ method: 'GET' }, url))
}
