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

/** `report.pdf` -> `report (2).pdf`; a name without an extension, or a dotfile, takes the suffix at its end. */
function withSuffix(name: string, n: number): string {
  const dot = name.lastIndexOf('.')
  return dot > 0 ? `${name.slice(0, dot)} (${n})${name.slice(dot)}` : `${name} (${n})`
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
