import { PassThrough } from 'node:stream'
import { finished } from 'node:stream/promises'
import { setImmediate as tick } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import type { StorageReservationsRepository } from '../../src/db/repositories/storage-reservations-repository.js'
import { UploadReservation } from '../../src/services/storage-quota.js'

/**
 * A client that goes away before the store starts reading must not crash the server: on Node 22 and
 * later, an 'error' nobody listens to ends the process (seen with a tus PATCH cut 100 KB in).
 */
describe('a metered upload whose client goes away before the store reads it', () => {
  it('raises no unhandled error, and the store that attaches later still sees the failure', async () => {
    const reservation = new UploadReservation({} as StorageReservationsRepository, 'r1', 1, null, Date.now, () => {})
    const source = new PassThrough()
    const metered = reservation.meter(source)
    source.destroy(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }))
    await tick()
    await tick()
    // The store attaches only now (after an await of its own).
    await expect(finished(metered)).rejects.toThrow('aborted')
    reservation.settle()
  })
})
