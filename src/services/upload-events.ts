/**
 * What the upload services report as it happens, for whoever counts (the HTTP layer's metrics,
 * src/http/plugins/metrics.ts). The services know no metrics library: they call this interface,
 * and nothing when no one listens. Calls are synchronous and must not throw.
 */
export interface UploadEvents {
  /**
   * Bytes of a client's upload were kept: the whole file of a one-request upload once it is
   * recorded, or what one commit of a resumable upload's chunk added.
   */
  bytesKept(bytes: number): void
  /** An upload became a file: a one-request (multipart) upload, or a resumable upload that reached its length. */
  fileStored(via: 'multipart' | 'resumable'): void
}

export const NO_UPLOAD_EVENTS: UploadEvents = { bytesKept: () => {}, fileStored: () => {} }
