import type { Readable } from 'node:stream'
import { NotFoundError, ScanPendingError } from '../errors.js'
import type { FileRow } from '../db/schema.js'
import type { ByteRange } from '../storage/blob-store.js'
import { SCAN_PENDING_RETRY_AFTER_S, type ScanPolicy } from './scan-policy.js'

/** The types a preview may have: raster images a browser shows in an <img>, and PDF. Never SVG, HTML or XML. */
export type PreviewType = 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp' | 'application/pdf'

/** The largest image the dashboard previews (the browser decodes it whole); larger ones get no preview. */
export const MAX_IMAGE_PREVIEW_BYTES = 20 * 1024 * 1024

/** How many first bytes tell the types apart (WebP's is the longest: RIFF, a length, WEBP). */
const SIGNATURE_BYTES = 12

const startsWith = (bytes: Buffer, signature: string, at = 0) =>
  bytes.subarray(at, at + signature.length).equals(Buffer.from(signature, 'latin1'))

/**
 * The type the stored bytes really are, from their first bytes, or undefined. The uploader's
 * claimed type and the name are never read. Five fixed signatures from the formats' own
 * specifications (PNG, JFIF/EXIF, GIF87a/89a, RIFF WEBP, PDF) rather than the `file-type` package:
 * it reads these same bytes for these types, knows hundreds more that must be refused anyway, and
 * is not installed; what makes previews safe is the allow-list and the headers, not the detection.
 */
export function previewType(firstBytes: Buffer): PreviewType | undefined {
  if (startsWith(firstBytes, '\x89PNG\r\n\x1a\n')) return 'image/png'
  if (startsWith(firstBytes, '\xff\xd8\xff')) return 'image/jpeg'
  if (startsWith(firstBytes, 'GIF87a') || startsWith(firstBytes, 'GIF89a')) return 'image/gif'
  if (startsWith(firstBytes, 'RIFF') && startsWith(firstBytes, 'WEBP', 8)) return 'image/webp'
  if (startsWith(firstBytes, '%PDF-')) return 'application/pdf'
  return undefined
}

export interface FilePreview {
  type: PreviewType
  size: number
  /** Opens the stored bytes (the whole file). */
  open(): Promise<Readable>
}

/**
 * Previews of a holder's own files in the dashboard (docs/security.md, previews): only when the
 * stored bytes are one of the preview types, an image no larger than MAX_IMAGE_PREVIEW_BYTES, and
 * the file is not waiting for its virus scan (in any scan mode) and may be served at all (required
 * mode). A preview is not a download: nothing is counted or audited.
 */
export class FilePreviewService {
  constructor(
    private readonly files: { get(accountId: number, fileId: number): Promise<FileRow> },
    private readonly bytes: { open(file: FileRow, range?: ByteRange): Promise<Readable> },
    private readonly scan: Pick<ScanPolicy, 'checkServable'>,
  ) {}

  async find(accountId: number, fileId: number): Promise<FilePreview> {
    const file = await this.files.get(accountId, fileId)
    // Downloads in async mode serve a file before its scan; a preview waits for it.
    if (file.scan_status === 'pending') throw new ScanPendingError(SCAN_PENDING_RETRY_AFTER_S)
    this.scan.checkServable(file)
    const type = previewType(await this.firstBytes(file))
    if (type === undefined) throw new NotFoundError('No preview: it is not a PNG, JPEG, GIF, WebP or PDF file.')
    if (type !== 'application/pdf' && file.size > MAX_IMAGE_PREVIEW_BYTES) {
      throw new NotFoundError(`No preview: images over ${MAX_IMAGE_PREVIEW_BYTES / 1024 / 1024} MiB are not previewed.`)
    }
    return { type, size: file.size, open: () => this.bytes.open(file) }
  }

  private async firstBytes(file: FileRow): Promise<Buffer> {
    if (file.size === 0) return Buffer.alloc(0)
    const stream = await this.bytes.open(file, { start: 0, end: Math.min(file.size, SIGNATURE_BYTES) - 1 })
    const chunks: Buffer[] = []
    for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer))
    return Buffer.concat(chunks)
  }
}
