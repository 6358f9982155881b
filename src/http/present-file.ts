import type { ListedFile } from '../db/schema.js'
import { fileRecord } from '../services/records.js'
import type { FileObject } from './schemas.js'

/** The file object of the API (services/records.ts, also the `data` of file webhooks). */
export function presentFile(file: ListedFile, linkBaseUrl: string): FileObject {
  return fileRecord(file, linkBaseUrl)
}
