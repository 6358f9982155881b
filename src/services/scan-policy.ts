import { FileNotScannableError, ScanPendingError } from '../errors.js'
import type { FileRow, NewFileRow } from '../db/schema.js'

/** How long a client is told to wait before asking again for a file still being scanned. */
export const SCAN_PENDING_RETRY_AFTER_S = 10

/**
 * What scanning means for a file (../shared/spec/upload-requests.md, virus scanning), decided in one
 * place for uploads and downloads: `off` (no clamd: files carry no scan), `async` (links work at once;
 * an infected file is removed when found) or `required` (a file is served only once clamd said it is
 * clean; one too large to scan is refused).
 */
export class ScanPolicy {
  constructor(
    readonly mode: 'off' | 'async' | 'required',
    /** clamd's StreamMaxLength as the operator declares it (FILESHARE_SCAN_MAX_BYTES). */
    readonly maxBytes: number = Number.MAX_SAFE_INTEGER,
  ) {}

  /** Refuses, in required mode, a file whose size is known to be too large to scan (before its bytes are sent). */
  checkSize(size: number): void {
    if (this.mode === 'required' && size > this.maxBytes) throw new FileNotScannableError(this.maxBytes)
  }

  /** The scan columns of a new file of `size` bytes: pending (due now), skipped (too large, async), or none. */
  newFile(size: number, now: number): Pick<NewFileRow, 'scan_status' | 'scan_next_at'> {
    if (this.mode === 'off') return { scan_status: null, scan_next_at: null }
    this.checkSize(size)
    if (size > this.maxBytes) return { scan_status: 'skipped', scan_next_at: null }
    return { scan_status: 'pending', scan_next_at: now }
  }

  /**
   * Throws unless the file may be served now: in required mode, a pending file answers 409
   * scan_pending, and one not scanned (too large for clamd, or stored in async mode as too large)
   * 403 file_not_scannable. Files
   * stored before scanning was turned on (no scan) are served as they were.
   */
  checkServable(file: Pick<FileRow, 'scan_status'>): void {
    if (this.mode !== 'required') return
    if (file.scan_status === 'pending') throw new ScanPendingError(SCAN_PENDING_RETRY_AFTER_S)
    // error: clamd could not scan it; skipped: stored unscanned while the server ran in async mode.
    if (file.scan_status === 'error' || file.scan_status === 'skipped') throw new FileNotScannableError(this.maxBytes)
  }

  /**
   * The most bytes an upload may bring: its account's max_file_size, or, in required mode, no more
   * than can be scanned (`scanLimited`: a file past it is refused with file_not_scannable).
   */
  uploadLimit(maxFileSize: number): { maxBytes: number; scanLimited: boolean } {
    const scanLimited = this.mode === 'required' && this.maxBytes < maxFileSize
    return { maxBytes: scanLimited ? this.maxBytes : maxFileSize, scanLimited }
  }
}

export const SCANNING_OFF = new ScanPolicy('off')
