// The CLI's pure parts: argument scanning, formatting, file names, the exit-code table.
import { describe, expect, it } from 'vitest'
import {
  durationOption,
  findCommand,
  findCommandAt,
  parseCommandLine,
  parseDuration,
  parseSize,
  sizeOption,
  timeOption,
} from '../../src/cli/args.js'
import { dispositionFileName, safeFileName } from '../../src/cli/commands/get.js'
import { EXIT_CODES, exitCodeFor, UsageError } from '../../src/cli/exit-codes.js'
import { formatBytes, formatDuration, printable, scrub } from '../../src/cli/output.js'
import { SpeedMeter } from '../../src/cli/progress.js'
import * as sdk from '../../src/index.js'

describe('fshare internals', () => {
  it('finds the command after global options and their values', () => {
    expect(findCommand(['--api-key', 'ls', 'upload', 'a'])).toBe('upload')
    expect(findCommand(['--json', '--base-url', 'http://x/api/v1', 'ls'])).toBe('ls')
    expect(findCommand(['--', 'get', '-o'])).toBe('get')
    expect(findCommand(['--json'])).toBeUndefined()
    expect(parseCommandLine(['--json', 'rm', '1', '2'], 'rm', {}).positionals).toEqual(['1', '2'])
    expect(() => parseCommandLine(['ls', '--nope'], 'ls', {})).toThrow(UsageError)
  })

  it('finds a group command, and takes both its words off the positionals', () => {
    expect(findCommandAt(['--json', 'link', 'create', '12'])).toEqual({ name: 'link', index: 1 })
    expect(findCommandAt(['--json', 'link', '--base-url', 'http://x/api/v1', 'create', '12'], 2)).toEqual({ name: 'create', index: 4 })
    expect(findCommandAt(['link', '--json'], 1)).toBeUndefined()
    const parsed = parseCommandLine(['link', '--json', 'create', '12', '--label', 'x y'], 'link create', {
      label: { type: 'string', description: '' },
    })
    expect(parsed.positionals).toEqual(['12'])
    expect(parsed.values).toMatchObject({ json: true, label: 'x y' })
  })

  it('parses durations: plain seconds, one unit, several units', () => {
    expect(['30s', '15m', '12h', '7d', '2w', '3600', '1h30m', '1d12h', ' 7D ', '0'].map(parseDuration)).toEqual([
      30, 900, 43_200, 604_800, 1_209_600, 3600, 5400, 129_600, 604_800, 0,
    ])
    for (const bad of ['', 'd', '7 d', '1.5h', '-5', '7y', 'h1', '1h 30m', '10x']) expect(parseDuration(bad)).toBeUndefined()
  })

  it('--expires-in: from 1 second to 10 years, else a usage error that says the forms', () => {
    expect(durationOption(undefined, 'expires-in')).toBeUndefined()
    expect(durationOption('7d', 'expires-in')).toBe(604_800)
    expect(durationOption('315360000', 'expires-in')).toBe(315_360_000)
    expect(durationOption('3650d', 'expires-in')).toBe(315_360_000)
    for (const bad of ['0', '0s', '3651d', 'soon', '1.5h']) {
      expect(() => durationOption(bad, 'expires-in')).toThrow(UsageError)
    }
    expect(() => durationOption('soon', 'expires-in')).toThrow(/--expires-in must be a duration .* \(30s, 15m, 12h, 7d, 2w\), got "soon"/)
  })

  it('formats sizes and durations', () => {
    expect([0, 512, 1024, 1536, 2097155, 5 * 1024 ** 3].map(formatBytes)).toEqual([
      '0 B',
      '512 B',
      '1.0 KiB',
      '1.5 KiB',
      '2.0 MiB',
      '5.0 GiB',
    ])
    expect(formatBytes(300 * 1024)).toBe('300 KiB')
    expect([undefined, Infinity, 3.2, 59, 65, 3725].map((s) => formatDuration(s))).toEqual(['--', '--', '4s', '59s', '1m05s', '1h02m'])
    expect(formatDuration(3.24, true)).toBe('3.2s')
  })

  it('keeps server-chosen names harmless', () => {
    expect(printable('a\u001b[31mb\n')).toBe('a\\x1b[31mb\\x0a')
    expect(safeFileName('../../etc/passwd', 'x')).toBe('passwd')
    expect(safeFileName('C:\\dir\\evil.txt', 'x')).toBe('evil.txt')
    expect(safeFileName('..', 'fallback')).toBe('fallback')
    expect(safeFileName('a\u0007b', 'x')).toBe('a_b')
    expect(dispositionFileName(`attachment; filename="r_sum_.pdf"; filename*=UTF-8''r%C3%A9sum%C3%A9.pdf`)).toBe('résumé.pdf')
    expect(dispositionFileName('attachment; filename="a \\"b\\".txt"')).toBe('a "b".txt')
    expect(dispositionFileName(null)).toBeUndefined()
  })

  it('redacts secrets', () => {
    expect(scrub('key fsk_abcdefgh and fsk_abcdefgh', ['fsk_abcdefgh'])).toBe('key [redacted] and [redacted]')
    expect(scrub('short', ['ab'])).toBe('short')
  })

  it('gives every SDK error class its own exit code, as the table says', () => {
    const classes = [
      'AuthenticationError',
      'PermissionDeniedError',
      'LimitExceededError',
      'NotFoundError',
      'BadRequestError',
      'RateLimitError',
      'ServerError',
      'APIConnectionError',
      'IntegrityError',
      'ConfigurationError',
    ] as const
    const codes = classes.map((name) => exitCodeFor(new sdk[name]('x')))
    expect(new Set(codes).size).toBe(classes.length)
    for (const [i, name] of classes.entries()) expect(EXIT_CODES.find((e) => e.name === name)?.code).toBe(codes[i])
    expect(exitCodeFor(new sdk.FileshareError('x'))).toBe(1)
    expect(exitCodeFor(new Error('x'))).toBe(1)
    expect(exitCodeFor(new UsageError('x'))).toBe(2)
  })

  it('measures speed over a sliding window', () => {
    let now = 0
    const meter = new SpeedMeter(() => now)
    expect(meter.speed()).toBeUndefined()
    meter.add(1_000_000) // a resumed download starts at 1 MB: not speed
    now = 1000
    meter.add(3_000_000)
    expect(meter.speed()).toBe(2_000_000)
    now = 20_000
    meter.add(3_100_000)
    expect(meter.speed()).toBeCloseTo(100_000 / 19, 0)
  })
})

describe('fshare request options', () => {
  it('parses sizes: plain bytes, binary units in any case, with or without iB', () => {
    expect(['1048576', '1', '500K', '500k', '10M', '10MiB', '2G', '2gib', '1T', '1.5K', '7B', ' 3 M '].map(parseSize)).toEqual([
      1_048_576,
      1,
      512_000,
      512_000,
      10_485_760,
      10_485_760,
      2 * 1024 ** 3,
      2 * 1024 ** 3,
      1024 ** 4,
      1536,
      7,
      3_145_728,
    ])
    for (const bad of ['', 'M', '1.5', '-1', '10X', '1e6', '10 MB s', '1,000']) expect(parseSize(bad)).toBeUndefined()
  })

  it('--max-file-size: at least 1 byte, else a usage error that says the forms', () => {
    expect(sizeOption(undefined, 'max-file-size')).toBeUndefined()
    expect(sizeOption('20M', 'max-file-size')).toBe(20 * 1024 ** 2)
    for (const bad of ['0', '0K', 'big', '0.0001K']) expect(() => sizeOption(bad, 'max-file-size')).toThrow(UsageError)
    expect(() => sizeOption('big', 'max-total-size')).toThrow(/--max-total-size must be a size of at least 1 byte: .*got "big"/)
  })

  it('--expires-at: a UTC date or time, as a Date', () => {
    expect(timeOption(undefined, 'expires-at')).toBeUndefined()
    expect(timeOption('2026-12-04', 'expires-at')!.toISOString()).toBe('2026-12-04T00:00:00.000Z')
    expect(timeOption('2026-12-04 10:00:00', 'expires-at')!.toISOString()).toBe('2026-12-04T10:00:00.000Z')
    expect(timeOption('2026-12-04T10:30:05Z', 'expires-at')!.toISOString()).toBe('2026-12-04T10:30:05.000Z')
    expect(timeOption('2026-12-04T10:30', 'expires-at')!.toISOString()).toBe('2026-12-04T10:30:00.000Z')
    for (const bad of ['tomorrow', '2026-02-31', '2026-13-01', '2026-12-04 24:00:00', '2026-12-04 10:60:00', '2026-12-04T10:00:00+02:00']) {
      expect(() => timeOption(bad, 'expires-at')).toThrow(UsageError)
    }
    expect(() => timeOption('soon', 'expires-at')).toThrow(/--expires-at must be a UTC date or time .*got "soon"/)
  })
})
