import type { Config } from '../config.js'
import type { DatabaseHandle } from '../db/dialect.js'
import { AccountHoldersRepository } from '../db/repositories/account-holders-repository.js'
import { AccountsRepository } from '../db/repositories/accounts-repository.js'
import { ApiKeysRepository } from '../db/repositories/api-keys-repository.js'
import { AuditEventsRepository } from '../db/repositories/audit-events-repository.js'
import { WebhooksRepository } from '../db/repositories/webhooks-repository.js'
import { FilesRepository } from '../db/repositories/files-repository.js'
import { LinksRepository } from '../db/repositories/links-repository.js'
import { StorageReservationsRepository } from '../db/repositories/storage-reservations-repository.js'
import { IdempotencyKeysRepository } from '../db/repositories/idempotency-keys-repository.js'
import { SessionsRepository } from '../db/repositories/sessions-repository.js'
import { TwoFactorRepository } from '../db/repositories/two-factor-repository.js'
import { EmailChangesRepository } from '../db/repositories/email-changes-repository.js'
import { UploadsRepository } from '../db/repositories/uploads-repository.js'
import { UploadRequestsRepository } from '../db/repositories/upload-requests-repository.js'
import type { ScryptCost } from '../lib/passwords.js'
import type { BlobStore } from '../storage/blob-store.js'
import type { ResumableBlobStore } from '../storage/resumable.js'
import type { PerKeyLimiter } from '../limits/per-key-limiter.js'
import type { RequestLimiter } from '../limits/request-limiter.js'
import { AccountHolderService } from './account-holders.js'
import { AccountService } from './accounts.js'
import { ApiKeyService } from './api-keys.js'
import { ArchiveService } from './archives.js'
import { AuditLogService, AuditTrail } from './audit.js'
import { BulkDeleteService } from './bulk-delete.js'
import { WebhookDispatcher, type DispatcherOptions, type WebhookEvents } from './webhook-dispatcher.js'
import { WebhookService } from './webhooks.js'
import { DownloadService } from './downloads.js'
import { FileService } from './files.js'
import { GarbageCollector } from './garbage-collector.js'
import { LinkService } from './links.js'
import { StorageQuota } from './storage-quota.js'
import { IdempotencyService } from './idempotency.js'
import { ResumableUploadService, type ResumableUploadTiming } from './resumable-uploads.js'
import { SessionService } from './sessions.js'
import { SignInService } from './sign-in.js'
import { TwoFactorService } from './two-factor.js'
import { TwoFactorSecretBox } from './two-factor-secret.js'
import { EmailChangeService } from './email-changes.js'
import { UploadRequestService } from './upload-requests.js'
import { ScansRepository } from '../db/repositories/scans-repository.js'
import { ClamdClient } from '../scanning/clamd-client.js'
import { SCANNING_OFF, ScanPolicy } from './scan-policy.js'
import { ScanService, type ScanEvents, type ScannerOptions } from './scanner.js'
import type { UploadEvents } from './upload-events.js'

export interface Services {
  accounts: AccountService
  auditLog: AuditLogService
  /** Makes the audit rows and webhook messages every change writes in its own transaction. */
  trail: AuditTrail
  webhooks: WebhookService
  /** Sends the outbox's webhook messages; the server starts it (http/plugins/webhook-dispatch.ts). */
  webhookDispatcher: WebhookDispatcher
  apiKeys: ApiKeyService
  files: FileService
  /** Several files as one streamed ZIP. */
  archives: ArchiveService
  /** Several files deleted in one call, each as a single delete. */
  bulkDelete: BulkDeleteService
  links: LinkService
  idempotency: IdempotencyService
  resumableUploads: ResumableUploadService
  uploadRequests: UploadRequestService
  /** What scanning means for uploads and downloads (off without FILESHARE_CLAMD). */
  scanPolicy: ScanPolicy
  /** The virus scanner, when FILESHARE_CLAMD is set; the server starts it (http/plugins/scanning.ts). */
  scanner?: ScanService
  downloads: DownloadService
  garbageCollector: GarbageCollector
  accountHolders: AccountHolderService
  sessions: SessionService
  signIn: SignInService
  /** Holders' TOTP second factors and recovery codes. */
  twoFactor: TwoFactorService
  /** Holders' email changes, waiting for the operator's confirmation. */
  emailChanges: EmailChangeService
}

/** The limiters services apply themselves (the API's own request and IP limits are applied by the HTTP layer). */
export interface ServiceLimiters {
  requests: RequestLimiter
  signInFailuresByIp: PerKeyLimiter
  signInFailuresByIpAndEmail: PerKeyLimiter
  signInFailuresByEmail: PerKeyLimiter
  /** Wrong passwords of a link, per link and client address (links.md: ten in 15 minutes). */
  linkPasswordFailures: PerKeyLimiter
}

export interface ServiceOptions {
  /** Errors of background work (last-used updates, blob removal after a delete). */
  onBackgroundError?: (error: unknown) => void
  /** scrypt cost of new password hashes; tests lower it, production keeps PASSWORD_HASH_COST. */
  passwordHashCost?: Readonly<ScryptCost>
  /**
   * The services' clock (epoch ms) for expiries, grace periods, UTC days and timestamps. Production
   * leaves it at Date.now; tests move it forward instead of sleeping until a key or an invite expires.
   */
  now?: () => number
  /** Lease and hand-over timing of resumable uploads; tests shorten them. */
  resumableTiming?: Partial<Omit<ResumableUploadTiming, 'expiryMs'>>
  /** Told when upload bytes are kept and files stored (the server's metrics); unset: no one is told. */
  uploadEvents?: UploadEvents
  /** Told of each webhook attempt (the server's metrics). */
  webhookEvents?: WebhookEvents
  /** The webhook dispatcher's timing; tests shorten it. */
  webhookDispatch?: Partial<DispatcherOptions>
  /** Told of each virus scan (the server's metrics). */
  scanEvents?: ScanEvents
  /** The scanner's timing; tests shorten it. */
  scanning?: Partial<Omit<ScannerOptions, 'concurrency'>>
}

/** Wires the domain services over one database and one blob store; shared by the server and the CLI. */
export function createServices(
  { db, dialect }: DatabaseHandle,
  store: BlobStore & ResumableBlobStore,
  limiters: ServiceLimiters,
  config: Pick<
    Config,
    | 'plans'
    | 'cacheTtlMs'
    | 'uploadExpiryMs'
    | 'sessionIdleTimeoutMs'
    | 'auditIp'
    | 'auditRetentionMs'
    | 'linkBaseUrl'
    | 'webhooks'
    | 'uploadRequests'
    | 'publicUrl'
    | 'scan'
    | 'twoFactorKey'
  >,
  options: ServiceOptions = {},
): Services {
  const {
    onBackgroundError = () => {},
    passwordHashCost,
    now = Date.now,
    resumableTiming,
    uploadEvents,
    webhookEvents,
    webhookDispatch,
    scanEvents,
    scanning,
  } = options
  const accountsRepository = new AccountsRepository(db)
  const filesRepository = new FilesRepository(db)
  const trail = new AuditTrail(config, now)
  const auditLog = new AuditLogService(new AuditEventsRepository(db), trail, config, now)
  const uploadRequestsRepository = new UploadRequestsRepository(db)
  const scanPolicy = config.scan ? new ScanPolicy(config.scan.mode, config.scan.maxBytes) : SCANNING_OFF
  const scansRepository = new ScansRepository(db, dialect)
  const scanner = config.scan
    ? new ScanService(
        scansRepository,
        store,
        new ClamdClient(config.scan.clamd, config.scan.timeoutMs),
        scanPolicy,
        trail,
        { concurrency: config.scan.concurrency, ...scanning },
        now,
        scanEvents,
        onBackgroundError,
      )
    : undefined
  // A stored file is scanned at once rather than at the scanner's next poll.
  const storedEvents: UploadEvents | undefined = scanner
    ? {
        bytesKept: (bytes) => uploadEvents?.bytesKept(bytes),
        fileStored: (via) => {
          uploadEvents?.fileStored(via)
          scanner.nudge()
        },
      }
    : uploadEvents
  const resumableUploads = new ResumableUploadService(
    new UploadsRepository(db),
    accountsRepository,
    filesRepository,
    store,
    { ...resumableTiming, expiryMs: config.uploadExpiryMs },
    onBackgroundError,
    now,
    storedEvents,
    trail,
    uploadRequestsRepository,
    scanPolicy,
  )
  const apiKeys = new ApiKeyService(new ApiKeysRepository(db), accountsRepository, config, trail, auditLog, onBackgroundError, now)
  const accountHolders = new AccountHolderService(
    new AccountHoldersRepository(db),
    accountsRepository,
    passwordHashCost,
    now,
    trail,
    auditLog,
    onBackgroundError,
  )
  const sessions = new SessionService(new SessionsRepository(db), config, now, trail)
  const twoFactorRepository = new TwoFactorRepository(db)
  const twoFactor = new TwoFactorService(twoFactorRepository, new TwoFactorSecretBox(config.twoFactorKey), trail, now)
  const linksRepository = new LinksRepository(db)
  const quota = new StorageQuota(new StorageReservationsRepository(db), now, onBackgroundError)
  const idempotency = new IdempotencyService(new IdempotencyKeysRepository(db), now, onBackgroundError)
  const links = new LinkService(linksRepository, filesRepository, passwordHashCost, now, trail)
  const webhooksRepository = new WebhooksRepository(db, dialect)
  const webhookDispatcher = new WebhookDispatcher(
    webhooksRepository,
    trail,
    config.webhooks,
    now,
    webhookDispatch,
    undefined,
    undefined,
    webhookEvents,
    onBackgroundError,
  )
  trail.onMessage = () => webhookDispatcher.nudge()
  const files = new FileService(
    filesRepository,
    accountsRepository,
    store,
    onBackgroundError,
    now,
    storedEvents,
    quota,
    trail,
    scanPolicy,
    scansRepository,
  )
  return {
    auditLog,
    trail,
    webhooks: new WebhookService(webhooksRepository, trail, config.webhooks, now),
    webhookDispatcher,
    apiKeys,
    accounts: new AccountService(accountsRepository, apiKeys, config, limiters.requests, now),
    files,
    archives: new ArchiveService(files, store, scanPolicy),
    bulkDelete: new BulkDeleteService(files),
    links,
    idempotency,
    resumableUploads,
    uploadRequests: new UploadRequestService(
      uploadRequestsRepository,
      filesRepository,
      accountsRepository,
      resumableUploads,
      trail,
      limiters.linkPasswordFailures,
      config,
      passwordHashCost,
      now,
      onBackgroundError,
      scanPolicy,
    ),
    downloads: new DownloadService(linksRepository, links, store, limiters.linkPasswordFailures, auditLog, now, scanPolicy),
    scanPolicy,
    scanner,
    garbageCollector: new GarbageCollector(filesRepository, linksRepository, store, resumableUploads, onBackgroundError, now, {
      quota,
      idempotency,
      auditLog,
      trail,
      webhooks: webhookDispatcher,
    }),
    accountHolders,
    sessions,
    signIn: new SignInService(
      accountHolders,
      sessions,
      {
        byIp: limiters.signInFailuresByIp,
        byIpAndEmail: limiters.signInFailuresByIpAndEmail,
        byEmail: limiters.signInFailuresByEmail,
      },
      undefined,
      { twoFactor, challenges: twoFactorRepository, auditLog, onBackgroundError, now },
    ),
    twoFactor,
    emailChanges: new EmailChangeService(new EmailChangesRepository(db), accountsRepository, trail, now),
  }
}
