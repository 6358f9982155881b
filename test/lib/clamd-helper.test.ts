import { randomBytes } from 'node:crypto'
import net from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CLAMD_AVAILABLE, command, EICAR, EICAR_SIGNATURE, instream, startClamd, type TestClamd } from '../helpers/clamd.js'

/**
 * The test clamd of test/helpers/clamd.ts answers as the virus-scanning tests expect: checked here
 * over a raw socket with the INSTREAM protocol, independently of the helper's own client.
 */

const LIMIT = 256 * 1024

/** INSTREAM over a raw socket: `zINSTREAM\0`, each chunk as a 4-byte big-endian length and its bytes, then what `end` says. */
function rawInstream(port: number, chunks: Buffer[], end: Buffer = Buffer.alloc(4)): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.write('zINSTREAM\0')
      for (const chunk of chunks) {
        const length = Buffer.alloc(4)
        length.writeUInt32BE(chunk.length)
        socket.write(Buffer.concat([length, chunk]))
      }
      socket.write(end)
    })
    const received: Buffer[] = []
    socket.on('data', (data: Buffer) => received.push(data))
    socket.on('error', reject)
    socket.on('close', () => resolve(Buffer.concat(received)))
  })
}

/** A 4-byte big-endian chunk length announcing `bytes` bytes that are not sent. */
function announce(bytes: number): Buffer {
  const length = Buffer.alloc(4)
  length.writeUInt32BE(bytes)
  return length
}

describe.skipIf(!CLAMD_AVAILABLE)('the test clamd (test/helpers/clamd.ts)', () => {
  const hashed = randomBytes(1000)
  let clamd: TestClamd

  beforeAll(async () => {
    clamd = await startClamd({ streamMaxLength: LIMIT, infectedContents: [hashed] })
  })
  afterAll(async () => {
    await clamd?.close()
  })

  it('detects EICAR by its body signature, even split across chunks and inside other bytes', async () => {
    expect(clamd.url).toBe(`tcp://127.0.0.1:${clamd.port}`)
    const found = Buffer.from(`stream: ${EICAR_SIGNATURE} FOUND\0`)
    expect(await rawInstream(clamd.port, [Buffer.from(EICAR)])).toEqual(found)
    expect(await rawInstream(clamd.port, [Buffer.from(`head ${EICAR.slice(0, 30)}`), Buffer.from(`${EICAR.slice(30)} tail`)])).toEqual(
      found,
    )
    expect(clamd.signatureOf(EICAR)).toBe('Fileshare.Test.EICAR.UNOFFICIAL')
  })

  it('detects the extra contents by their hash signatures, and only them', async () => {
    expect(clamd.hashSignatures).toEqual(['Fileshare.Test.Hash1.UNOFFICIAL'])
    expect(clamd.signatureOf(hashed)).toBe('Fileshare.Test.Hash1.UNOFFICIAL')
    expect((await rawInstream(clamd.port, [hashed.subarray(0, 100), hashed.subarray(100)])).toString()).toBe(
      'stream: Fileshare.Test.Hash1.UNOFFICIAL FOUND\0',
    )
    // One byte more is another file.
    const other = Buffer.concat([hashed, Buffer.from('x')])
    expect(clamd.signatureOf(other)).toBeUndefined()
    expect((await rawInstream(clamd.port, [other])).toString()).toBe('stream: OK\0')
  })

  it('answers OK for clean bytes and for an empty stream, up to StreamMaxLength exactly', async () => {
    expect((await rawInstream(clamd.port, [randomBytes(10_000)])).toString()).toBe('stream: OK\0')
    expect((await rawInstream(clamd.port, [])).toString()).toBe('stream: OK\0')
    const quarter = LIMIT / 4
    expect(
      (
        await rawInstream(
          clamd.port,
          [0, 1, 2, 3].map(() => randomBytes(quarter)),
        )
      ).toString(),
    ).toBe('stream: OK\0')
  })

  it('refuses a stream over StreamMaxLength', async () => {
    // clamd checks each chunk's announced length before reading it, answers and closes: announcing
    // without sending gets the answer every time (sending more races with the reset, see the helper).
    const limit = Buffer.from('INSTREAM size limit exceeded. ERROR\0')
    expect(await rawInstream(clamd.port, [randomBytes(LIMIT)], announce(1))).toEqual(limit)
    expect(await rawInstream(clamd.port, [], announce(LIMIT + 1))).toEqual(limit)
    // The helper's client, which stops sending once clamd answered.
    expect(await instream(clamd.port, randomBytes(LIMIT + 1))).toBe('INSTREAM size limit exceeded. ERROR')
    expect(await instream(clamd.port, Buffer.from(EICAR))).toBe(`stream: ${EICAR_SIGNATURE} FOUND`)
  })

  it('answers other commands', async () => {
    expect(await command(clamd.port, 'PING')).toBe('PONG')
    expect(await command(clamd.port, 'VERSION')).toMatch(/^ClamAV \d+\.\d+/)
    expect(await command(clamd.port, 'NO-SUCH-COMMAND')).toBe('UNKNOWN COMMAND')
  })

  it('stops (connections refused) and starts again on the same port', async () => {
    const { port } = clamd
    await clamd.stop()
    expect(clamd.child()).toBeUndefined()
    await expect(command(port, 'PING', 1_000)).rejects.toThrow(/ECONNREFUSED/)
    await clamd.start()
    expect(clamd.port).toBe(port)
    expect(await command(port, 'PING')).toBe('PONG')
    expect((await rawInstream(port, [Buffer.from(EICAR)])).toString()).toBe(`stream: ${EICAR_SIGNATURE} FOUND\0`)
  })
})
