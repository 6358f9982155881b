import type { Config } from '../config.js'
import type { BlobStore } from './blob-store.js'
import { FsBlobStore } from './fs-blob-store.js'
import type { ResumableBlobStore } from './resumable.js'

/** The configured blob store, with resumable writes; the one place that chooses between implementations. */
export async function openBlobStore(config: Pick<Config, 'blobDir' | 'storage' | 's3'>): Promise<BlobStore & ResumableBlobStore> {
  if (config.storage === 'fs') return new FsBlobStore(config.blobDir).init()
  // The AWS SDK is large: load it only when S3 is configured.
  const [{ S3Client }, { S3BlobStore }] = await Promise.all([import('@aws-sdk/client-s3'), import('./s3-blob-store.js')])
  const { bucket, endpoint, region, forcePathStyle, prefix, partSize, queueSize } = config.s3
  // Credentials come from the AWS SDK's standard chain (environment, profile, instance role).
  const client = new S3Client({
    region,
    endpoint,
    forcePathStyle,
    // Checksums only where S3 requires them: S3-compatible servers differ in what else they accept.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  })
  return new S3BlobStore(client, { bucket, prefix, partSize, queueSize })
}
