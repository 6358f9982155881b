import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { sanitizeFilename } from '../../src/lib/filename.js'

const utf8Bytes = (text: string) => Buffer.byteLength(text, 'utf8')
/** No lone surrogate: the text survives a UTF-8 round trip unchanged. */
const isWellFormed = (text: string) => Buffer.from(text, 'utf8').toString('utf8') === text

describe('sanitizeFilename', () => {
  it('keeps an ordinary name as it is', () => {
    expect(sanitizeFilename('report 2024 (final).pdf')).toBe('report 2024 (final).pdf')
    expect(sanitizeFilename('Überweisung €.txt')).toBe('Überweisung €.txt')
  })

  it('removes any path, with / or \\ as separator', () => {
    expect(sanitizeFilename('a/b/c.txt')).toBe('c.txt')
    expect(sanitizeFilename('/etc/passwd')).toBe('passwd')
    expect(sanitizeFilename('../../etc/passwd')).toBe('passwd')
    expect(sanitizeFilename('C:\\Users\\me\\evil.exe')).toBe('evil.exe')
    expect(sanitizeFilename('..\\..\\boot.ini')).toBe('boot.ini')
    expect(sanitizeFilename('mixed/path\\to/name.txt')).toBe('name.txt')
    expect(sanitizeFilename('mixed\\path/to\\name.txt')).toBe('name.txt')
  })

  it('drops control characters (C0, DEL, C1, line and paragraph separators)', () => {
    expect(sanitizeFilename('a\u0000b\u0009c\u000ad\u000de\u001bf\u007fg\u0085h\u009fi.txt')).toBe('abcdefghi.txt')
    expect(sanitizeFilename('evil\r\nX-Injected: 1.txt')).toBe('evilX-Injected: 1.txt')
    expect(sanitizeFilename('line\u2028para\u2029.txt')).toBe('linepara.txt')
  })

  it('drops the bidirectional formatting characters that disguise an extension, and keeps joiners', () => {
    expect(sanitizeFilename('invoice\u202efdp.exe')).toBe('invoicefdp.exe')
    const bidi = '\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069'
    expect(sanitizeFilename(`a${bidi}b.txt`)).toBe('ab.txt')
    // A family emoji is three people held together by zero-width joiners; Persian needs the non-joiner.
    expect(sanitizeFilename('\u{1f468}\u200d\u{1f469}\u200d\u{1f467}.png')).toBe('\u{1f468}\u200d\u{1f469}\u200d\u{1f467}.png')
    expect(sanitizeFilename('\u0645\u06cc\u200c\u062e\u0648\u0627\u0645.txt')).toBe('\u0645\u06cc\u200c\u062e\u0648\u0627\u0645.txt')
  })

  it('normalises to Unicode NFC', () => {
    const decomposed = 'Cafe\u0301 na\u0308ive.txt'
    const result = sanitizeFilename(decomposed)
    expect(result).toBe('Caf\u00e9 n\u00e4ive.txt')
    expect(result).toBe(result.normalize('NFC'))
  })

  it('is NFC even where a dropped control character separated a letter from its accent', () => {
    // Normalising before the control character goes would leave "e" + U+0301 uncomposed.
    expect(sanitizeFilename('e\u0000\u0301.txt')).toBe('\u00e9.txt')
  })

  it('keeps a name of exactly 255 bytes and cuts a longer one to 255 bytes', () => {
    expect(sanitizeFilename('a'.repeat(255))).toBe('a'.repeat(255))
    expect(sanitizeFilename('a'.repeat(256))).toBe('a'.repeat(255))
    expect(sanitizeFilename('b'.repeat(10_000))).toBe('b'.repeat(255))
  })

  it('cuts multi-byte names on a character boundary, never inside one', () => {
    // 2-byte é: 127 fit (254 bytes), the 128th would reach 256.
    expect(sanitizeFilename('é'.repeat(200))).toBe('é'.repeat(127))
    // 3-byte €: 85 fit exactly (255 bytes).
    expect(sanitizeFilename('€'.repeat(100))).toBe('€'.repeat(85))
    // 4-byte emoji (a surrogate pair in UTF-16): 63 fit (252 bytes); no half pair is left.
    const emoji = sanitizeFilename('😀'.repeat(100))
    expect(emoji).toBe('😀'.repeat(63))
    expect(isWellFormed(emoji)).toBe(true)
    // Mixed widths: 'a' (1) then 127 x 'é' (254) = 255 bytes.
    expect(sanitizeFilename('a' + 'é'.repeat(200))).toBe('a' + 'é'.repeat(127))
    expect(utf8Bytes(sanitizeFilename('ab' + '😀'.repeat(100)))).toBe(254)
  })

  it('measures the limit after the path is removed', () => {
    const name = 'x'.repeat(255)
    expect(sanitizeFilename(`${'d'.repeat(300)}/${name}`)).toBe(name)
  })

  it('gives "file" when nothing is left', () => {
    expect(sanitizeFilename('')).toBe('file')
    expect(sanitizeFilename(undefined)).toBe('file')
    expect(sanitizeFilename('some/dir/')).toBe('file')
    expect(sanitizeFilename('C:\\dir\\')).toBe('file')
    expect(sanitizeFilename('\u0000\u0001\u007f')).toBe('file')
    expect(sanitizeFilename('dir/\u0000')).toBe('file')
  })

  it('always yields a safe name, whatever the input', () => {
    const anyText = fc.oneof(
      fc.string({ unit: 'grapheme', maxLength: 400 }),
      fc.string({ unit: 'binary', maxLength: 400 }),
      fc
        .array(fc.constantFrom('a', '/', '\\', '\u0000', '\u0301', 'e', 'é', '€', '😀', '\u200d', '\u202e', '.', ' '), { maxLength: 400 })
        .map((chars) => chars.join('')),
    )
    fc.assert(
      fc.property(anyText, (raw) => {
        const name = sanitizeFilename(raw)
        expect(name.length).toBeGreaterThan(0)
        expect(utf8Bytes(name)).toBeLessThanOrEqual(255)
        expect(name).not.toMatch(/[/\\]/)
        expect(name).not.toMatch(/[\p{Cc}\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u)
        expect(name.normalize('NFC')).toBe(name)
        expect(isWellFormed(name)).toBe(true)
        // Sanitizing is idempotent: a stored name comes back unchanged.
        expect(sanitizeFilename(name)).toBe(name)
      }),
      { numRuns: 500 },
    )
  })
})
