import type { Config } from '../config.js'
import type { DatabaseHandle } from '../db/dialect.js'
import { AccountHoldersRepository } from '../db/repositories/account-holders-repository.js'
import { AccountsRepository } from '../db/repositories/accounts-repository.js'
import { ApiKeysRepository } from '../db/repositories/api-keys-repository.js'
import { FilesRepository } from '../db/repositories/files-repository.js'
import { SessionsRepository } from '../db/repositories/sessions-repository.js'
import type { BlobStore } from '../storage/blob-store.js'
import { AccountHolderService } from './account-holders.js'
import { AccountService } from './accounts.js'
import { ApiKeyService } from './api-keys.js'
import { DownloadService } from './downloads.js'
import { FileService } from './files.js'
import { GarbageCollector } from './garbage-collector.js'
import { SessionService } from './sessions.js'

export interface Services {
  accounts: AccountService
  apiKeys: ApiKeyService
  files: FileService
  downloads: DownloadService
  garbageCollector: GarbageCollector
  accountHolders: AccountHolderService
  sessions: SessionService
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
    garbageCollector: new GarbageCollector(filesRepository, store, onBackgroundError),
    accountHolders: new AccountHolderService(new AccountHoldersRepository(db), accountsRepository),
    sessions: new SessionService(new SessionsRepository(db), config),
  }
}
