import { randomBytes } from 'node:crypto'
import type { Readable } from 'node:stream'
import {
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  UploadPartCommand,
  type S3Client,
} from '@aws-sdk/client-s3'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { S3BlobStore } from '../../src/storage/s3-blob-store.js'
import type { ResumableCommit } from '../../src/storage/resumable.js'
import { chunkedSource, listUnfinished, readAll } from '../helpers/blob-store-contract.js'
import { describeResumableStoreContract, listLeftovers } from '../helpers/resumable-store-contract.js'
import { S3_MIN_PART_SIZE, s3Client, startStrictS3rver, type SentCommand, type StrictS3rver } from '../helpers/strict-s3rver.js'

const BUCKET = 'fileshare-blobs'
const PREFIX = 'blobs/'
const MIB = 1024 * 1024
const PART_SIZE = 5 * MIB
const BLOB_OBJECT = /^blobs\/[a-f0-9]{32}$/

async function bucketObjects(client: S3Client): Promise<string[]> {
  const page = await client.send(new ListObjectsV2Command({ Bucket: BUCKET }))
  return (page.Contents ?? []).map((object) => object.Key!).sort()
}

/** What the bucket holds besides blobs: multipart uploads in progress and other objects (tails). */
async function residueOf(s3: StrictS3rver, client: S3Client): Promise<string[]> {
  return [
    ...(await s3.multipartUploadsInProgress()).map((uploadId) => `multipart upload ${uploadId}`),
    ...(await bucketObjects(client)).filter((key) => !BLOB_OBJECT.test(key)),
  ]
}

describeResumableStoreContract('S3BlobStore on a strict s3rver', async () => {
  const s3 = await startStrictS3rver(BUCKET)
  const open = async () => new S3BlobStore(s3Client(s3.endpoint), { bucket: BUCKET, prefix: PREFIX, partSize: PART_SIZE, queueSize: 2 })
  const store = await open()
  const inspector = s3Client(s3.endpoint)
  return {
    store,
    reopen: open,
    commitInterval: PART_SIZE,
    residue: () => residueOf(s3, inspector),
    async cleanup() {
      inspector.destroy()
      await store.close()
      await s3.close()
      // S3 would have refused these: a part under 5 MiB before the last, a wrong ETag, a wrong order.
      expect(s3.refusedCompletions).toEqual([])
    },
  }
})

describe('the strict s3rver refuses completions that S3 refuses', () => {
  let s3: StrictS3rver
  let client: S3Client
  beforeEach(async () => {
    s3 = await startStrictS3rver(BUCKET)
    client = s3Client(s3.endpoint)
  })
  afterEach(async () => {
    client.destroy()
    await s3.close()
  })

  async function uploadWithParts(sizes: number[]): Promise<{ key: string; uploadId: string; etags: string[] }> {
    const key = `${PREFIX}${randomBytes(16).toString('hex')}`
    const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: key }))
    const etags: string[] = []
    for (const [i, size] of sizes.entries()) {
      const { ETag } = await client.send(
        new UploadPartCommand({ Bucket: BUCKET, Key: key, UploadId, PartNumber: i + 1, Body: randomBytes(size) }),
      )
      etags.push(ETag!)
    }
    return { key, uploadId: UploadId!, etags }
  }

  const inOrder = (etags: string[]) => etags.map((etag, i): [number, string] => [i + 1, etag])
  const complete = (key: string, uploadId: string, parts: Array<[number, string]>) =>
    client.send(
      new CompleteMultipartUploadCommand({
        Bucket: BUCKET,
        Key: key,
        UploadId: uploadId,
        MultipartUpload: { Parts: parts.map(([PartNumber, ETag]) => ({ PartNumber, ETag })) },
      }),
    )

  it('a part under 5 MiB before the last: EntityTooSmall', async () => {
    const { key, uploadId, etags } = await uploadWithParts([1000, 1000])
    await expect(complete(key, uploadId, inOrder(etags))).rejects.toMatchObject({ name: 'EntityTooSmall' })
    expect(s3.refusedCompletions).toEqual(['EntityTooSmall'])
    expect(await s3.multipartUploadsInProgress()).toEqual([uploadId])
  })

  it('a wrong ETag: InvalidPart; parts out of order: InvalidPartOrder; an unknown upload: NoSuchUpload', async () => {
    const { key, uploadId, etags } = await uploadWithParts([S3_MIN_PART_SIZE, 10])
    await expect(
      complete(key, uploadId, [
        [1, etags[0]!],
        [2, '"0123456789abcdef0123456789abcdef"'],
      ]),
    ).rejects.toMatchObject({ name: 'InvalidPart' })
    await expect(
      complete(key, uploadId, [
        [2, etags[1]!],
        [1, etags[0]!],
      ]),
    ).rejects.toMatchObject({ name: 'InvalidPartOrder' })
    await expect(complete(key, 'no-such-upload', [[1, etags[0]!]])).rejects.toMatchObject({ name: 'NoSuchUpload' })
    expect(s3.refusedCompletions).toEqual(['InvalidPart', 'InvalidPartOrder', 'NoSuchUpload'])
  })

  it('5 MiB parts and a small last one complete, as on S3', async () => {
    const { key, uploadId, etags } = await uploadWithParts([S3_MIN_PART_SIZE, 10])
    await complete(key, uploadId, inOrder(etags))
    const head = await client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: key }))
    expect(head.ContentLength).toBe(S3_MIN_PART_SIZE + 10)
    expect(s3.refusedCompletions).toEqual([])
  })
})

describe('S3BlobStore resumable writes on a strict s3rver', () => {
  let s3: StrictS3rver
  let sent: SentCommand[]
  let store: S3BlobStore
  let inspector: S3Client
  const sentNamed = (name: string) => sent.filter((request) => request.name === name)

  beforeEach(async () => {
    s3 = await startStrictS3rver(BUCKET)
    sent = []
    store = new S3BlobStore(s3Client(s3.endpoint, sent), { bucket: BUCKET, prefix: PREFIX, partSize: PART_SIZE, queueSize: 2 })
    inspector = s3Client(s3.endpoint)
  })
  afterEach(async () => {
    inspector.destroy()
    await store.close()
    await s3.close()
    expect(s3.refusedCompletions).toEqual([])
  })

  it('one multipart upload on the final key: parts of 5 MiB or more, tails under resumable/, no copy at the end', async () => {
    const sizes = [MIB, MIB, 4 * MIB, 6 * MIB, 10]
    const pieces = sizes.map((size) => randomBytes(size))
    const { key, state } = await store.createResumable()
    let commit: ResumableCommit = { offset: 0, state }
    for (const piece of pieces) {
      commit = await store.append(commit.state, commit.offset, chunkedSource(piece, 64 * 1024), {
        maxBytes: 100 * MIB,
        onCommit: async () => {},
      })
    }
    await store.completeResumable(commit.state)
    expect((await readAll(await store.get(key))).equals(Buffer.concat(pieces))).toBe(true)

    expect(sentNamed('CreateMultipartUploadCommand').map((request) => request.input.Key)).toEqual([`${PREFIX}${key}`])
    const partSizes = sentNamed('UploadPartCommand').map((request) => request.input.ContentLength as number)
    // 1 + 1 + 4 MiB fill a 5 MiB part, 1 MiB + 6 MiB another, 2 MiB + 10 bytes are the last.
    expect(partSizes).toEqual([PART_SIZE, PART_SIZE, 2 * MIB + 10])
    const completions = sentNamed('CompleteMultipartUploadCommand')
    expect(completions.map((request) => request.status)).toEqual([200])
    const listed = (completions[0]!.input.MultipartUpload as { Parts: Array<{ PartNumber: number }> }).Parts
    expect(listed.map((part) => part.PartNumber)).toEqual([1, 2, 3])
    const tails = sentNamed('PutObjectCommand').map((request) => request.input.Key as string)
    // After each append: 1 MiB, 2 MiB, 1 MiB, 2 MiB, then 2 MiB + 10 bytes.
    expect(tails).toHaveLength(sizes.length)
    for (const tail of tails) expect(tail).toMatch(new RegExp(`^${PREFIX}resumable/${key}/[0-9]+-[a-f0-9]{16}$`))
    expect(sentNamed('CopyObjectCommand')).toEqual([])
    expect(sentNamed('UploadPartCopyCommand')).toEqual([])
    expect(await residueOf(s3, inspector)).toEqual([])
  })

  it('a completion carried out whose answer was lost, retried with its tail still there: the blob, not a 503', async () => {
    const content = randomBytes(1000)
    const { key, state } = await store.createResumable()
    const commit = await store.append(state, 0, chunkedSource(content), { maxBytes: MIB, onCommit: async () => {} })
    const [tail] = await listLeftovers(store)
    const tailKey = `${PREFIX}resumable/${tail!.id}`
    const { Body } = await inspector.send(new GetObjectCommand({ Bucket: BUCKET, Key: tailKey }))
    const tailBytes = await readAll(Body as Readable)
    await store.completeResumable(commit.state)
    // The first completion's CompleteMultipartUpload was carried out, but its answer (and its removal
    // of the tail) never came: the retry finds the tail and sends it as a part into the completed upload.
    await inspector.send(new PutObjectCommand({ Bucket: BUCKET, Key: tailKey, Body: tailBytes }))
    await expect(store.completeResumable(commit.state)).resolves.toEqual({ key, size: content.length })
    expect((await readAll(await store.get(key))).equals(content)).toBe(true)
  })

  it('deletes a tail only after the commit that replaces it is recorded', async () => {
    const { state } = await store.createResumable()
    const first = await store.append(state, 0, chunkedSource(randomBytes(1000)), { maxBytes: MIB, onCommit: async () => {} })
    const [oldTail] = (await listLeftovers(store)).map((leftover) => leftover.id)
    expect(oldTail).toBeDefined()
    const seenAtCommit: string[][] = []
    await store.append(first.state, first.offset, chunkedSource(randomBytes(2000)), {
      maxBytes: MIB,
      onCommit: async () => {
        seenAtCommit.push((await listLeftovers(store)).map((leftover) => leftover.id))
      },
    })
    expect(seenAtCommit).toHaveLength(1)
    // While the caller records the new commit, the old tail (which the recorded state names) is still there.
    expect(seenAtCommit[0]).toContain(oldTail)
    expect(seenAtCommit[0]).toHaveLength(2)
    const after = await listLeftovers(store)
    expect(after.map((leftover) => leftover.size)).toEqual([3000])
    expect(after[0]!.id).not.toBe(oldTail)
  })

  it('a commit that fails keeps the old tail and the new one (it may have been recorded); abort removes both', async () => {
    const { state } = await store.createResumable()
    const first = await store.append(state, 0, chunkedSource(randomBytes(1000)), { maxBytes: MIB, onCommit: async () => {} })
    const before = await listLeftovers(store)
    const failure = new Error('database gone')
    await expect(
      store.append(first.state, first.offset, chunkedSource(randomBytes(2000)), {
        maxBytes: MIB,
        onCommit: async () => {
          throw failure
        },
      }),
    ).rejects.toBe(failure)
    const after = await listLeftovers(store)
    expect(after).toHaveLength(before.length + 1)
    expect(after).toEqual(expect.arrayContaining(before))
    await store.abortResumable(first.state)
    expect(await listLeftovers(store)).toEqual([])
  })

  it('an open resumable upload is an unfinished write (gc must skip open uploads), and no more once completed', async () => {
    const { key, state } = await store.createResumable()
    const commit = await store.append(state, 0, chunkedSource(randomBytes(PART_SIZE + 10)), {
      maxBytes: 10 * MIB,
      onCommit: async () => {},
    })
    const unfinished = await listUnfinished(store)
    expect(unfinished).toHaveLength(1)
    expect(unfinished[0]!.id).toContain(key)
    await store.completeResumable(commit.state)
    expect(await listUnfinished(store)).toEqual([])
  })

  it('abort leaves no multipart upload and no tail, and a zero-length upload completes without parts', async () => {
    const { state } = await store.createResumable()
    const commit = await store.append(state, 0, chunkedSource(randomBytes(PART_SIZE + 10)), {
      maxBytes: 10 * MIB,
      onCommit: async () => {},
    })
    expect(await residueOf(s3, inspector)).toHaveLength(2)
    await store.abortResumable(commit.state)
    expect(await s3.multipartUploadsInProgress()).toEqual([])
    expect(await bucketObjects(inspector)).toEqual([])

    const empty = await store.createResumable()
    await store.completeResumable(empty.state)
    expect(await bucketObjects(inspector)).toEqual([`${PREFIX}${empty.key}`])
    expect(await s3.multipartUploadsInProgress()).toEqual([])
  })

  describe('a stalled writer that wakes up after another took over from the same commit', () => {
    const MAX = 100 * MIB
    /** B appends and commits; then A, stalled since before B began, uploads its part from the same state and fails to commit (fenced). */
    async function race(reservePartNumber?: () => Promise<number>) {
      const { key, state } = await store.createResumable()
      const content = randomBytes(PART_SIZE + 100)
      const taken = await store.append(state, 0, chunkedSource(content), { maxBytes: MAX, reservePartNumber, onCommit: async () => {} })
      const fenced = new Error('the lease was lost')
      await expect(
        store.append(state, 0, chunkedSource(randomBytes(PART_SIZE + 50)), {
          maxBytes: MAX,
          reservePartNumber,
          onCommit: async () => {
            throw fenced
          },
        }),
      ).rejects.toBe(fenced)
      return { key, content, taken }
    }

    it('with reserved part numbers, cannot spoil the parts the other one committed', async () => {
      let counter = 0
      const reservePartNumber = async () => ++counter
      const { key, content, taken } = await race(reservePartNumber)
      await store.completeResumable(taken.state, { reservePartNumber })
      expect((await readAll(await store.get(key))).equals(content)).toBe(true)
      const completion = sentNamed('CompleteMultipartUploadCommand')[0]!
      // Part 2 was the stalled writer's: never listed.
      expect((completion.input.MultipartUpload as { Parts: Array<{ PartNumber: number }> }).Parts.map((part) => part.PartNumber)).toEqual([
        1, 3,
      ])
    })

    it('without them, overwrites a committed part, which S3 then refuses at completion (InvalidPart)', async () => {
      const { taken } = await race()
      await expect(store.completeResumable(taken.state)).rejects.toMatchObject({ name: 'InvalidPart' })
      expect(s3.refusedCompletions).toEqual(['InvalidPart'])
      s3.refusedCompletions.length = 0
    })

    it('a reserved number not above the committed parts is refused', async () => {
      const { state } = await store.createResumable()
      const first = await store.append(state, 0, chunkedSource(randomBytes(PART_SIZE)), {
        maxBytes: MAX,
        reservePartNumber: async () => 4,
        onCommit: async () => {},
      })
      await expect(
        store.append(first.state, first.offset, chunkedSource(randomBytes(PART_SIZE)), {
          maxBytes: MAX,
          reservePartNumber: async () => 4,
          onCommit: async () => {},
        }),
      ).rejects.toThrow(/not above/)
    })
  })

  it('refuses a state that is not its own', async () => {
    for (const state of ['', 'abc', '{"v":2}', JSON.stringify({ v: 1, key: '../x', uploadId: 'u', parts: [], tail: null, next: 1 })]) {
      await expect(store.append(state, 0, chunkedSource(Buffer.from('x')), { maxBytes: 10, onCommit: async () => {} })).rejects.toThrow(
        /Not a resumable upload/,
      )
      await expect(store.completeResumable(state)).rejects.toThrow(/Not a resumable upload/)
      await expect(store.abortResumable(state)).rejects.toThrow(/Not a resumable upload/)
    }
  })
})
