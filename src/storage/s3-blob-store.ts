import { randomBytes } from 'node:crypto'
import { PassThrough, type Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import {
  AbortMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  ListPartsCommand,
  NoSuchKey,
  NoSuchUpload,
  type S3Client,
} from '@aws-sdk/client-s3'
import { Upload } from '@aws-sdk/lib-storage'
import { BlobNotFoundError, ServiceUnavailableError } from '../errors.js'
import { isConnectionError } from '../lib/network-errors.js'
import type { BlobEntry, BlobStore, ByteRange, StoredBlob, UnfinishedWrite } from './blob-store.js'
import { ByteMeter } from './byte-meter.js'

const KEY_PATTERN = /^[a-f0-9]{32}$/

/**
 * The S3 side failed in a way that a retry later can fix: no connection, a timeout, or a 5xx from
 * the service (after the SDK's own retries). These become 503s; anything else stays as it is.
 */
function translateS3Error(error: unknown): unknown {
  const { name, $fault } = error as { name?: unknown; $fault?: unknown }
  const unavailable = isConnectionError(error) || name === 'TimeoutError' || $fault === 'server'
  return unavailable ? new ServiceUnavailableError('The object storage is unavailable.', { cause: error }) : error
}

export interface S3BlobStoreOptions {
  bucket: string
  /** Object-name prefix under which blobs live, e.g. `blobs/`. */
  prefix: string
  /** Bytes per multipart part; memory per upload is at most partSize x queueSize. */
  partSize: number
  /** Parts in flight per upload. */
  queueSize: number
}

/**
 * Blobs in an S3-compatible bucket. Uploads stream as multipart uploads with bounded memory and
 * are aborted on failure (no orphaned parts); reads pass the Range through to GetObject.
 */
export class S3BlobStore implements BlobStore {
  constructor(
    private readonly client: S3Client,
    private readonly options: S3BlobStoreOptions,
  ) {}

  private objectKey(key: string): string {
    if (!KEY_PATTERN.test(key)) throw new BlobNotFoundError(key)
    return `${this.options.prefix}${key}`
  }

  async put(source: Readable, { maxBytes }: { maxBytes: number }): Promise<StoredBlob> {
    const key = randomBytes(16).toString('hex')
    const meter = new ByteMeter(maxBytes)
    const body = new PassThrough()
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.options.bucket, Key: this.objectKey(key), Body: body },
      partSize: this.options.partSize,
      queueSize: this.options.queueSize,
      leavePartsOnError: false,
    })
    const feeding = pipeline(source, meter, body)
    // Only errors of the S3 side are translated: a client that cuts its upload off is not a 503.
    const uploading = upload.done().catch((error: unknown) => {
      throw translateS3Error(error)
    })
    try {
      await Promise.all([feeding, uploading])
    } catch (error) {
      // Whichever side failed first, stop the other and leave no object or part behind.
      body.destroy()
      source.resume()
      // Once its body fails, done() settles only after AbortMultipartUpload has been answered.
      // (upload.abort() would only stop waiting, and the abort would land after put rejected.)
      await uploading.catch(() => {})
      await this.delete(key).catch(() => {})
      await feeding.catch(() => {})
      throw error
    }
    return { key, size: meter.size, sha256: meter.digest() }
  }

  async get(key: string, range?: ByteRange): Promise<Readable> {
    try {
      const result = await this.client.send(
        new GetObjectCommand({
          Bucket: this.options.bucket,
          Key: this.objectKey(key),
          Range: range ? `bytes=${range.start}-${range.end}` : undefined,
        }),
      )
      return result.Body as Readable
    } catch (error) {
      if (error instanceof NoSuchKey || (error as { name?: string }).name === 'NoSuchKey') throw new BlobNotFoundError(key)
      throw translateS3Error(error)
    }
  }

  async delete(key: string): Promise<void> {
    if (!KEY_PATTERN.test(key)) return
    await this.client.send(new DeleteObjectCommand({ Bucket: this.options.bucket, Key: this.objectKey(key) }))
  }

  async *list(): AsyncIterable<BlobEntry> {
    let ContinuationToken: string | undefined
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({ Bucket: this.options.bucket, Prefix: this.options.prefix, ContinuationToken }),
      )
      for (const object of page.Contents ?? []) {
        const key = object.Key?.slice(this.options.prefix.length)
        if (key && KEY_PATTERN.test(key)) yield { key, modifiedAt: object.LastModified ?? new Date(0), size: object.Size ?? 0 }
      }
      ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined
    } while (ContinuationToken)
  }

  /**
   * Multipart uploads under the prefix that were neither completed nor aborted. A put in progress
   * has one too: its last part's time, not the upload's start, tells how recently it was written,
   * since a large upload may run for hours.
   */
  async *listUnfinishedWrites(): AsyncIterable<UnfinishedWrite> {
    let KeyMarker: string | undefined
    let UploadIdMarker: string | undefined
    do {
      const page = await this.client.send(
        new ListMultipartUploadsCommand({ Bucket: this.options.bucket, Prefix: this.options.prefix, KeyMarker, UploadIdMarker }),
      )
      for (const upload of page.Uploads ?? []) {
        const key = upload.Key?.slice(this.options.prefix.length)
        if (!key || !KEY_PATTERN.test(key) || !upload.UploadId) continue
        const parts = await this.partsOf(upload.Key!, upload.UploadId)
        if (!parts) continue // completed or aborted since the listing
        const started = upload.Initiated ?? new Date(0)
        const lastWrittenAt = parts.lastWrittenAt && parts.lastWrittenAt > started ? parts.lastWrittenAt : started
        yield { id: `${key}:${upload.UploadId}`, lastWrittenAt, size: parts.size }
      }
      const truncated = page.IsTruncated ?? false
      KeyMarker = truncated ? page.NextKeyMarker : undefined
      UploadIdMarker = truncated ? page.NextUploadIdMarker : undefined
    } while (KeyMarker)
  }

  /** The stored parts' total size and latest time; undefined once the upload is gone. */
  private async partsOf(objectKey: string, UploadId: string): Promise<{ size: number; lastWrittenAt?: Date } | undefined> {
    let size = 0
    let lastWrittenAt: Date | undefined
    let PartNumberMarker: string | undefined
    try {
      do {
        const page = await this.client.send(
          new ListPartsCommand({ Bucket: this.options.bucket, Key: objectKey, UploadId, PartNumberMarker }),
        )
        for (const part of page.Parts ?? []) {
          size += part.Size ?? 0
          if (part.LastModified && (!lastWrittenAt || part.LastModified > lastWrittenAt)) lastWrittenAt = part.LastModified
        }
        PartNumberMarker = page.IsTruncated ? page.NextPartNumberMarker : undefined
      } while (PartNumberMarker)
    } catch (error) {
      if (isNoSuchUpload(error)) return undefined
      throw error
    }
    return { size, lastWrittenAt }
  }

  async removeUnfinishedWrite(id: string): Promise<void> {
    const separator = id.indexOf(':')
    const key = id.slice(0, separator)
    const UploadId = id.slice(separator + 1)
    if (separator < 0 || !KEY_PATTERN.test(key) || !UploadId) return
    try {
      await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.options.bucket, Key: this.objectKey(key), UploadId }))
    } catch (error) {
      if (!isNoSuchUpload(error)) throw error
    }
  }

  async check(): Promise<void> {
    await this.client.send(new HeadBucketCommand({ Bucket: this.options.bucket }))
  }

  /** Closes the client's keep-alive sockets, which would otherwise hold the process open. */
  async close(): Promise<void> {
    this.client.destroy()
  }
}

function isNoSuchUpload(error: unknown): boolean {
  return error instanceof NoSuchUpload || (error as { name?: string }).name === 'NoSuchUpload'
}
