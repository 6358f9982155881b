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
})
