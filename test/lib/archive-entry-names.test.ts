import { describe, expect, it } from 'vitest'
import { archiveEntryName, uniqueEntryNames } from '../../src/lib/archive-entry-names.js'

describe('archiveEntryName', () => {
  it('keeps a plain name as it is', () => {
    expect(archiveEntryName('Résumé 2026.pdf')).toBe('Résumé 2026.pdf')
  })

  it('leaves no path, no parent, no drive and no control character', () => {
    expect(archiveEntryName('../../etc/passwd')).toBe('passwd')
    expect(archiveEntryName('C:\\Windows\\evil.dll')).toBe('evil.dll')
    expect(archiveEntryName('..')).toBe('__')
    expect(archiveEntryName('.')).toBe('_')
    expect(archiveEntryName('C:evil.bat')).toBe('C_evil.bat')
    expect(archiveEntryName('a\u0000b\nc\u202Ed.txt')).toBe('abcd.txt')
    expect(archiveEntryName('')).toBe('file')
    // Dots inside a name are a name: only the whole `.` and `..` mean a place.
    expect(archiveEntryName('...')).toBe('...')
    expect(archiveEntryName('.bashrc')).toBe('.bashrc')
  })
})

describe('uniqueEntryNames', () => {
  it('suffixes later duplicates before the extension, without regard to case, in order', () => {
    expect(uniqueEntryNames(['a.txt', 'b.txt', 'a.txt', 'A.TXT', 'a.txt'])).toEqual([
      'a.txt',
      'b.txt',
      'a (2).txt',
      'A (3).TXT',
      'a (4).txt',
    ])
  })

  it('puts the suffix at the end of a name without an extension, and of a dotfile', () => {
    expect(uniqueEntryNames(['notes', 'notes', '.env', '.env', 'archive.tar.gz', 'archive.tar.gz'])).toEqual([
      'notes',
      'notes (2)',
      '.env',
      '.env (2)',
      'archive.tar.gz',
      'archive.tar (2).gz',
    ])
  })

  it('never takes a name that a later file brings itself', () => {
    expect(uniqueEntryNames(['a.txt', 'a.txt', 'a (2).txt'])).toEqual(['a.txt', 'a (3).txt', 'a (2).txt'])
    expect(uniqueEntryNames(['a (2).txt', 'a (2).txt'])).toEqual(['a (2).txt', 'a (2) (2).txt'])
  })

  it('compares the names as they will be written (made safe first)', () => {
    expect(uniqueEntryNames(['x/a.txt', 'y/a.txt', '..', '__'])).toEqual(['a.txt', 'a (2).txt', '__', '__ (2)'])
  })

  it('keeps a suffixed name within 255 bytes of UTF-8: the stem is cut on a character boundary, the extension kept', () => {
    const bytes = (name: string) => Buffer.byteLength(name, 'utf8')
    const long = `${'a'.repeat(251)}.pdf` // 255 bytes, the most a name may have
    const [first, second, third] = uniqueEntryNames([long, long, long])
    expect(first).toBe(long)
    expect(second).toBe(`${'a'.repeat(247)} (2).pdf`)
    expect(third).toBe(`${'a'.repeat(247)} (3).pdf`)
    expect(bytes(second!)).toBe(255)

    // Multi-byte characters (é is 2 bytes, 😀 is 4): the cut never splits one, and the result is
    // still well-formed UTF-8 that decodes to the same text.
    for (const char of ['é', '😀', '中']) {
      const size = bytes(char)
      const name = `${char.repeat(Math.floor(250 / size))}.txt`
      const names = uniqueEntryNames([name, name, ...Array.from({ length: 10 }, () => name)])
      for (const suffixed of names.slice(1)) {
        expect(bytes(suffixed), suffixed).toBeLessThanOrEqual(255)
        expect(suffixed).toMatch(/ \(\d+\)\.txt$/)
        expect(Buffer.from(suffixed, 'utf8').toString('utf8')).toBe(suffixed)
        expect(suffixed.startsWith(char)).toBe(true)
      }
      expect(new Set(names.map((one) => one.toLowerCase())).size).toBe(names.length)
    }

    // A name without an extension, and one whose "extension" is nearly all of it: the name is cut.
    const plain = 'b'.repeat(255)
    expect(uniqueEntryNames([plain, plain])[1]).toBe(`${'b'.repeat(251)} (2)`)
    const dotted = `x.${'c'.repeat(253)}`
    const second2 = uniqueEntryNames([dotted, dotted])[1]!
    expect(bytes(second2)).toBe(255)
    expect(second2).toBe(`${dotted.slice(0, 251)} (2)`)
    // Past (9), the suffix is longer: still within 255 bytes.
    const many = uniqueEntryNames(Array.from({ length: 12 }, () => long))
    expect(many[11]).toBe(`${'a'.repeat(246)} (12).pdf`)
    expect(many.every((one) => bytes(one) <= 255)).toBe(true)
  })
})
