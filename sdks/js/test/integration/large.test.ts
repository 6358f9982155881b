// A 1 GiB file from a path, with flat memory in this (the client's) process.
import { closeSync, openSync, ftruncateSync } from 'node:fs'
import { afterAll, describe, expect, it } from 'vitest'
import { client, tempDir } from '../helpers/env.js'

const GiB = 1024 ** 3
const MiB = 1024 ** 2
// sha256 of 1 GiB of zero bytes
const ZEROS_SHA256 = '49bc20df15e412a64472421e13fe86ff1c5165e18b2afccf160d4dc19fe68a14'
const tmp = tempDir()
afterAll(() => tmp.remove())

function sparseFile(path: string, size: number) {
  const fd = openSync(path, 'w')
  ftruncateSync(fd, size)
  closeSync(fd)
}

async function measure<T>(run: () => Promise<T>): Promise<{ result: T; growth: number }> {
  global.gc?.()
  const baseline = process.memoryUsage().rss
  let peak = baseline
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50)
  try {
    const result = await run()
    return { result, growth: peak - baseline }
  } finally {
    clearInterval(timer)
  }
}

describe('1 GiB from a path', () => {
  const path = tmp.file('one-gib.bin')
  sparseFile(path, GiB)
  const fs = client('pro')

  it.each([
    ['the one-request multipart upload', false],
    ['a resumable upload (the default at this size)', undefined],
  ] as const)(
    '%s keeps memory flat',
    async (_name, resumable) => {
      let last = 0
      const { result, growth } = await measure(() =>
        fs.files.upload(path, { ...(resumable === undefined ? {} : { resumable }), onProgress: (sent) => (last = sent) }),
      )
      expect(result).toMatchObject({ size: GiB, sha256: ZEROS_SHA256 })
      expect(last).toBe(GiB)
      console.log(`upload (resumable: ${String(resumable)}): RSS grew ${(growth / MiB).toFixed(1)} MiB`)
      expect(growth).toBeLessThan(200 * MiB)
      await fs.files.delete(result.file_id)
    },
    120_000,
  )
})
