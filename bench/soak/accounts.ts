/** What the clients know: the files of each account, as the server should have them. */

export interface KnownFile {
  fileId: number
  seed: Buffer
  size: number
  sha256: string
  filename: string
  downloadPath: string
  /** GETs whose body started at byte 0: what download_count must say. */
  countedDownloads: number
  /**
   * GETs from byte 0 that got no clear answer (a 5xx or none): the server may or may not have
   * counted them, so download_count may exceed countedDownloads by up to this many.
   */
  uncertainDownloads: number
  /**
   * Set before the delete request is sent: from then on a 404 is a fair answer. A delete that got
   * no clear answer leaves it set, and the file may or may not be listed at the end.
   */
  deleting: boolean
}

/** A file the server just acknowledged: nothing downloaded or deleted yet; its path is its public link's. */
export function newKnownFile(file: Pick<KnownFile, 'fileId' | 'seed' | 'size' | 'sha256' | 'filename'>, publicLink: string): KnownFile {
  return { ...file, downloadPath: new URL(publicLink).pathname, countedDownloads: 0, uncertainDownloads: 0, deleting: false }
}

export interface Account {
  email: string
  apiKey: string
  files: Map<number, KnownFile>
  /** Uploads that took a daily slot: multipart uploads answered 201, resumable uploads created and not deleted. */
  uploads: number
  /**
   * Uploads that got no clear answer (none, or a 502 from the proxy when an instance died): each may
   * have been stored. The final listing may hold up to this many files the clients do not know.
   */
  uncertainUploads: number
}
