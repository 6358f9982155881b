import { randomBytes } from 'node:crypto'
import fs from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { FsBlobStore } from '../../src/storage/fs-blob-store.js'
import type { ResumableCommit } from '../../src/storage/resumable.js'
import { chunkedSource, listUnfinished, readAll } from '../helpers/blob-store-contract.js'
import { describeResumableStoreContract } from '../helpers/resumable-store-contract.js'
import { makeTempDir } from '../helpers/test-app.js'

const MIB = 1024 * 1024

async function namesIn(dir: string): Promise<string[]> {
  return fs.readdir(dir).catch(() => [])
}

describeResumableStoreContract('FsBlobStore', async () => {
  const root = await makeTempDir('fileshare-fs-resumable-')
  // Commits every MiB (64 MiB in production), so that the suite's few MiB cross several.
  const open = () => new FsBlobStore(root, { resumableCommitBytes: MIB }).init()
  return {
    store: await open(),
    reopen: open,
    commitInterval: MIB,
    residue: async () => [
      ...(await namesIn(path.join(root, 'resumable'))).map((name) => `resumable/${name}`),
      ...(await namesIn(path.join(root, 'tmp'))).map((name) => `tmp/${name}`),
    ],
    cleanup: () => fs.rm(root, { recursive: true, force: true }),
  }
})

describe('FsBlobStore resumable writes on disk', () => {
  let root: string
  let store: FsBlobStore

  beforeEach(async () => {
    root = await makeTempDir('fileshare-fs-resumable-')
    store = await new FsBlobStore(root, { resumableCommitBytes: MIB }).init()
  })
  afterEach(async () => {
    vi.restoreAllMocks()
    await fs.rm(root, { recursive: true, force: true })
  })

  const commitsTo = (commits: ResumableCommit[]) => async (commit: ResumableCommit) => {
    commits.push(commit)
  }

  it('appends to resumable/<key> (not tmp/, which gc sweeps) and completes by a rename, not a copy', async () => {
    const { key, state } = await store.createResumable()
    const uploadPath = path.join(root, 'resumable', key)
    expect((await fs.stat(uploadPath)).size).toBe(0)
    const content = randomBytes(3 * MIB + 5)
    const commits: ResumableCommit[] = []
    await store.append(state, 0, chunkedSource(content, 64 * 1024), { maxBytes: 10 * MIB, onCommit: commitsTo(commits) })
    // A commit once a MiB has come since the last (at the end of the chunk that completes it), and one at the end.
    const offsets = commits.map((commit) => commit.offset)
    expect(offsets.at(-1)).toBe(content.length)
    expect(offsets.length).toBeGreaterThanOrEqual(3)
    for (const [i, offset] of offsets.slice(0, -1).entries()) {
      const gap = offset - (i === 0 ? 0 : offsets[i - 1]!)
      expect(gap).toBeGreaterThanOrEqual(MIB)
      expect(gap).toBeLessThan(MIB + 256 * 1024)
    }
    expect(await namesIn(path.join(root, 'tmp'))).toEqual([])
    expect(await listUnfinished(store)).toEqual([])
    const { ino } = await fs.stat(uploadPath)

    await store.completeResumable(state)
    const finalPath = path.join(root, 'objects', key.slice(0, 2), key)
    expect((await fs.stat(finalPath)).ino).toBe(ino)
    expect(await namesIn(path.join(root, 'resumable'))).toEqual([])
    expect((await readAll(await store.get(key))).equals(content)).toBe(true)
  })

  it('fsyncs the file before each commit', async () => {
    const events: string[] = []
    const probe = await fs.open(path.join(root, 'probe'), 'w')
    const fileHandlePrototype = Object.getPrototypeOf(probe) as fs.FileHandle
    await probe.close()
    const sync = fileHandlePrototype.sync
    vi.spyOn(fileHandlePrototype, 'sync').mockImplementation(function (this: fs.FileHandle) {
      events.push('sync')
      return sync.call(this)
    })
    const { state } = await store.createResumable()
    events.length = 0
    await store.append(state, 0, chunkedSource(randomBytes(2 * MIB + 1), 64 * 1024), {
      maxBytes: 10 * MIB,
      onCommit: async (commit) => {
        events.push(`commit ${commit.offset}`)
      },
    })
    expect(events.length).toBeGreaterThanOrEqual(4)
    expect(events.at(-1)).toBe(`commit ${2 * MIB + 1}`)
    // Each commit right after an fsync.
    for (const [i, event] of events.entries()) expect(event).toMatch(i % 2 === 0 ? /^sync$/ : /^commit \d+$/)
  })

  it('cuts back bytes written past the committed offset before appending', async () => {
    const { key, state } = await store.createResumable()
    const head = randomBytes(1000)
    await store.append(state, 0, chunkedSource(head), { maxBytes: MIB, onCommit: async () => {} })
    // A crash between writing and committing left bytes nobody acknowledged.
    await fs.appendFile(path.join(root, 'resumable', key), randomBytes(5000))
    const tail = randomBytes(300)
    const commits: ResumableCommit[] = []
    await store.append(state, 1000, chunkedSource(tail), { maxBytes: MIB, onCommit: commitsTo(commits) })
    expect(commits).toEqual([{ offset: 1300, state }])
    await store.completeResumable(state)
    expect((await readAll(await store.get(key))).equals(Buffer.concat([head, tail]))).toBe(true)
  })

  it('refuses to append when the file holds fewer bytes than committed, and changes nothing', async () => {
    const { key, state } = await store.createResumable()
    await store.append(state, 0, chunkedSource(randomBytes(100)), { maxBytes: MIB, onCommit: async () => {} })
    const onCommit = vi.fn(async () => {})
    await expect(store.append(state, 200, chunkedSource(randomBytes(10)), { maxBytes: MIB, onCommit })).rejects.toThrow(/100 bytes/)
    expect(onCommit).not.toHaveBeenCalled()
    expect((await fs.stat(path.join(root, 'resumable', key))).size).toBe(100)
  })

  it('refuses states that are not keys, without touching any path', async () => {
    for (const state of ['', '../objects/x', `${'a'.repeat(32)}/..`, 'A'.repeat(32)]) {
      await expect(store.append(state, 0, chunkedSource(Buffer.from('x')), { maxBytes: 10, onCommit: async () => {} })).rejects.toThrow()
      await expect(store.completeResumable(state)).rejects.toThrow()
      await expect(store.abortResumable(state)).rejects.toThrow()
    }
  })

  it('a store opened on an existing root before resumable writes existed creates resumable/', async () => {
    await fs.rm(path.join(root, 'resumable'), { recursive: true })
    const reopened = await new FsBlobStore(root).init()
    const { key, state } = await reopened.createResumable()
    await reopened.completeResumable(state)
    expect((await readAll(await reopened.get(key))).length).toBe(0)
  })
})
