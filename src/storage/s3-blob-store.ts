import { randomBytes } from 'node:crypto'
import { PassThrough, type Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  ListObjectsV2Command,
  NoSuchKey,
  type S3Client,
} from '@aws-sdk/client-s3'
import { Upload } from '@aws-sdk/lib-storage'
import { BlobNotFoundError } from '../errors.js'
import type { BlobEntry, BlobStore, ByteRange, StoredBlob } from './blob-store.js'
import { ByteMeter } from './byte-meter.js'

const KEY_PATTERN = /^[a-f0-9]{32}$/

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
    const uploading = upload.done()
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
      throw error
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
        if (key && KEY_PATTERN.test(key)) yield { key, modifiedAt: object.LastModified ?? new Date(0) }
      }
      ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined
    } while (ContinuationToken)
  }

  async check(): Promise<void> {
    await this.client.send(new HeadBucketCommand({ Bucket: this.options.bucket }))
  }
}
