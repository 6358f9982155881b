import { sanitizeFilename } from './filename.js'

/**
 * A stored file name made safe as the name of a ZIP entry: no path, no control or bidi characters
 * (sanitizeFilename, as for an upload: a name renamed or stored before a rule changed gets it
 * again), and none that an unzip program would read as a place rather than a name: `.` and `..`
 * (the folder itself, its parent) and a leading drive letter (`C:name` is relative to drive C on
 * Windows). The ZIP format knows only `/` as a separator, and no name keeps one.
 */
export function archiveEntryName(stored: string): string {
  const name = sanitizeFilename(stored)
  if (name === '.' || name === '..') return name.replace(/\./g, '_')
  return name.replace(/^([A-Za-z]):/, '$1_')
}

/** The longest name most file systems take (ext4, APFS, NTFS count 255 bytes or UTF-16 units; bytes is the stricter). */
const MAX_NAME_BYTES = 255

/** The longest start of `text` within `maxBytes` bytes of UTF-8, cut between code points (never inside a character). */
function cutToBytes(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text, 'utf8') <= maxBytes) return text
  let cut = ''
  let bytes = 0
  for (const char of text) {
    const size = Buffer.byteLength(char, 'utf8')
    if (bytes + size > maxBytes) break
    cut += char
    bytes += size
  }
  return cut
}

/**
 * `report.pdf` -> `report (2).pdf`; a name without an extension, or a dotfile, takes the suffix at
 * its end. The result stays within 255 bytes of UTF-8, as the name did (sanitizeFilename cuts it
 * there): the stem is cut to make room for the suffix, so the extension survives; an extension so
 * long that no character of the stem would be left is not kept apart, and the name is cut instead.
 */
function withSuffix(name: string, n: number): string {
  const suffix = ` (${n})`
  const dot = name.lastIndexOf('.')
  if (dot > 0) {
    const extension = name.slice(dot)
    const stem = cutToBytes(name.slice(0, dot), MAX_NAME_BYTES - Buffer.byteLength(suffix + extension, 'utf8'))
    if (stem !== '') return `${stem}${suffix}${extension}`
  }
  return `${cutToBytes(name, MAX_NAME_BYTES - suffix.length)}${suffix}`
}

/**
 * Names for the entries of one archive, in the order given: the first file with a name keeps it,
 * each later one gets the first free ` (n)` suffix from 2 on, before its extension. Names are
 * compared without regard to case, because Windows and macOS unpack `a.txt` and `A.txt` onto one
 * file; a suffixed name that an upload already holds (`a (2).txt`) is skipped too. The same ids in
 * the same order always give the same names.
 */
export function uniqueEntryNames(stored: readonly string[]): string[] {
  const taken = new Set<string>()
  const key = (name: string) => name.toLowerCase()
  // The names the files bring come first: a later duplicate must not take `a (2).txt` from a file called so.
  const own = stored.map(archiveEntryName)
  const wanted = new Set(own.map(key))
  return own.map((name) => {
    let candidate = name
    for (let n = 2; taken.has(key(candidate)) || (candidate !== name && wanted.has(key(candidate))); n++) {
      candidate = withSuffix(name, n)
    }
    taken.add(key(candidate))
    return candidate
  })
}
