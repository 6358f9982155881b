import { randomBytes } from 'node:crypto'

/** A server under measurement and the account that calls it. */
export interface Target {
  url: string
  key: string
}

/** Runs `count` calls of `task` (given their index), `parallel` at a time. */
export async function inParallel(count: number, parallel: number, task: (index: number) => Promise<void>): Promise<void> {
  let next = 0
  await Promise.all(
    Array.from({ length: Math.min(parallel, count) }, async () => {
      while (next < count) await task(next++)
    }),
  )
}

async function expectStatus(response: Response, status: number, what: string): Promise<Response> {
  if (response.status !== status) throw new Error(`${what} answered ${response.status}: ${await response.text()}`)
  return response
}

/** An API call that must answer `status`; its JSON body. */
export async function api<T>(target: Target, method: string, route: string, status = 200, body?: unknown): Promise<T> {
  const response = await fetch(`${target.url}/api/v1${route}`, {
    method,
    headers: { authorization: `Bearer ${target.key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  await expectStatus(response, status, `${method} ${route}`)
  return (await response.json()) as T
}

/** A multipart body holding one file part of `bytes` bytes (a random MiB repeated), framed by hand. */
export function multipartBody(bytes: number): { body: Buffer; contentType: string } {
  const boundary = `sizing${randomBytes(8).toString('hex')}`
  const block = randomBytes(1 << 20)
  const content = Buffer.alloc(bytes)
  for (let at = 0; at < bytes; at += block.length) block.copy(content, at, 0, Math.min(block.length, bytes - at))
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="quarterly-report.pdf"\r\nContent-Type: application/pdf\r\n\r\n`,
  )
  return {
    body: Buffer.concat([head, content, Buffer.from(`\r\n--${boundary}--\r\n`)]),
    contentType: `multipart/form-data; boundary=${boundary}`,
  }
}

export interface UploadedFile {
  file_id: number
  public_link: string
}

export async function upload(target: Target, form: { body: Buffer; contentType: string }): Promise<UploadedFile> {
  const response = await fetch(`${target.url}/api/v1/files/upload`, {
    method: 'POST',
    headers: { authorization: `Bearer ${target.key}`, 'content-type': form.contentType },
    body: form.body,
  })
  await expectStatus(response, 201, 'upload')
  return (await response.json()) as UploadedFile
}

/** Downloads through a public link (a Range of it when given); the bytes received. */
export async function download(link: string, range?: string): Promise<number> {
  const response = await fetch(link, { headers: range ? { range } : {} })
  await expectStatus(response, range ? 206 : 200, `GET ${link}`)
  return (await response.arrayBuffer()).byteLength
}

/** A call answered with any 2xx, its body read and dropped. */
export async function call(target: Target, method: string, route: string, body?: unknown): Promise<void> {
  const response = await fetch(`${target.url}/api/v1${route}`, {
    method,
    headers: { authorization: `Bearer ${target.key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  if (response.status < 200 || response.status > 299)
    throw new Error(`${method} ${route} answered ${response.status}: ${await response.text()}`)
  await response.arrayBuffer()
}
