import type { Config } from '../config.js'
import { ServiceUnavailableError } from '../errors.js'
import type { BlobStore } from './blob-store.js'
import { FsBlobStore } from './fs-blob-store.js'
import type { ResumableBlobStore } from './resumable.js'

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
  const client = new S3Client({
    region,
    endpoint,
    forcePathStyle,
    // Checksums only where S3 requires them: S3-compatible servers differ in what else they accept.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    // A store that stalls (it accepts connections, then never answers) fails the operation, hence the
    // request with 503, instead of holding it for as long as the stall lasts: no connection, or no
    // byte either way on an open one, within the backend timeout. The SDK has no timeout by default.
    // (A download's body has its own guard, which does not count the time its reader takes.)
    ...(timeoutMs ? { requestHandler: { connectionTimeout: timeoutMs, socketTimeout: timeoutMs } } : {}),
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
          if ((error as { name?: unknown }).name !== 'TimeoutError') throw error
          // No `cause`: the SDK would find the timeout in it and retry after all.
          throw new ServiceUnavailableError(`The object storage is unavailable: ${(error as Error).message}`)
        }
      },
      { step: 'deserialize', name: 'fileshareTimeoutsAreFinal' },
    )
  }
  return new S3BlobStore(client, { bucket, prefix, partSize, queueSize, ...(timeoutMs ? { stallTimeoutMs: timeoutMs } : {}) })
}
