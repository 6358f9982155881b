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
  /** Set before the delete request is sent: from then on a 404 is a fair answer. */
  deleting: boolean
}

export interface Account {
  email: string
  apiKey: string
  files: Map<number, KnownFile>
  uploads: number
}
