import type { Config } from '../config.js'
import { ServiceUnavailableError } from '../errors.js'
import type { BlobStore } from './blob-store.js'
import { FsBlobStore } from './fs-blob-store.js'
import type { ResumableBlobStore } from './resumable.js'

/** The SDK's HTTP handler timeouts (@smithy/node-http-handler's options), in ms. */
interface S3Timeouts {
  connectionTimeout: number
  socketTimeout?: number
  requestTimeout?: number
  throwOnRequestTimeout?: boolean
}

/** The configured blob store, with resumable writes; the one place that chooses between implementations. */
export async function openBlobStore(
  config: Pick<Config, 'blobDir' | 'storage' | 's3'> & Partial<Pick<Config, 'backendTimeoutMs'>>,
): Promise<BlobStore & ResumableBlobStore> {
  if (config.storage === 'fs') return new FsBlobStore(config.blobDir).init()
  // The AWS SDK is large: load it only when S3 is configured.
  const [{ S3Client }, { S3BlobStore }] = await Promise.all([import('@aws-sdk/client-s3'), import('./s3-blob-store.js')])
  const { bucket, endpoint, region, forcePathStyle, prefix, partSize, queueSize } = config.s3
  const timeoutMs = config.backendTimeoutMs
  // Credentials come from the AWS SDK's standard chain (environment, profile, instance role).
  const newClient = (timeouts: S3Timeouts | undefined) => {
    const client = new S3Client({
      region,
      endpoint,
      forcePathStyle,
      // Checksums only where S3 requires them: S3-compatible servers differ in what else they accept.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      ...(timeouts ? { requestHandler: timeouts } : {}),
    })
    if (timeoutMs) {
      // Inside the SDK's retries: a store that stalled does not answer a retry a moment later, and
      // three attempts would hold the request three timeouts long. A timeout is final (503); errors
      // that come at once (a reset connection, a 5xx, throttling) are still retried.
      client.middlewareStack.add(
        (next) => async (args) => {
          try {
            return await next(args)
          } catch (error) {
            if (!isTimeout(error)) throw error
            // No `cause`: the SDK would find the timeout in it and retry after all.
            throw new ServiceUnavailableError(`The object storage is unavailable: ${(error as Error).message}`)
          }
        },
        { step: 'deserialize', name: 'fileshareTimeoutsAreFinal' },
      )
    }
    return client
  }
  // A store that stalls (it accepts connections, then never answers) fails the operation, hence the
  // request with 503, instead of holding it for as long as the stall lasts: no connection, or no
  // byte either way on an open one, within the backend timeout. The SDK has no timeout by default.
  const client = newClient(timeoutMs ? { connectionTimeout: timeoutMs, socketTimeout: timeoutMs } : undefined)
  // Downloads wait for the answer's headers within the timeout, and no more: their body has its own
  // guard (watchedBody), which does not count the time the reader takes. A socket timeout would: the
  // SDK arms one of 6 s or more only 3 s into the request, under a body already streaming, and a
  // client that paused longer would lose its download.
  const downloads = timeoutMs ? newClient({ connectionTimeout: timeoutMs, requestTimeout: timeoutMs, throwOnRequestTimeout: true }) : client
  return new S3BlobStore(client, { bucket, prefix, partSize, queueSize, ...(timeoutMs ? { stallTimeoutMs: timeoutMs } : {}) }, downloads)
}

/**
 * Whether the SDK's error is a timeout, which is final. The SDK also names a connection reset
 * (ECONNRESET, EPIPE) a TimeoutError so that it is retried; a reset comes at once (S3 closing a
 * kept-alive connection as a request goes out on it), and its retry is what fixes it.
 */
function isTimeout(error: unknown): boolean {
  const { name, code } = error as { name?: unknown; code?: unknown }
  return name === 'TimeoutError' && code !== 'ECONNRESET' && code !== 'EPIPE'
}
