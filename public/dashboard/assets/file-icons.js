// A file's kind, drawn as a small icon before its name on the Files page (issue 37). Inline SVG
// built here: no request, nothing from the file itself. The icon is decorative (aria-hidden): the
// name beside it carries its extension, and the name's cell its content type as a tooltip.

const SVG = 'http://www.w3.org/2000/svg'

/**
 * The kinds, by the file's content type (the server takes it from the name's extension), first match
 * wins: a document's or a sheet's type is read before an archive's (an EPUB is `application/epub+zip`).
 */
const KINDS = [
  ['image', /^image\//],
  ['video', /^video\//],
  ['audio', /^audio\//],
  ['pdf', /^application\/pdf$/],
  ['spreadsheet', /spreadsheet|ms-excel|^text\/csv$|^text\/tab-separated-values$/],
  ['presentation', /presentation|powerpoint/],
  ['document', /wordprocessing|msword|opendocument\.text|^application\/rtf$|epub/],
  ['archive', /zip|x-tar|gzip|bzip|x-7z|rar|x-xz|zstd|compressed/],
  ['code', /json|xml|javascript|ecmascript|typescript|x-sh$|x-python|yaml|toml|^text\/(css|html|x-)/],
  ['text', /^text\//],
]

/** Source files whose extension has no registered content type (the server stores `application/octet-stream`). */
const CODE_EXTENSIONS = /\.(py|rb|go|rs|java|kt|c|h|cc|cpp|hpp|cs|swift|php|pl|lua|r|scala|sql|ts|tsx|jsx|vue|dart|ex|exs|zig)$/i

/** What a kind draws inside the page's outline (paths in a 24×24 box; `fill` marks a filled shape). */
const GLYPHS = {
  image: [{ d: 'M7 19l3.5-4 2.5 2.5 2-2 3 3.5' }, { d: 'M10 11.5a1.5 1.5 0 1 1-3 0a1.5 1.5 0 1 1 3 0z' }],
  video: [{ d: 'M10 11.5v6l5-3z', fill: true }],
  audio: [
    { d: 'M11 18.5v-7l5-1.5v7' },
    { d: 'M11 18.5a1.6 1.6 0 1 1-3.2 0a1.6 1.6 0 1 1 3.2 0zM16 17a1.6 1.6 0 1 1-3.2 0a1.6 1.6 0 1 1 3.2 0z', fill: true },
  ],
  pdf: [{ d: 'M7 13h10v6H7z', fill: true }],
  spreadsheet: [{ d: 'M7.5 11h9v8h-9zM7.5 15h9M12 11v8' }],
  presentation: [{ d: 'M7 11h10v6H7zM12 17v2.5M10 19.5h4' }],
  document: [{ d: 'M8 11.5h8M8 14.5h8M8 17.5h5' }],
  archive: [{ d: 'M11 3v1.5M13 5.5V7M11 8v1.5M13 10.5V12' }, { d: 'M10.5 13.5h3v4h-3z' }],
  code: [{ d: 'M10 12.5l-2.5 2.5 2.5 2.5M14 12.5l2.5 2.5-2.5 2.5' }],
  text: [{ d: 'M8 12h8M8 15h8M8 18h8' }],
  file: [],
}

/** The kind of a file, by its content type, else its name's extension: one of GLYPHS' names (`file` when none fits). */
export function fileKind(contentType, filename = '') {
  const type = String(contentType ?? '').toLowerCase()
  const kind = KINDS.find(([, pattern]) => pattern.test(type))?.[0]
  if (kind) return kind
  return CODE_EXTENSIONS.test(filename) ? 'code' : 'file'
}

function path(d, fill) {
  const element = document.createElementNS(SVG, 'path')
  element.setAttribute('d', d)
  element.setAttribute('fill', fill ? 'currentColor' : 'none')
  return element
}

/** The icon of a file's kind: an `<svg>` hidden from assistive technology, coloured by its class (files.css). */
export function fileIcon(contentType, filename) {
  const kind = fileKind(contentType, filename)
  const icon = document.createElementNS(SVG, 'svg')
  icon.setAttribute('viewBox', '0 0 24 24')
  icon.setAttribute('class', `file-icon kind-${kind}`)
  icon.setAttribute('aria-hidden', 'true')
  icon.setAttribute('focusable', 'false')
  icon.setAttribute('stroke', 'currentColor')
  icon.setAttribute('stroke-width', '1.5')
  icon.setAttribute('stroke-linecap', 'round')
  icon.setAttribute('stroke-linejoin', 'round')
  icon.dataset.kind = kind
  // The page, with its corner folded.
  icon.append(path('M6.5 2.5H14l5 5V20a1.5 1.5 0 0 1-1.5 1.5h-11A1.5 1.5 0 0 1 5 20V4a1.5 1.5 0 0 1 1.5-1.5z'), path('M14 2.5V7.5h5'))
  for (const glyph of GLYPHS[kind]) icon.append(path(glyph.d, glyph.fill))
  return icon
}
