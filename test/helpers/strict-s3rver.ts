import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { ListPartsCommand, S3Client, type Part } from '@aws-sdk/client-s3'
import { S3RVER_CREDENTIALS, startS3rver, type TestS3rver } from './scale-out-env.js'

/** S3's smallest part, except for the last one of an upload. */
export const S3_MIN_PART_SIZE = 5 * 1024 * 1024

export interface StrictS3rver extends TestS3rver {
  /** The S3 error codes of the CompleteMultipartUpload requests this server refused, in order. */
  refusedCompletions: string[]
}

/** One S3 request as the client saw it: command, input and HTTP status. */
/** One S3 request as the client saw it: command, input, HTTP status, and on success headers and output. */
export interface SentCommand {
  name: string
  input: Record<string, unknown>
  status: number | undefined
  output?: Record<string, unknown>
  headers?: Record<string, string>
}

/**
 * A client for a test s3rver, configured as src/storage/open-blob-store.ts configures the store's,
 * that pushes every request it makes onto `sent` when given.
 */
export function s3Client(endpoint: string, sent?: SentCommand[]): S3Client {
  const client = new S3Client({
    region: 'us-east-1',
    endpoint,
    forcePathStyle: true,
    credentials: S3RVER_CREDENTIALS,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  })
  if (!sent) return client
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const request = { name: context.commandName ?? 'unknown', input: args.input as Record<string, unknown> }
      try {
        const result = await next(args)
        const response = result.response as { statusCode?: number; headers?: Record<string, string> }
        const output = result.output as unknown as Record<string, unknown>
        sent.push({ ...request, status: response.statusCode, headers: response.headers, output })
        return result
      } catch (error) {
        sent.push({ ...request, status: (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode })
        throw error
      }
    },
    { step: 'deserialize', priority: 'high', name: 'recordRequests' },
  )
  return client
}

const errorXml = (code: string, message: string) =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message></Error>`

/** The parts a CompleteMultipartUpload body lists, in its order (ETags without their quotes). */
function listedParts(body: string): Array<{ number: number; etag: string }> {
  return [...body.matchAll(/<Part>([\s\S]*?)<\/Part>/g)].map(([, part]) => ({
    number: Number(/<PartNumber>\s*(\d+)\s*<\/PartNumber>/.exec(part!)?.[1]),
    etag: (/<ETag>([\s\S]*?)<\/ETag>/.exec(part!)?.[1] ?? '').replace(/&quot;|&#34;|"/g, ''),
  }))
}

async function readBody(request: http.IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

/**
 * s3rver (startS3rver) behind a proxy that checks CompleteMultipartUpload as S3 does, which s3rver
 * 3.7 does not (node_modules/s3rver/lib/stores/filesystem.js `putObjectMultipart` joins whatever
 * part files it finds): the parts listed must be in ascending order (else InvalidPartOrder), each
 * must be stored with the listed ETag (else InvalidPart), and every part but the last must hold at
 * least 5 MiB (else EntityTooSmall, 400). A store that sends small parts in the middle of an upload
 * then fails here as it would on S3. Every other request passes through untouched (signatures
 * cover the Host header, which is passed on as it came).
 */
export async function startStrictS3rver(bucket: string): Promise<StrictS3rver> {
  const s3 = await startS3rver(bucket)
  const upstream = new URL(s3.endpoint)
  const lister = s3Client(s3.endpoint)
  const refusedCompletions: string[] = []

  /** The parts S3 holds for the upload, or undefined when there is no such upload. */
  async function storedParts(key: string, uploadId: string): Promise<Part[] | undefined> {
    const parts: Part[] = []
    let PartNumberMarker: string | undefined
    try {
      do {
        const page = await lister.send(new ListPartsCommand({ Bucket: bucket, Key: key, UploadId: uploadId, PartNumberMarker }))
        parts.push(...(page.Parts ?? []))
        PartNumberMarker = page.IsTruncated ? page.NextPartNumberMarker : undefined
      } while (PartNumberMarker)
    } catch (error) {
      if ((error as { name?: string }).name === 'NoSuchUpload') return undefined
      throw error
    }
    return parts
  }

  /** Why S3 would refuse this completion, as [status, code, message]; undefined if it would not. */
  async function refusal(key: string, uploadId: string, body: string): Promise<[number, string, string] | undefined> {
    const stored = await storedParts(key, uploadId)
    if (!stored) return [404, 'NoSuchUpload', 'The specified upload does not exist.']
    const listed = listedParts(body)
    if (listed.length === 0) return [400, 'MalformedXML', 'The XML you provided was not well-formed.']
    if (listed.some((part, i) => i > 0 && part.number <= listed[i - 1]!.number)) {
      return [400, 'InvalidPartOrder', 'The list of parts was not in ascending order.']
    }
    for (const [i, part] of listed.entries()) {
      const match = stored.find((candidate) => candidate.PartNumber === part.number)
      if (!match || match.ETag?.replace(/"/g, '') !== part.etag) {
        return [400, 'InvalidPart', `Part ${part.number} was not found or its ETag does not match.`]
      }
      if (i < listed.length - 1 && (match.Size ?? 0) < S3_MIN_PART_SIZE) {
        return [400, 'EntityTooSmall', `Part ${part.number} is smaller than the minimum allowed object size.`]
      }
    }
    return undefined
  }

  function forward(request: http.IncomingMessage, response: http.ServerResponse, body?: Buffer): void {
    const outgoing = http.request(
      { hostname: upstream.hostname, port: upstream.port, method: request.method, path: request.url, headers: request.headers },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(response)
      },
    )
    outgoing.on('error', () => response.destroy())
    if (body) outgoing.end(body)
    else request.pipe(outgoing)
  }

  async function handle(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', 'http://proxy')
    const uploadId = url.searchParams.get('uploadId')
    const [bucketName, ...keyPath] = url.pathname.split('/').filter((segment) => segment !== '')
    if (request.method !== 'POST' || !uploadId || bucketName !== bucket || keyPath.length === 0) {
      forward(request, response)
      return
    }
    const body = await readBody(request)
    const refused = await refusal(decodeURIComponent(keyPath.join('/')), uploadId, body.toString('utf8'))
    if (!refused) {
      forward(request, response, body)
      return
    }
    const [status, code, message] = refused
    refusedCompletions.push(code)
    response.writeHead(status, { 'content-type': 'application/xml' })
    response.end(errorXml(code, message))
  }

  const server = http.createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      response.writeHead(500, { 'content-type': 'application/xml' })
      response.end(errorXml('InternalError', String(error)))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo

  return {
    ...s3,
    endpoint: `http://127.0.0.1:${port}`,
    refusedCompletions,
    async close() {
      lister.destroy()
      await new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      })
      await s3.close()
    },
  }
}
