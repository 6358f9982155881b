import { randomBytes } from 'node:crypto'
import { Readable } from 'node:stream'
import { setTimeout as sleep } from 'node:timers/promises'
import {
  CreateMultipartUploadCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3'
import { afterEach, beforeEach, describe, expect, it, onTestFinished } from 'vitest'
import { FileTooLargeError } from '../../src/errors.js'
import type { UnfinishedWrite } from '../../src/storage/blob-store.js'
import { S3BlobStore } from '../../src/storage/s3-blob-store.js'
import { S3RVER_CREDENTIALS, startS3rver, type TestS3rver } from '../helpers/scale-out-env.js'
import { sha256Hex } from '../../src/lib/sha256-hex.js'
import { s3Client, type SentCommand } from '../helpers/strict-s3rver.js'
import { chunkedSource, describeBlobStoreContract, listKeys, listUnfinished, readAll } from '../helpers/blob-store-contract.js'

const BUCKET = 'fileshare-blobs'
const PREFIX = 'blobs/'
const MIB = 1024 * 1024
/** The smallest part S3 allows, so that a few MiB make a multipart upload. */
const PART_SIZE = 5 * MIB

interface S3Fixture {
  s3: TestS3rver
  client: S3Client
  store: S3BlobStore
  /** Every request the store's client made, in the order their answers came. */
  sent: SentCommand[]
  close(): Promise<void>
}

async function startS3Fixture(): Promise<S3Fixture> {
  const s3 = await startS3rver(BUCKET)
  const sent: SentCommand[] = []
  const client = s3Client(s3.endpoint, sent)
  const store = new S3BlobStore(client, { bucket: BUCKET, prefix: PREFIX, partSize: PART_SIZE, queueSize: 2 })
  return {
    s3,
    client,
    store,
    sent,
    async close() {
      client.destroy()
      await s3.close()
    },
  }
}

/** Starts a multipart upload under `key` and stores `bytes` as its first part, as a put killed mid-way does. */
async function startMultipartUpload(client: S3Client, key: string, bytes: Buffer): Promise<string> {
  const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: key }))
  await client.send(new UploadPartCommand({ Bucket: BUCKET, Key: key, UploadId, PartNumber: 1, Body: bytes }))
  return UploadId!
}

describeBlobStoreContract('S3BlobStore on s3rver', async () => {
  const fixture = await startS3Fixture()
  return {
    store: fixture.store,
    cleanup: () => fixture.close(),
    interruptWrite: async (bytes) => {
      await startMultipartUpload(fixture.client, `${PREFIX}${randomBytes(16).toString('hex')}`, bytes)
    },
  }
})

/** Waits (at most 10 s) until `condition` holds; polls because the store gives no other signal. */
async function until(what: string, condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`${what}: not reached within 10 s`)
    await sleep(10)
  }
}

/**
 * Hands over `first` in 64 KiB chunks, waits until `ready()` holds, then hands over `rest` or
 * fails with it. The wait makes "parts were already stored when it went wrong" certain.
 */
function gatedSource(first: Buffer, ready: () => boolean, rest: Buffer | Error): Readable {
  async function* chunks() {
    for (let offset = 0; offset < first.length; offset += 64 * 1024) yield first.subarray(offset, offset + 64 * 1024)
    await until('gate of the source', ready)
    if (rest instanceof Error) throw rest
    for (let offset = 0; offset < rest.length; offset += 64 * 1024) yield rest.subarray(offset, offset + 64 * 1024)
  }
  return Readable.from(chunks(), { objectMode: false })
}

describe('S3BlobStore on s3rver: multipart uploads, aborts and ranges', () => {
  let fixture: S3Fixture
  const sentNamed = (name: string) => fixture.sent.filter((request) => request.name === name)
  const answeredParts = () => sentNamed('UploadPartCommand').filter((request) => request.status === 200).length

  beforeEach(async () => {
    fixture = await startS3Fixture()
  })
  afterEach(async () => {
    await fixture.close()
  })

  /** Every object in the bucket, whatever its prefix. */
  async function bucketObjects(): Promise<string[]> {
    const page = await fixture.client.send(new ListObjectsV2Command({ Bucket: BUCKET }))
    return (page.Contents ?? []).map((object) => object.Key!).sort()
  }

  /** The multipart upload the store started must have been aborted before put() rejected, and be gone. */
  async function expectMultipartUploadAborted(): Promise<void> {
    const created = sentNamed('CreateMultipartUploadCommand')
    expect(created).toHaveLength(1)
    const uploadId = created[0]!.output!.UploadId
    expect(uploadId).toEqual(expect.any(String))
    expect(sentNamed('CompleteMultipartUploadCommand')).toEqual([])
    expect(sentNamed('AbortMultipartUploadCommand').map((request) => [request.input.UploadId, request.status])).toEqual([[uploadId, 204]])
    expect(await fixture.s3.multipartUploadsInProgress()).toEqual([])
    expect(await bucketObjects()).toEqual([])
  }

  it('streams a file of more than two parts as one multipart upload, which reads back whole and in ranges', async () => {
    const content = randomBytes(2 * PART_SIZE + 3 * MIB)
    const stored = await fixture.store.put(chunkedSource(content, 256 * 1024), { maxBytes: 20 * MIB })
    expect(stored).toEqual({ key: expect.stringMatching(/^[a-f0-9]{32}$/), size: content.length, sha256: sha256Hex(content) })

    expect(sentNamed('CreateMultipartUploadCommand')).toHaveLength(1)
    expect(
      sentNamed('UploadPartCommand')
        .map((request) => request.input.PartNumber)
        .sort(),
    ).toEqual([1, 2, 3])
    expect(sentNamed('CompleteMultipartUploadCommand').map((request) => request.status)).toEqual([200])
    expect(sentNamed('PutObjectCommand')).toEqual([])

    const head = await fixture.client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: `${PREFIX}${stored.key}` }))
    expect(head.ContentLength).toBe(content.length)
    expect((await readAll(await fixture.store.get(stored.key))).equals(content)).toBe(true)
    // A range across the boundary of parts 1 and 2.
    const range = { start: PART_SIZE - 10, end: PART_SIZE + 9 }
    expect((await readAll(await fixture.store.get(stored.key, range))).equals(content.subarray(range.start, range.end + 1))).toBe(true)
    expect(await fixture.s3.multipartUploadsInProgress()).toEqual([])
  })

  it('a put that passes maxBytes after two stored parts aborts the multipart upload: no object, no upload in progress', async () => {
    const error = await fixture.store
      .put(
        gatedSource(randomBytes(2 * PART_SIZE + 64 * 1024), () => answeredParts() >= 2, randomBytes(10 * MIB)),
        { maxBytes: 12 * MIB },
      )
      .catch((e: unknown) => e)
    expect(error).toBeInstanceOf(FileTooLargeError)
    expect(answeredParts()).toBeGreaterThanOrEqual(2)
    await expectMultipartUploadAborted()
  })

  it('a put whose source fails after two stored parts rejects with that error and aborts the multipart upload', async () => {
    const sourceError = new Error('client went away')
    const error = await fixture.store
      .put(
        gatedSource(randomBytes(2 * PART_SIZE + MIB), () => answeredParts() >= 2, sourceError),
        { maxBytes: 100 * MIB },
      )
      .catch((e: unknown) => e)
    expect(error).toBe(sourceError)
    expect(answeredParts()).toBeGreaterThanOrEqual(2)
    await expectMultipartUploadAborted()
  })

  it('a small put is a single PutObject under the prefix, with no multipart upload', async () => {
    const content = randomBytes(100_000)
    const { key } = await fixture.store.put(chunkedSource(content), { maxBytes: MIB })
    expect(sentNamed('PutObjectCommand').map((request) => [request.input.Key, request.status])).toEqual([[`${PREFIX}${key}`, 200]])
    expect(sentNamed('CreateMultipartUploadCommand')).toEqual([])
    expect(await bucketObjects()).toEqual([`${PREFIX}${key}`])
  })

  it('get passes the range on to GetObject, which answers 206 with only those bytes', async () => {
    const content = randomBytes(200_000)
    const { key } = await fixture.store.put(chunkedSource(content), { maxBytes: MIB })
    const bytes = await readAll(await fixture.store.get(key, { start: 1000, end: 1999 }))
    expect(bytes.equals(content.subarray(1000, 2000))).toBe(true)

    const gets = sentNamed('GetObjectCommand')
    expect(gets).toHaveLength(1)
    expect(gets[0]!.input.Range).toBe('bytes=1000-1999')
    expect(gets[0]!.status).toBe(206)
    expect(gets[0]!.headers!['content-length']).toBe('1000')
    expect(gets[0]!.headers!['content-range']).toBe(`bytes 1000-1999/${content.length}`)

    // Without a range, no Range goes out and the whole object comes back.
    await readAll(await fixture.store.get(key))
    expect(sentNamed('GetObjectCommand')[1]!.input.Range).toBeUndefined()
    expect(sentNamed('GetObjectCommand')[1]!.status).toBe(200)
  })

  it('lists an upload in progress by the time of its latest part, not of its start, and no more once it completes', async () => {
    const HOUR = 3_600_000
    const testStart = Date.now()
    // Another client, so that the recorder sees only the store's requests.
    const crasher = new S3Client({
      region: 'us-east-1',
      endpoint: fixture.s3.endpoint,
      forcePathStyle: true,
      credentials: S3RVER_CREDENTIALS,
    })
    onTestFinished(() => crasher.destroy())
    // Left by a crash two hours ago: started three hours ago, last part two hours ago.
    const crashed = await startMultipartUpload(crasher, `${PREFIX}${randomBytes(16).toString('hex')}`, randomBytes(1000))
    await fixture.s3.backdateMultipartUpload(crashed, new Date(testStart - 3 * HOUR), new Date(testStart - 2 * HOUR))
    // Not the store's: outside its prefix.
    await startMultipartUpload(crasher, `elsewhere/${randomBytes(16).toString('hex')}`, randomBytes(10))

    // A long upload, started (say) three hours ago, whose parts are still arriving.
    let release = false
    const putting = fixture.store.put(
      gatedSource(randomBytes(2 * PART_SIZE + 64 * 1024), () => answeredParts() >= 2 && release, randomBytes(MIB)),
      { maxBytes: 20 * MIB },
    )
    await until('two parts stored', () => answeredParts() >= 2)
    const inFlight = sentNamed('CreateMultipartUploadCommand').map((request) => request.output!.UploadId as string)
    expect(inFlight).toHaveLength(1)
    await fixture.s3.backdateMultipartUpload(inFlight[0]!, new Date(testStart - 3 * HOUR))

    const listed = await listUnfinished(fixture.store)
    expect(listed).toHaveLength(2)
    const [old, running] = listed as [UnfinishedWrite, UnfinishedWrite]
    expect(old).toMatchObject({ id: expect.stringContaining(crashed), size: 1000, lastWrittenAt: new Date(testStart - 2 * HOUR) })
    expect(running.id).toContain(inFlight[0])
    expect(running.size).toBe(2 * PART_SIZE)
    expect(running.lastWrittenAt.getTime()).toBeGreaterThanOrEqual(testStart - 1_000)

    release = true
    const stored = await putting
    expect(await listUnfinished(fixture.store)).toEqual([old])
    await fixture.store.removeUnfinishedWrite(old.id)
    expect(await listUnfinished(fixture.store)).toEqual([])
    expect(sentNamed('AbortMultipartUploadCommand').map((request) => [request.input.UploadId, request.status])).toEqual([[crashed, 204]])
    // The completed upload and the upload outside the prefix are untouched.
    expect(await listKeys(fixture.store)).toEqual([stored.key])
    expect(await fixture.s3.multipartUploadsInProgress()).toHaveLength(1)
  })

  it('list yields only blobs under its prefix, not other objects of the bucket', async () => {
    const { key } = await fixture.store.put(chunkedSource(Buffer.from('mine')), { maxBytes: 100 })
    const blobShaped = '0123456789abcdef0123456789abcdef'
    for (const other of [`elsewhere/${blobShaped}`, `${PREFIX}not-a-blob-key`, `${PREFIX}nested/${blobShaped}`]) {
      await fixture.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: other, Body: 'not a blob' }))
    }
    expect(await listKeys(fixture.store)).toEqual([key])
  })
})
