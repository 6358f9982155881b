import { createHash, randomBytes } from 'node:crypto'
import { Readable } from 'node:stream'
import { finished } from 'node:stream/promises'
import { setTimeout as sleep } from 'node:timers/promises'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { BlobNotFoundError, FileTooLargeError } from '../../src/errors.js'
import { sha256Hex } from '../../src/lib/sha256-hex.js'
import type { BlobStore } from '../../src/storage/blob-store.js'
import type { AppendOptions, ResumableBlobStore, ResumableCommit, ResumableLeftover } from '../../src/storage/resumable.js'
import { chunkedSource, failingSource, listKeys, listUnfinished, readAll } from './blob-store-contract.js'

export type ResumableStore = BlobStore & ResumableBlobStore

/**
 * A full garbage collection after which process.memoryUsage().arrayBuffers counts only what is still
 * reachable. `gc` is that of --expose-gc, had without starting the worker with the flag: a context
 * created while it is set gets `gc` (what Jest's leak detector does). It runs twice: V8 frees the
 * memory of dead ArrayBuffers on a background thread after a GC, and under load much of it was still
 * counted when gc() returned (35 of 48 MiB once); the next full GC first completes that sweep.
 */
function fullGc(): () => void {
  let gc = (globalThis as { gc?: () => void }).gc
  if (typeof gc !== 'function') {
    setFlagsFromString('--expose-gc')
    try {
      gc = runInNewContext('gc') as () => void
    } finally {
      setFlagsFromString('--no-expose-gc')
    }
  }
  const collect = gc
  return () => {
    collect()
    collect()
  }
}

export interface ResumableStoreFixture {
  store: ResumableStore
  /**
   * Another instance of the store on the same bytes, as a restarted process (or another instance of
   * the service) opens it. The suite closes it.
   */
  reopen(): Promise<ResumableStore>
  /**
   * Everything the store keeps besides its blobs (upload files, tail objects, multipart uploads in
   * progress), as names: empty once every resumable write was completed or aborted.
   */
  residue(): Promise<string[]>
  /**
   * How far apart an append's commit points are (before its end): at most this many bytes, plus
   * the chunk that crosses it.
   */
  commitInterval: number
  cleanup(): Promise<void>
}

const KIB = 1024
const MIB = 1024 * KIB

/** The upload as the caller (the service) keeps it: the last commit it recorded. */
interface Upload {
  key: string
  commit: ResumableCommit
  /** Every commit recorded, in order. */
  commits: ResumableCommit[]
}

export async function listLeftovers(store: ResumableBlobStore): Promise<ResumableLeftover[]> {
  const leftovers: ResumableLeftover[] = []
  for await (const leftover of store.listResumableLeftovers()) leftovers.push(leftover)
  return leftovers.sort((a, b) => (a.id < b.id ? -1 : 1))
}

/** A source that hands over `content` in 64 KiB chunks, then never ends nor fails: a process that froze. */
function hangingSource(content: Buffer): Readable {
  let offset = 0
  return new Readable({
    read() {
      if (offset >= content.length) return // nothing more, ever
      this.push(content.subarray(offset, offset + 64 * KIB))
      offset += 64 * KIB
    },
  })
}

/**
 * The behaviour every ResumableBlobStore must show. `makeStore` must give each test an empty store
 * of its own, and `cleanup` must remove it.
 */
export function describeResumableStoreContract(name: string, makeStore: () => Promise<ResumableStoreFixture>): void {
  describe(`ResumableBlobStore contract: ${name}`, () => {
    let fixture: ResumableStoreFixture
    let store: ResumableStore
    const reopened: ResumableStore[] = []

    beforeEach(async () => {
      fixture = await makeStore()
      store = fixture.store
    })
    afterEach(async () => {
      for (const other of reopened.splice(0)) await other.close()
      await fixture.cleanup()
    })

    async function create(on: ResumableStore = store): Promise<Upload> {
      const { key, state } = await on.createResumable()
      const commit = { offset: 0, state }
      return { key, commit, commits: [] }
    }

    /** Appends `source` at the upload's last commit, recording each commit as the service would. */
    async function append(
      upload: Upload,
      source: Readable,
      options: Partial<AppendOptions> = {},
      on: ResumableStore = store,
    ): Promise<ResumableCommit> {
      return on.append(upload.commit.state, upload.commit.offset, source, {
        maxBytes: options.maxBytes ?? 1024 * MIB,
        partialCommits: options.partialCommits,
        onData: options.onData,
        onCommit:
          options.onCommit ??
          (async (commit) => {
            upload.commit = commit
            upload.commits.push(commit)
          }),
      })
    }

    async function blobBytes(key: string, on: ResumableStore = store): Promise<Buffer> {
      return readAll(await on.get(key))
    }

    /** Completes the upload, then checks that its blob holds exactly `content` and that nothing else is left. */
    async function expectCompletesTo(upload: Upload, content: Buffer, on: ResumableStore = store): Promise<void> {
      expect(await on.completeResumable(upload.commit.state)).toEqual({ key: upload.key, size: content.length })
      const stored = await blobBytes(upload.key, on)
      expect(stored.length).toBe(content.length)
      expect(sha256Hex(stored)).toBe(sha256Hex(content))
      expect(await fixture.residue()).toEqual([])
    }

    it('assembles appends of many sizes into the exact file, with the SHA-256 a resumed hash gives', async () => {
      const sizes = [1, 100 * KIB, 5 * MIB - 1, 5 * MIB + 1, 12 * MIB, 1, 3 * MIB]
      const pieces = sizes.map((size) => randomBytes(size))
      const content = Buffer.concat(pieces)
      const upload = await create()
      let kept = createHash('sha256')
      for (const [i, piece] of pieces.entries()) {
        // Alternately as a network delivers it (16 KiB chunks) and as one large chunk.
        const source = i % 2 === 0 ? chunkedSource(piece) : Readable.from([piece])
        const hash = kept.copy()
        hash.update(piece)
        const before = upload.commit.offset
        const result = await append(upload, source)
        expect(result).toEqual(upload.commit)
        expect(result.offset).toBe(before + piece.length)
        kept = hash.copy()
      }
      // Commits only ever move forward.
      const offsets = upload.commits.map((commit) => commit.offset)
      expect(offsets).toEqual([...offsets].sort((a, b) => a - b))
      expect(new Set(offsets).size).toBe(offsets.length)

      expect(await store.completeResumable(upload.commit.state)).toEqual({ key: upload.key, size: content.length })
      const stored = await blobBytes(upload.key)
      expect(stored.length).toBe(content.length)
      expect(sha256Hex(stored)).toBe(sha256Hex(content))
      expect(kept.digest('hex')).toBe(sha256Hex(content))
      expect(stored.equals(content)).toBe(true)
      // Ranges work on it as on any blob.
      const range = { start: 5 * MIB - 10, end: 5 * MIB + 9 }
      expect((await readAll(await store.get(upload.key, range))).equals(content.subarray(range.start, range.end + 1))).toBe(true)
      expect(await listKeys(store)).toEqual([upload.key])
      expect(await fixture.residue()).toEqual([])
      expect(await listUnfinished(store)).toEqual([])
    })

    it('a single append of more than two parts, then completion', async () => {
      const content = randomBytes(13 * MIB + 123)
      const upload = await create()
      await append(upload, chunkedSource(content, 256 * KIB))
      expect(upload.commit.offset).toBe(content.length)
      await expectCompletesTo(upload, content)
    })

    it('onData sees exactly the committed bytes at each commit, also at commits inside a chunk', async () => {
      const content = randomBytes(13 * MIB + 7)
      const upload = await create()
      let hash = createHash('sha256')
      let kept = hash.copy()
      const checked: number[] = []
      // One large chunk first (commits fall inside it), then network-sized ones, then a cut.
      const appends: Array<[Readable, number]> = [
        [Readable.from([content.subarray(0, 12 * MIB)]), 12 * MIB],
        [chunkedSource(content.subarray(12 * MIB, 13 * MIB), 10_000), 13 * MIB],
        [failingSource(content.subarray(13 * MIB), new Error('cut')), content.length],
      ]
      for (const [source, end] of appends) {
        await append(upload, source, {
          onData: (chunk) => hash.update(chunk),
          onCommit: async (commit) => {
            // What the service does (UploadHashes): keep a copy of the hash at the committed offset.
            kept = hash.copy()
            expect(kept.copy().digest('hex')).toBe(sha256Hex(content.subarray(0, commit.offset)))
            checked.push(commit.offset)
            upload.commit = commit
          },
        }).catch((error: unknown) => {
          if ((error as Error).message !== 'cut') throw error
        })
        expect(upload.commit.offset).toBe(end)
        // The next request starts from the kept copy, as the service's would (not from `hash`, which ran on past a cut).
        hash = kept.copy()
      }
      expect(checked.length).toBeGreaterThanOrEqual(appends.length)
      expect(hash.digest('hex')).toBe(sha256Hex(content))
      await expectCompletesTo(upload, content)
    })

    it('completes a zero-length upload into an empty blob; an empty append commits nothing', async () => {
      const upload = await create()
      const result = await append(upload, chunkedSource(Buffer.alloc(0)))
      expect(result).toEqual({ offset: 0, state: upload.commit.state })
      expect(upload.commits).toEqual([])
      await expectCompletesTo(upload, Buffer.alloc(0))
      expect(await listKeys(store)).toEqual([upload.key])
    })

    it('an empty append after some bytes changes nothing', async () => {
      const content = randomBytes(3000)
      const upload = await create()
      await append(upload, chunkedSource(content))
      const commits = upload.commits.length
      expect(await append(upload, Readable.from([]))).toEqual(upload.commit)
      expect(upload.commits.length).toBe(commits)
      await expectCompletesTo(upload, content)
    })

    it('a cut keeps the bytes received before it; the append from that commit completes the exact file', async () => {
      const content = randomBytes(13 * MIB)
      const cutAt = 7 * MIB + 5
      const upload = await create()
      await append(upload, chunkedSource(content.subarray(0, 100)))
      const cut = new Error('client went away')
      await expect(append(upload, failingSource(content.subarray(100, cutAt), cut))).rejects.toBe(cut)
      expect(upload.commit.offset).toBe(cutAt)
      await append(upload, chunkedSource(content.subarray(upload.commit.offset), 64 * KIB))
      await expectCompletesTo(upload, content)
    })

    it('without partial commits, a cut keeps nothing of that append and the upload goes on from before it', async () => {
      const content = randomBytes(7 * MIB)
      const upload = await create()
      await append(upload, chunkedSource(content.subarray(0, 1000)))
      const before = upload.commit
      const cut = new Error('client went away')
      await expect(
        append(upload, failingSource(randomBytes(6 * MIB), cut), { partialCommits: false }), // other bytes: must not survive
      ).rejects.toBe(cut)
      expect(upload.commit).toEqual(before)
      await append(upload, chunkedSource(content.subarray(1000)), { partialCommits: false })
      expect(upload.commits.at(-1)!.offset).toBe(content.length)
      await expectCompletesTo(upload, content)
    })

    it('without partial commits, a commit refused by the caller (a checksum mismatch) leaves the upload as it was', async () => {
      const content = randomBytes(6 * MIB)
      const upload = await create()
      await append(upload, chunkedSource(content.subarray(0, 2 * MIB)))
      const before = upload.commit
      const mismatch = new Error('checksum mismatch')
      const refused = append(upload, chunkedSource(randomBytes(5 * MIB + 7)), {
        partialCommits: false,
        onCommit: async () => {
          throw mismatch
        },
      })
      await expect(refused).rejects.toBe(mismatch)
      expect(upload.commit).toEqual(before)
      await append(upload, chunkedSource(content.subarray(2 * MIB)))
      await expectCompletesTo(upload, content)
    })

    it('a commit recorded whose answer was lost (it throws after recording): the next append goes on from what it recorded', async () => {
      const content = randomBytes(6 * MIB + 11)
      const upload = await create()
      await append(upload, chunkedSource(content.subarray(0, 2 * MIB)))
      const lost = new Error('the database stopped answering after it applied the commit')
      const answerLost = append(upload, chunkedSource(content.subarray(2 * MIB, 3 * MIB + 5)), {
        onCommit: async (commit) => {
          upload.commit = commit
          throw lost
        },
      })
      await expect(answerLost).rejects.toBe(lost)
      expect(upload.commit.offset).toBe(3 * MIB + 5)
      await append(upload, chunkedSource(content.subarray(upload.commit.offset), 64 * KIB))
      await expectCompletesTo(upload, content)
    })

    it('maxBytes counts the whole upload: exactly maxBytes is accepted, the first byte over is refused', async () => {
      const upload = await create()
      await append(upload, chunkedSource(randomBytes(5000)), { maxBytes: 10_000 })
      const error = await append(upload, chunkedSource(randomBytes(5001), 1000), { maxBytes: 10_000 }).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(FileTooLargeError)
      expect((error as FileTooLargeError).maxBytes).toBe(10_000)
      // What was committed before is intact, and nothing of the refused append is.
      expect(upload.commit.offset).toBe(5000)
      const rest = randomBytes(5000)
      await append(upload, chunkedSource(rest, 1000), { maxBytes: 10_000 })
      expect(upload.commit.offset).toBe(10_000)
      await expect(append(upload, chunkedSource(Buffer.from('x')), { maxBytes: 10_000 })).rejects.toBeInstanceOf(FileTooLargeError)
      const { size } = await store.completeResumable(upload.commit.state)
      expect(size).toBe(10_000)
      expect((await blobBytes(upload.key)).subarray(5000).equals(rest)).toBe(true)
    })

    it('a refused append drains its source instead of destroying it, so the connection can carry the reply', async () => {
      const upload = await create()
      const source = chunkedSource(randomBytes(64 * KIB), 1000)
      await expect(append(upload, source, { maxBytes: 10_000 })).rejects.toBeInstanceOf(FileTooLargeError)
      // It ends as a source read to its end does (finished() would reject on a destroyed one).
      await finished(source)
      expect(source.readableEnded).toBe(true)
      expect(source.errored).toBeNull()
    })

    it('maxBytes stops a large append at the first byte over, with the earlier commits intact', async () => {
      const content = randomBytes(12 * MIB)
      const upload = await create()
      const error = await append(upload, chunkedSource(content, 64 * KIB), { maxBytes: 11 * MIB }).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(FileTooLargeError)
      expect(upload.commit.offset).toBeLessThanOrEqual(11 * MIB)
      // The upload goes on from its last commit (as with a declared length that was passed).
      await append(upload, chunkedSource(content.subarray(upload.commit.offset, 11 * MIB)), { maxBytes: 11 * MIB })
      await expectCompletesTo(upload, content.subarray(0, 11 * MIB))
    })

    it('commits along a long append, then resumes from the last commit after a crash, with other bytes past it', async () => {
      const total = Math.max(3 * fixture.commitInterval, 12 * MIB)
      const first = randomBytes(total)
      const upload = await create()
      // The process freezes for good in the second commit: whatever it wrote is past the first one.
      let calls = 0
      let endFrozen: (error: Error) => void = () => {}
      const crashed = store.append(upload.commit.state, 0, hangingSource(first), {
        maxBytes: 1024 * MIB,
        onCommit: async (commit) => {
          calls++
          if (calls >= 2) return new Promise<void>((_, reject) => (endFrozen = reject))
          upload.commit = commit
          upload.commits.push(commit)
        },
      })
      void crashed.catch(() => {})
      try {
        const deadline = Date.now() + 20_000
        while (calls < 2) {
          if (Date.now() > deadline) throw new Error('the second commit never came')
          await sleep(10)
        }
        expect(upload.commits).toHaveLength(1)
        const committed = upload.commit.offset
        expect(committed).toBeGreaterThan(0)
        expect(committed).toBeLessThan(2 * fixture.commitInterval)

        // Another process takes over from the recorded commit, with other bytes than the frozen one's
        // and fewer than it wrote: nothing it wrote past the commit may survive.
        const other = await fixture.reopen()
        reopened.push(other)
        const content = Buffer.concat([first.subarray(0, committed), randomBytes(1000)])
        await append(upload, chunkedSource(content.subarray(committed)), {}, other)
        expect(upload.commit.offset).toBe(content.length)
        await expectCompletesTo(upload, content, other)
      } finally {
        // The frozen append ends at last, its commit refused, so it writes nothing more and lets go
        // of what it holds (the folder store's FileHandle, which GC would otherwise close with a warning).
        endFrozen(new Error('the frozen process is gone'))
        if (calls >= 2) await crashed.catch(() => {})
      }
    })

    it('an append from an offset the store never committed is refused', async () => {
      const upload = await create()
      await append(upload, chunkedSource(randomBytes(1000)))
      await expect(
        store.append(upload.commit.state, 2000, chunkedSource(Buffer.from('x')), { maxBytes: MIB, onCommit: async () => {} }),
      ).rejects.toThrow()
      await store.completeResumable(upload.commit.state)
      expect((await blobBytes(upload.key)).length).toBe(1000)
    })

    it('completion is idempotent, also from another instance; the blob is then like any other', async () => {
      const content = randomBytes(6 * MIB + 17)
      const upload = await create()
      await append(upload, chunkedSource(content.subarray(0, 5 * MIB + 1)))
      await append(upload, chunkedSource(content.subarray(5 * MIB + 1)))
      const done = { key: upload.key, size: content.length }
      expect(await store.completeResumable(upload.commit.state)).toEqual(done)
      expect(await store.completeResumable(upload.commit.state)).toEqual(done)
      const other = await fixture.reopen()
      reopened.push(other)
      expect(await other.completeResumable(upload.commit.state)).toEqual(done)
      expect((await blobBytes(upload.key)).equals(content)).toBe(true)
      expect(await listKeys(store)).toEqual([upload.key])
      expect(await fixture.residue()).toEqual([])
      await store.delete(upload.key)
      await expect(store.get(upload.key)).rejects.toBeInstanceOf(BlobNotFoundError)
    })

    it('abort removes every byte, before and after appends; aborting twice is fine', async () => {
      const empty = await create()
      const small = await create()
      await append(small, chunkedSource(randomBytes(1000)))
      const large = await create()
      await append(large, chunkedSource(randomBytes(11 * MIB)))
      await append(large, chunkedSource(randomBytes(1000)))
      expect((await fixture.residue()).length).toBeGreaterThan(0)
      for (const upload of [empty, small, large]) {
        await store.abortResumable(upload.commit.state)
        await store.abortResumable(upload.commit.state)
      }
      expect(await fixture.residue()).toEqual([])
      expect(await listKeys(store)).toEqual([])
      expect(await listLeftovers(store)).toEqual([])
      expect(await listUnfinished(store)).toEqual([])
      await expect(store.get(large.key)).rejects.toBeInstanceOf(BlobNotFoundError)
    })

    it('an aborted empty upload does not complete', async () => {
      const upload = await create()
      await store.abortResumable(upload.commit.state)
      await expect(store.completeResumable(upload.commit.state)).rejects.toBeInstanceOf(BlobNotFoundError)
      expect(await listKeys(store)).toEqual([])
      expect(await fixture.residue()).toEqual([])
    })

    it('an aborted upload takes no more bytes and does not complete', async () => {
      const upload = await create()
      await append(upload, chunkedSource(randomBytes(1000)))
      await store.abortResumable(upload.commit.state)
      await expect(append(upload, chunkedSource(randomBytes(6 * MIB)))).rejects.toThrow()
      await expect(store.completeResumable(upload.commit.state)).rejects.toBeInstanceOf(BlobNotFoundError)
      expect(await listKeys(store)).toEqual([])
      expect(await fixture.residue()).toEqual([])
    })

    it('lists the leftovers of open uploads with their keys; removing them leaves the rest alone', async () => {
      const blob = await store.put(chunkedSource(Buffer.from('a blob')), { maxBytes: 100 })
      const before = Date.now()
      const first = await create()
      await append(first, chunkedSource(randomBytes(1000)))
      const second = await create()
      await append(second, chunkedSource(randomBytes(3000)))
      const after = Date.now()

      const leftovers = await listLeftovers(store)
      expect(leftovers.map((leftover) => [leftover.key, leftover.size]).sort()).toEqual(
        [
          [first.key, 1000],
          [second.key, 3000],
        ].sort(),
      )
      for (const leftover of leftovers) {
        expect(leftover.lastWrittenAt.getTime()).toBeGreaterThanOrEqual(before - 1_000)
        expect(leftover.lastWrittenAt.getTime()).toBeLessThanOrEqual(after + 1_000)
      }
      // Leftovers are not blobs.
      expect(await listKeys(store)).toEqual([blob.key])

      const firstLeftover = leftovers.find((leftover) => leftover.key === first.key)!
      await store.removeResumableLeftover(firstLeftover.id)
      expect((await listLeftovers(store)).map((leftover) => leftover.key)).toEqual([second.key])
      for (const id of [firstLeftover.id, '', 'nonsense', '../../etc/passwd', blob.key, `${second.key}/../x`]) {
        await expect(store.removeResumableLeftover(id)).resolves.toBeUndefined()
      }
      expect((await listLeftovers(store)).map((leftover) => leftover.key)).toEqual([second.key])
      // The other upload is intact and completes.
      await store.completeResumable(second.commit.state)
      expect((await blobBytes(second.key)).length).toBe(3000)
      expect(await listLeftovers(store)).toEqual([])
      expect((await blobBytes(blob.key)).toString()).toBe('a blob')
    })

    it('uploads running side by side do not interfere', async () => {
      const contents = [randomBytes(6 * MIB), randomBytes(300 * KIB), randomBytes(5 * MIB)]
      const uploads = await Promise.all(contents.map(() => create()))
      await Promise.all(
        uploads.map(async (upload, i) => {
          const content = contents[i]!
          const half = Math.floor(content.length / 2)
          await append(upload, chunkedSource(content.subarray(0, half), 32 * KIB))
          await append(upload, chunkedSource(content.subarray(half), 32 * KIB))
          await store.completeResumable(upload.commit.state)
        }),
      )
      for (const [i, upload] of uploads.entries()) expect((await blobBytes(upload.key)).equals(contents[i]!)).toBe(true)
      expect(await fixture.residue()).toEqual([])
    })

    it('keeps memory flat: a 128 MiB append in 64 KiB chunks holds at most a few part buffers', async () => {
      const block = randomBytes(64 * KIB)
      const total = 128 * MIB
      async function* generate() {
        for (let sent = 0; sent < total; sent += block.length) yield block
      }
      const upload = await create()
      // What counts is what the store holds on to, not the garbage the stream leaves behind it: the
      // sockets of the S3 client and of s3rver (in this process) allocate a new buffer for each read,
      // and V8 frees dead ones when it gets to them. On Node 20 a GC for external memory pressure
      // came before some 40 MiB of them piled up; on Node 24 it is left to incremental marking, and
      // about 64 MiB pile up first, whatever the store does (with a full GC before every sample, the
      // peak on Node 24 was 7 MiB: the 5 MiB part buffer and little else). So a sample over the limit is taken again after a full GC: only
      // memory still reachable then fails the test. (Samples under it count as they are: they can
      // only overstate what is held.)
      const limit = 48 * MIB
      const collectGarbage = fullGc()
      collectGarbage()
      const baseline = process.memoryUsage().arrayBuffers
      let peak = baseline
      const sampler = setInterval(() => {
        let now = process.memoryUsage().arrayBuffers
        if (now - baseline >= limit) {
          collectGarbage()
          now = process.memoryUsage().arrayBuffers
          // Still over after a GC: the test has failed, and more GCs would only slow it.
          if (now - baseline >= limit) clearInterval(sampler)
        }
        peak = Math.max(peak, now)
      }, 5)
      try {
        await append(upload, Readable.from(generate(), { objectMode: false }))
      } finally {
        clearInterval(sampler)
      }
      expect(upload.commit.offset).toBe(total)
      // A part buffer or two, plus what the HTTP and S3 layers hold (s3rver runs in this process and
      // holds the parts it is still writing, more of them when the machine is busy): far from the
      // 128 MiB streamed, and not growing with it.
      expect(peak - baseline).toBeLessThan(limit)
      await store.abortResumable(upload.commit.state)
    })
  })
}
