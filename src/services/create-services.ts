import type { Config } from '../config.js'
import type { DatabaseHandle } from '../db/dialect.js'
import { AccountsRepository } from '../db/repositories/accounts-repository.js'
import { ApiKeysRepository } from '../db/repositories/api-keys-repository.js'
import { FilesRepository } from '../db/repositories/files-repository.js'
import type { BlobStore } from '../storage/blob-store.js'
import { AccountService } from './accounts.js'
import { ApiKeyService } from './api-keys.js'
import { DownloadService } from './downloads.js'
import { FileService } from './files.js'

export interface Services {
  accounts: AccountService
  apiKeys: ApiKeyService
  files: FileService
  downloads: DownloadService
}

/** Wires the domain services over one database and one blob store; shared by the server and the CLI. */
export function createServices(
  { db }: DatabaseHandle,
  store: BlobStore,
  config: Pick<Config, 'plans' | 'cacheTtlMs'>,
  onBackgroundError: (error: unknown) => void = () => {},
): Services {
  const accountsRepository = new AccountsRepository(db)
  const filesRepository = new FilesRepository(db)
  const apiKeys = new ApiKeyService(new ApiKeysRepository(db), accountsRepository, config, onBackgroundError)
  return {
    apiKeys,
    accounts: new AccountService(accountsRepository, apiKeys, config),
    files: new FileService(filesRepository, accountsRepository, store, onBackgroundError),
    downloads: new DownloadService(filesRepository, store),
  }
}
