import { createHash } from 'node:crypto'
import type { FastifyRequest } from 'fastify'
import { describe, expect, it } from 'vitest'
import { AppError } from '../../src/errors.js'
import { creationLength, parseChecksum, parseMetadata } from '../../src/http/tus-headers.js'

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64')

/** The error `run` throws: an AppError with this status and code. */
function refusal(run: () => unknown, code: string, status = 400): AppError {
  let thrown: unknown
  try {
    run()
  } catch (error) {
    thrown = error
  }
  expect(thrown).toBeInstanceOf(AppError)
  expect(thrown).toMatchObject({ status, code })
  return thrown as AppError
}

describe('parseMetadata (Upload-Metadata)', () => {
  it('no header, an empty one or only spaces: no pairs', () => {
    expect(parseMetadata(undefined)).toEqual(new Map())
    expect(parseMetadata('')).toEqual(new Map())
    expect(parseMetadata('   ')).toEqual(new Map())
  })

  it('decodes comma-separated `key base64` pairs, with spaces around the commas', () => {
    const metadata = parseMetadata(`filename ${b64('report.pdf')},filetype ${b64('application/pdf')} , note ${b64('a, b')}`)
    expect([...metadata]).toEqual([
      ['filename', 'report.pdf'],
      ['filetype', 'application/pdf'],
      ['note', 'a, b'],
    ])
  })

  it('a key without a value is an empty value', () => {
    expect([...parseMetadata(`is_confidential,filename ${b64('x')}`)]).toEqual([
      ['is_confidential', ''],
      ['filename', 'x'],
    ])
  })

  it('values are UTF-8; base64 without padding is taken', () => {
    expect(parseMetadata(`filename ${b64('Grüße 日本 🎉.txt')}`).get('filename')).toBe('Grüße 日本 🎉.txt')
    expect(parseMetadata('filename YWI').get('filename')).toBe('ab')
  })

  it('refuses a key named twice', () => {
    const error = refusal(() => parseMetadata(`filename ${b64('a')},filename ${b64('b')}`), 'invalid_request')
    expect(error.message).toContain('filename')
  })

  it.each([
    ['a value that is not base64', 'filename not*base64'],
    ['a base64 value of impossible length', 'filename abcde'],
    ['a third token in a pair', `filename ${b64('a')} extra`],
    ['two spaces between key and value', `filename  ${b64('a')}`],
    ['an empty pair', `filename ${b64('a')},,filetype ${b64('b')}`],
    ['a trailing comma', `filename ${b64('a')},`],
    ['a leading comma', `,filename ${b64('a')}`],
    ['padding in the middle', 'filename YQ==YQ=='],
  ])('refuses %s', (_case, raw) => {
    refusal(() => parseMetadata(raw), 'invalid_request')
  })
})

describe('parseChecksum (Upload-Checksum)', () => {
  const data = Buffer.from('chunk')

  it('no header: no checksum', () => {
    expect(parseChecksum(undefined)).toBeUndefined()
  })

  it.each(['sha1', 'sha256'])('%s with a base64 digest', (algorithm) => {
    const digest = createHash(algorithm).update(data).digest()
    expect(parseChecksum(`${algorithm} ${digest.toString('base64')}`)).toEqual({ algorithm, digest })
    expect(parseChecksum(`  ${algorithm} ${digest.toString('base64')}  `)).toEqual({ algorithm, digest })
  })

  it('a digest of the wrong length is taken here and simply never matches (460 later)', () => {
    expect(parseChecksum('sha1 YQ==')).toEqual({ algorithm: 'sha1', digest: Buffer.from('a') })
  })

  it.each([
    ['md5', `md5 ${createHash('md5').update(data).digest('base64')}`],
    ['crc32', 'crc32 AAAAAA=='],
    ['an upper-case name', `SHA1 ${createHash('sha1').update(data).digest('base64')}`],
    ['no algorithm', ''],
  ])('refuses an algorithm not offered: %s, naming the ones that are', (_case, raw) => {
    const error = refusal(() => parseChecksum(raw), 'invalid_request')
    expect(error.message).toContain('sha1 or sha256')
  })

  it.each([
    ['no digest', 'sha1'],
    ['an empty digest', 'sha1 '],
    ['a digest that is not base64', 'sha256 not*base64!'],
    ['two spaces before the digest', 'sha1  YQ=='],
    ['a third token', `sha1 ${createHash('sha1').update(data).digest('base64')} extra`],
  ])('refuses %s', (_case, raw) => {
    refusal(() => parseChecksum(raw), 'invalid_request')
  })
})

describe('creationLength (Upload-Length or Upload-Defer-Length on POST)', () => {
  const request = (headers: Record<string, string | string[]>) => ({ headers }) as unknown as FastifyRequest

  it('Upload-Length: that length, zero included', () => {
    expect(creationLength(request({ 'upload-length': '1048576' }))).toBe(1048576)
    expect(creationLength(request({ 'upload-length': '0' }))).toBe(0)
    expect(creationLength(request({ 'upload-length': String(Number.MAX_SAFE_INTEGER) }))).toBe(Number.MAX_SAFE_INTEGER)
  })

  it('Upload-Defer-Length: 1: no length yet', () => {
    expect(creationLength(request({ 'upload-defer-length': '1' }))).toBeUndefined()
  })

  it('needs exactly one of them', () => {
    refusal(() => creationLength(request({})), 'invalid_request')
    refusal(() => creationLength(request({ 'upload-length': '5', 'upload-defer-length': '1' })), 'invalid_request')
  })

  it.each(['0', 'true', '2', ''])('Upload-Defer-Length %j is refused: only 1 is defined', (value) => {
    refusal(() => creationLength(request({ 'upload-defer-length': value })), 'invalid_request')
  })

  it.each(['-1', '1.5', '01', '+1', '1e3', '0x10', '', 'ten', '5, 5'])(
    'Upload-Length %j is refused: plain decimal digits only',
    (value) => {
      refusal(() => creationLength(request({ 'upload-length': value })), 'invalid_parameter')
    },
  )

  it('digits past 2^53 - 1 are a length above any limit (Infinity), refused later as too large', () => {
    expect(creationLength(request({ 'upload-length': '9007199254740991' }))).toBe(9007199254740991)
    expect(creationLength(request({ 'upload-length': '9007199254740992' }))).toBe(Number.POSITIVE_INFINITY)
    expect(creationLength(request({ 'upload-length': '1'.repeat(400) }))).toBe(Number.POSITIVE_INFINITY)
  })

  it('a repeated Upload-Length is refused, even when both say the same', () => {
    refusal(() => creationLength(request({ 'upload-length': ['5', '5'] })), 'invalid_parameter')
  })
})
