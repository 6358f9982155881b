import type { Config } from '../config.js'
import type { BlobStore } from './blob-store.js'
import { FsBlobStore } from './fs-blob-store.js'

/** The configured blob store; the one place that chooses between implementations. */
export async function openBlobStore(config: Pick<Config, 'blobDir'>): Promise<BlobStore> {
  return new FsBlobStore(config.blobDir).init()
}
