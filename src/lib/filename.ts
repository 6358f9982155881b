const MAX_BYTES = 255

/**
 * Makes a client-supplied file name safe to store and show: no path, no control characters,
 * Unicode NFC, at most 255 bytes of UTF-8 (cut on a character boundary); `file` when nothing is left.
 * The result is never used as a storage path.
 */
export function sanitizeFilename(raw: string | undefined): string {
  let name = raw ?? ''
  name = name.slice(Math.max(name.lastIndexOf('/'), name.lastIndexOf('\\')) + 1)
  // Normalise after dropping control characters: one between a letter and its accent blocks composition.
  name = name.replace(/[\p{Cc}\u2028\u2029]/gu, '').normalize('NFC')
  if (Buffer.byteLength(name, 'utf8') > MAX_BYTES) {
    let cut = ''
    for (const char of name) {
      if (Buffer.byteLength(cut + char, 'utf8') > MAX_BYTES) break
      cut += char
    }
    name = cut
  }
  return name === '' ? 'file' : name
}
