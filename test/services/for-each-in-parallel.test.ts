import { setTimeout as sleep } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import { forEachInParallel } from '../../src/services/blob-verifier.js'

describe('forEachInParallel', () => {
  it('runs every item, at most `parallel` at once', async () => {
    let running = 0
    let most = 0
    const done: number[] = []
    await forEachInParallel([1, 2, 3, 4, 5, 6, 7], 3, async (item) => {
      most = Math.max(most, ++running)
      await sleep(2)
      running--
      done.push(item)
    })
    expect(done.sort()).toEqual([1, 2, 3, 4, 5, 6, 7])
    expect(most).toBe(3)
  })

  it('after a failure starts nothing new, and throws only once the items under way have ended', async () => {
    const ended: number[] = []
    const started: number[] = []
    const run = forEachInParallel([1, 2, 3, 4, 5, 6], 3, async (item) => {
      started.push(item)
      if (item === 1) throw new Error('item 1 failed')
      await sleep(20)
      ended.push(item)
    })
    await expect(run).rejects.toThrow('item 1 failed')
    // Items 2 and 3 were under way when 1 failed: both ended before the failure came out.
    expect(ended.sort()).toEqual([2, 3])
    expect(started.sort()).toEqual([1, 2, 3])
  })
})
