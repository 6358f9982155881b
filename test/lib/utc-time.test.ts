import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { formatUtcTime } from '../../src/lib/utc-time.js'

/** The formula formatUtcTime replaced: it must write the same text for every time. */
const reference = (epochMs: number) => new Date(epochMs).toISOString().slice(0, 19).replace('T', ' ')

describe('formatUtcTime', () => {
  it('writes what toISOString writes, to the second, across days, leap days and the edges of its fast path', () => {
    const samples = [
      0,
      999,
      1000,
      59_999,
      86_399_999,
      86_400_000,
      Date.UTC(2024, 1, 29, 23, 59, 59, 999),
      Date.UTC(2024, 2, 1),
      Date.UTC(2026, 10, 24, 9, 5, 7),
      253_402_300_799_999,
      253_402_300_800_000,
      -1,
      -86_400_001,
    ]
    for (const epochMs of samples) expect(formatUtcTime(epochMs)).toBe(reference(epochMs))
  })

  it('agrees with toISOString on any time, in any order (the day it keeps must never leak into another)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: -62_198_755_200_000, max: 300_000_000_000_000 }), { minLength: 1, maxLength: 20 }),
        (times) => {
          for (const epochMs of times) expect(formatUtcTime(epochMs)).toBe(reference(epochMs))
        },
      ),
    )
  })
})
