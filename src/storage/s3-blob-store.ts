import { randomBytes } from 'node:crypto'
import { PassThrough, type Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  ListPartsCommand,
  NoSuchKey,
  NoSuchUpload,
  PutObjectCommand,
  UploadPartCommand,
  type S3Client,
} from '@aws-sdk/client-s3'
import { Upload } from '@aws-sdk/lib-storage'
import { BlobNotFoundError, ServiceUnavailableError } from '../errors.js'
import { isConnectionError } from '../lib/network-errors.js'
import type { BlobEntry, BlobStore, ByteRange, StoredBlob, UnfinishedWrite } from './blob-store.js'
import { ByteMeter } from './byte-meter.js'
import { watchedBody } from './s3-object-body.js'
import {
  forEachChunk,
  type AppendOptions,
  type CompleteOptions,
  type ResumableBlobStore,
  type ResumableCommit,
  type ResumableLeftover,
} from './resumable.js'

const KEY_PATTERN = /^[a-f0-9]{32}$/
/** S3's smallest part, except for the last one of an upload. */
const MIN_PART_SIZE = 5 * 1024 * 1024
/** S3's highest part number. */
const MAX_PART_NUMBER = 10_000
/** A tail object: `<prefix>resumable/<key>/<end offset>-<random>`; the id of a leftover is what follows `resumable/`. */
const TAIL_ID_PATTERN = /^([a-f0-9]{32})\/([0-9]+-[a-f0-9]{16})$/

/**
 * Where a resumable write on S3 stands: the multipart upload on the blob's own key, its committed
 * parts (number, ETag, size; every one a full part buffer), and the tail, the bytes after the last
 * part (fewer than a part buffer), kept as one object until enough follow to make a part.
 */
interface S3ResumableState {
  v: 1
  key: string
  uploadId: string
  parts: Array<[number: number, etag: string, size: number]>
  tail: { name: string; size: number } | null
  /** The number of the next part. */
  next: number
}

function encodeState(state: S3ResumableState): string {
  return JSON.stringify(state)
}

function decodeState(text: string): S3ResumableState {
  let state: Partial<S3ResumableState> | undefined
  try {
    state = JSON.parse(text) as Partial<S3ResumableState>
  } catch {
    state = undefined
  }
  if (
    state?.v !== 1 ||
    typeof state.key !== 'string' ||
    !KEY_PATTERN.test(state.key) ||
    typeof state.uploadId !== 'string' ||
    !Array.isArray(state.parts) ||
    typeof state.next !== 'number' ||
    state.tail === undefined
  ) {
    throw new Error('Not a resumable upload of the S3 store.')
  }
  return state as S3ResumableState
}

function offsetOf(state: S3ResumableState): number {
  return state.parts.reduce((sum, [, , size]) => sum + size, 0) + (state.tail?.size ?? 0)
}

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
  /**
   * How long a download's bytes may stop coming while its reader waits for them before the read
   * fails with 503 (a store that stalls mid-body); none when unset.
   */
  stallTimeoutMs?: number
}

/**
 * Blobs in an S3-compatible bucket. Uploads stream as multipart uploads with bounded memory and
 * are aborted on failure (no orphaned parts); reads pass the Range through to GetObject.
 *
 * Resumable writes are a multipart upload on the blob's final key (completion is S3 joining the
 * parts: no copy), fed through one part buffer per append (partSize, at least 5 MiB) and no local
 * disk. What an append leaves that does not fill a part becomes the tail object under
 * `<prefix>resumable/`; the next append reads it back first, and it is deleted only after the
 * commit that no longer needs it.
 */
export class S3BlobStore implements BlobStore, ResumableBlobStore {
  /**
   * `downloads` (default: `client`) sends the GetObject requests of get(): a client whose requests
   * have no socket idle timeout, as a download's body is guarded by watchedBody and its reader may
   * pause for as long as it likes (see openBlobStore).
   */
  constructor(
    private readonly client: S3Client,
    private readonly options: S3BlobStoreOptions,
    private readonly downloads: S3Client = client,
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
      // The multipart upload of a failed put is aborted below, not by the SDK: its done() would fail
      // only once the abort is answered, a second timeout when the store stalls.
      leavePartsOnError: true,
    })
    const feeding = pipeline(source, meter, body)
    // Only errors of the S3 side are translated: a client that cuts its upload off is not a 503.
    let storeFailure: unknown
    const uploading = upload.done().catch((error: unknown) => {
      storeFailure = translateS3Error(error)
      throw storeFailure
    })
    try {
      await Promise.all([feeding, uploading])
    } catch (error) {
      // Whichever side failed first, stop the other and leave no object or part behind.
      body.destroy()
      source.resume()
      const cleanup = (async () => {
        // done() settles only once every part in flight has: the abort below comes after them all.
        await uploading.catch(() => {})
        const { uploadId: UploadId } = upload
        if (UploadId) {
          const Key = this.objectKey(key)
          await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.options.bucket, Key, UploadId })).catch(() => {})
        }
        await this.delete(key).catch(() => {})
        await feeding.catch(() => {})
      })()
      // A source or limit that failed (a cut client, a file too large, a full quota) makes the S3
      // side fail too, sometimes first: the cause is what the caller must see.
      const cause = source.errored ?? meter.errored ?? storeFailure ?? error
      // The store itself failed (it stalled or went away): its cleanup would wait as long again (the
      // chaos soak's uploads answered their 503 after two timeouts). The answer goes first, the
      // cleanup behind it; what it cannot remove, the collector does after its grace period (an
      // object no row names, a multipart upload never completed).
      if (cause instanceof ServiceUnavailableError) throw cause
      await cleanup
      throw cause
    }
    return { key, size: meter.size, sha256: meter.digest() }
  }

  async get(key: string, range?: ByteRange): Promise<Readable> {
    try {
      const result = await this.downloads.send(
        new GetObjectCommand({
          Bucket: this.options.bucket,
          Key: this.objectKey(key),
          Range: range ? `bytes=${range.start}-${range.end}` : undefined,
        }),
      )
      const body = result.Body as Readable
      const { stallTimeoutMs } = this.options
      if (stallTimeoutMs === undefined) return body
      return watchedBody(
        body,
        stallTimeoutMs,
        () => new ServiceUnavailableError(`The object storage sent no bytes for ${stallTimeoutMs} ms.`),
        translateS3Error,
      )
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
        yield { id: `${key}:${upload.UploadId}`, key, lastWrittenAt, size: parts.size }
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
    if (this.downloads !== this.client) this.downloads.destroy()
  }

  private get resumablePrefix(): string {
    return `${this.options.prefix}resumable/`
  }

  private tailObjectKey(key: string, name: string): string {
    return `${this.resumablePrefix}${key}/${name}`
  }

  async createResumable(): Promise<{ key: string; state: string }> {
    const key = randomBytes(16).toString('hex')
    const { UploadId } = await this.client
      .send(new CreateMultipartUploadCommand({ Bucket: this.options.bucket, Key: this.objectKey(key) }))
      .catch((error: unknown) => {
        throw translateS3Error(error)
      })
    if (!UploadId) throw new Error('CreateMultipartUpload answered without an UploadId.')
    return { key, state: encodeState({ v: 1, key, uploadId: UploadId, parts: [], tail: null, next: 1 }) }
  }

  async append(state: string, committedOffset: number, source: Readable, options: AppendOptions): Promise<ResumableCommit> {
    const { maxBytes, onCommit, onData, partialCommits = true, reservePartNumber } = options
    let committedState: S3ResumableState
    try {
      committedState = decodeState(state)
      if (offsetOf(committedState) !== committedOffset) {
        throw new Error(`The resumable upload's state holds ${offsetOf(committedState)} bytes, not the ${committedOffset} given.`)
      }
    } catch (error) {
      source.resume()
      throw error
    }
    const { key } = committedState
    let committed: ResumableCommit = { offset: committedOffset, state }
    // What the committed parts and the buffer would make if committed now.
    let pending = committedState
    // The one part buffer: the committed tail, then the new bytes. allocUnsafe touches no page it is not given.
    const buffer = Buffer.allocUnsafe(Math.max(this.options.partSize, MIN_PART_SIZE))
    let filled = 0
    let received = committedOffset
    let sourceFailure: { error: unknown } | undefined
    // The tail of the last state offered to onCommit: a commit that threw may still have been
    // recorded (a database that stopped answering applies it later), so that tail must stay.
    let offeredTail: string | undefined

    const commit = async () => {
      const next = { offset: offsetOf(pending), state: encodeState(pending) }
      offeredTail = pending.tail?.name
      await onCommit(next)
      const before = committedState
      committedState = pending
      committed = next
      // The old tail is in a part or a new tail now, and the commit that says so is recorded.
      if (before.tail && before.tail.name !== pending.tail?.name) await this.deleteTail(key, before.tail.name).catch(() => {})
    }
    const uploadBuffer = async () => {
      const part = await this.uploadPart(pending, buffer.subarray(0, filled), reservePartNumber)
      pending = { ...pending, parts: [...pending.parts, part], tail: null, next: part[0] + 1 }
      filled = 0
    }
    /**
     * Puts what the buffer holds into a new tail, or into a part when the buffer is full, then
     * commits. Only full parts, so that S3's 10,000 parts hold 10,000 x partSize whatever the
     * clients' chunk size (5 MiB chunks made 5 MiB parts: 49 GiB at most).
     */
    const flush = async () => {
      if (filled === buffer.length) await uploadBuffer()
      else if (filled > 0) {
        const name = `${received}-${randomBytes(8).toString('hex')}`
        await this.client.send(
          new PutObjectCommand({
            Bucket: this.options.bucket,
            Key: this.tailObjectKey(key, name),
            Body: buffer.subarray(0, filled),
            ContentLength: filled,
          }),
        )
        pending = { ...pending, tail: { name, size: filled } }
      }
      await commit()
    }

    try {
      if (committedState.tail) filled = await this.readTail(key, committedState.tail, buffer)
      const { sourceError } = await forEachChunk(source, committedOffset, maxBytes, async (chunk) => {
        let used = 0
        while (used < chunk.length) {
          const copied = chunk.copy(buffer, filled, used)
          onData?.(chunk.subarray(used, used + copied))
          filled += copied
          used += copied
          received += copied
          if (filled === buffer.length) {
            await uploadBuffer()
            if (partialCommits) await commit()
          }
        }
      })
      if (sourceError !== undefined) {
        sourceFailure = { error: sourceError }
        // A cut: keep what arrived before it, so the client resumes from there.
        if (partialCommits && received > committed.offset) await flush().catch(() => {})
        throw sourceError
      }
      if (received > committed.offset) await flush()
      return committed
    } catch (error) {
      source.resume()
      // A tail written for a commit never offered is nobody's. One offered to a commit that threw
      // stays (that commit may have been recorded); the upload's completion or abort removes it.
      const orphan = pending.tail?.name
      if (orphan !== undefined && orphan !== committedState.tail?.name && orphan !== offeredTail) {
        await this.deleteTail(key, orphan).catch(() => {})
      }
      // Only errors of the S3 side are translated: a client that cuts its upload off is not a 503.
      throw sourceFailure ? sourceFailure.error : translateS3Error(error)
    }
  }

  /** Reads the tail object into the start of `buffer`; resolves to its size. */
  private async readTail(key: string, tail: { name: string; size: number }, buffer: Buffer): Promise<number> {
    const { Body } = await this.client.send(new GetObjectCommand({ Bucket: this.options.bucket, Key: this.tailObjectKey(key, tail.name) }))
    let size = 0
    for await (const chunk of Body as Readable) {
      const bytes = chunk as Buffer
      if (size + bytes.length > tail.size) throw new Error(`The tail of the resumable upload ${key} is longer than committed.`)
      size += bytes.copy(buffer, size)
    }
    if (size !== tail.size) throw new Error(`The tail of the resumable upload ${key} holds ${size} bytes, not ${tail.size}.`)
    return size
  }

  private async uploadPart(
    state: S3ResumableState,
    body: Buffer,
    reservePartNumber?: () => Promise<number>,
  ): Promise<[number, string, number]> {
    const PartNumber = reservePartNumber ? await reservePartNumber() : state.next
    if (!Number.isInteger(PartNumber) || PartNumber < state.next) {
      throw new Error(`Part number ${PartNumber} is not above the parts of the resumable upload ${state.key}.`)
    }
    if (PartNumber > MAX_PART_NUMBER) throw new Error(`A resumable upload on S3 has at most ${MAX_PART_NUMBER} parts.`)
    const { ETag } = await this.client.send(
      new UploadPartCommand({
        Bucket: this.options.bucket,
        Key: this.objectKey(state.key),
        UploadId: state.uploadId,
        PartNumber,
        Body: body,
        ContentLength: body.length,
      }),
    )
    if (!ETag) throw new Error('UploadPart answered without an ETag.')
    return [PartNumber, ETag, body.length]
  }

  private async deleteTail(key: string, name: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.options.bucket, Key: this.tailObjectKey(key, name) }))
  }

  /** Deletes every tail object of the upload of `key`: the committed one and any a crash left. */
  private async deleteTails(key: string): Promise<void> {
    try {
      for await (const leftover of this.tailsUnder(`${this.resumablePrefix}${key}/`)) {
        await this.removeResumableLeftover(leftover.id)
      }
    } catch (error) {
      throw translateS3Error(error)
    }
  }

  async completeResumable(state: string, options: CompleteOptions = {}): Promise<{ key: string; size: number }> {
    const upload = decodeState(state)
    const { key, uploadId: UploadId } = upload
    const Bucket = this.options.bucket
    const Key = this.objectKey(key)
    const size = offsetOf(upload)
    try {
      if (size === 0) {
        // S3 completes no upload without parts: an empty object, then the upload goes. The upload
        // must still be there (ListParts fails with NoSuchUpload otherwise): an aborted one stays so.
        await this.client.send(new ListPartsCommand({ Bucket, Key, UploadId, MaxParts: 1 }))
        await this.client.send(new PutObjectCommand({ Bucket, Key, Body: Buffer.alloc(0), ContentLength: 0 }))
        await this.client.send(new AbortMultipartUploadCommand({ Bucket, Key, UploadId })).catch((error: unknown) => {
          if (!isNoSuchUpload(error)) throw error
        })
      } else {
        const parts = [...upload.parts]
        if (upload.tail) {
          // The last part may be of any size: the tail (under a part buffer) becomes it.
          const body = Buffer.allocUnsafe(upload.tail.size)
          await this.readTail(key, upload.tail, body)
          parts.push(await this.uploadPart(upload, body, options.reservePartNumber))
        }
        await this.client.send(
          new CompleteMultipartUploadCommand({
            Bucket,
            Key,
            UploadId,
            MultipartUpload: { Parts: parts.map(([PartNumber, ETag]) => ({ PartNumber, ETag })) },
          }),
        )
      }
    } catch (error) {
      if (!isNoSuchUpload(error) && !isNoSuchKey(error)) throw translateS3Error(error)
      // Completed before (this is a repeat): the blob must be there, whole.
      const head = await this.client.send(new HeadObjectCommand({ Bucket, Key })).catch((headError: unknown) => {
        if (isNoSuchKey(headError)) return undefined
        throw translateS3Error(headError)
      })
      if (head?.ContentLength !== size) throw new BlobNotFoundError(key)
    }
    await this.deleteTails(key)
    return { key, size }
  }

  async abortResumable(state: string): Promise<void> {
    const { key, uploadId: UploadId } = decodeState(state)
    try {
      await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.options.bucket, Key: this.objectKey(key), UploadId }))
    } catch (error) {
      if (!isNoSuchUpload(error)) throw translateS3Error(error)
    }
    await this.deleteTails(key)
  }

  listResumableLeftovers(): AsyncIterable<ResumableLeftover> {
    return this.tailsUnder(this.resumablePrefix)
  }

  private async *tailsUnder(prefix: string): AsyncIterable<ResumableLeftover> {
    let ContinuationToken: string | undefined
    do {
      const page = await this.client.send(new ListObjectsV2Command({ Bucket: this.options.bucket, Prefix: prefix, ContinuationToken }))
      for (const object of page.Contents ?? []) {
        const id = object.Key?.slice(this.resumablePrefix.length) ?? ''
        const match = TAIL_ID_PATTERN.exec(id)
        if (match) yield { id, key: match[1]!, lastWrittenAt: object.LastModified ?? new Date(0), size: object.Size ?? 0 }
      }
      ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined
    } while (ContinuationToken)
  }

  async removeResumableLeftover(id: string): Promise<void> {
    if (!TAIL_ID_PATTERN.test(id)) return
    await this.client.send(new DeleteObjectCommand({ Bucket: this.options.bucket, Key: `${this.resumablePrefix}${id}` }))
  }
}

function isNoSuchUpload(error: unknown): boolean {
  return error instanceof NoSuchUpload || (error as { name?: string }).name === 'NoSuchUpload'
}

function isNoSuchKey(error: unknown): boolean {
  const name = (error as { name?: string }).name
  return error instanceof NoSuchKey || name === 'NoSuchKey' || name === 'NotFound'
}
