const MAX_BYTES = 255
/**
 * Control characters, line and paragraph separators, and the bidirectional formatting characters
 * (marks, embeddings, overrides, isolates): with U+202E, `invoice\u202Efdp.exe` shows as
 * "invoiceexe.pdf". Joiners stay: emoji sequences and several scripts need them.
 */
const DROPPED = /[\p{Cc}\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu

/**
 * Makes a client-supplied file name safe to store and show: no path, no control or bidi characters,
 * Unicode NFC, at most 255 bytes of UTF-8 (cut on a character boundary); `file` when nothing is left.
 * The result is never used as a storage path.
 */
export function sanitizeFilename(raw: string | undefined): string {
  let name = raw ?? ''
  name = name.slice(Math.max(name.lastIndexOf('/'), name.lastIndexOf('\\')) + 1)
  // Normalise after dropping control characters: one between a letter and its accent blocks composition.
  name = name.replace(DROPPED, '').normalize('NFC')
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
