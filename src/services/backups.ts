import { createHash } from 'node:crypto'
import { createReadStream, createWriteStream } from 'node:fs'
import fs from 'node:fs/promises'
import path from 'node:path'
import { Transform } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type { Config } from '../config.js'
import { openSqlite } from '../db/dialect.js'
import {
  copySqliteOnline,
  FileIntegrityRepository,
  settleSqliteFile,
  type RecordedBlob,
} from '../db/repositories/file-integrity-repository.js'
import { FilesRepository } from '../db/repositories/files-repository.js'
import { FsBlobStore } from '../storage/fs-blob-store.js'
import { digestStream, forEachInParallel } from './blob-verifier.js'

/** The manifest's name in a backup folder. */
export const MANIFEST_FILE = 'manifest.json'
const DATABASE_FILE = 'fileshare.sqlite'
const BLOBS_FOLDER = 'blobs'
const FORMAT = 'fileshare-backup'
const FORMAT_VERSION = 1

/** A blob as the manifest lists it: its key, size and SHA-256 (hex). */
export interface ManifestEntry {
  key: string
  size: number
  sha256: string
}

/** manifest.json of a backup folder (docs/cli.md describes it). */
export interface BackupManifest {
  format: typeof FORMAT
  version: typeof FORMAT_VERSION
  created_at: string
  database: { file: string; size: number; sha256: string }
  /** The blob of every file row in the database copy. */
  blobs: ManifestEntry[]
  /** The committed bytes of every resumable upload open in the copy, whose bytes were still there. */
  resumable_uploads: ManifestEntry[]
}

/** A backup or restore refused or failed: one line for the operator; nothing is left changed. */
export class BackupError extends Error {}

export interface BackupReport {
  dir: string
  files: number
  bytes: number
  /** Blobs hard-linked (no bytes copied), and copied (another file system). */
  linked: number
  copied: number
  /** Files deleted while the backup ran, after its database snapshot: left out of the backup, as deleted. */
  deletedMeanwhile: number
  /**
   * Files whose blob is missing from the live data folder itself (its record is still there): left
   * out of the backup, which holds no record without its bytes. `fileshare verify` names them too.
   */
  missingInData: Array<{ fileId: number; storageKey: string }>
  resumableUploads: number
  databaseBytes: number
}

export interface RestoreReport {
  dataDir: string
  files: number
  bytes: number
  resumableUploads: number
}

/** Blobs linked or copied at once. */
const PARALLEL_COPIES = 8
/** Rows read per query. */
const BATCH_SIZE = 500
const SHA256_PATTERN = /^[a-f0-9]{64}$/

/**
 * Backs up and restores the embedded stack (SQLite and the folder store) while the server runs:
 * the database through SQLite's online backup, then the blob of every row of that copy, hard-linked
 * where the file system allows. The copy's files table is the truth: a blob written after the
 * snapshot has no row in it and is not copied; a file deleted after it, whose bytes are gone, is
 * deleted from the copy too. So the backup never holds a row without its bytes.
 */
export class BackupService {
  constructor(private readonly config: Pick<Config, 'dataDir' | 'sqlitePath' | 'blobDir'>) {}

  async backup(target: string): Promise<BackupReport> {
    const dir = path.resolve(target)
    const created = await claimEmptyFolder(dir, 'The backup folder')
    try {
      return await this.writeBackup(dir)
    } catch (error) {
      await undoClaim(dir, created)
      throw error
    }
  }

  private async writeBackup(dir: string): Promise<BackupReport> {
    const createdAt = new Date().toISOString()
    const databaseFile = path.join(dir, DATABASE_FILE)
    await copySqliteOnline(this.config.sqlitePath, databaseFile)
    const source = new FsBlobStore(this.config.blobDir)
    const copy = await new FsBlobStore(path.join(dir, BLOBS_FOLDER)).init()
    const report: BackupReport = {
      dir,
      files: 0,
      bytes: 0,
      linked: 0,
      copied: 0,
      deletedMeanwhile: 0,
      missingInData: [],
      resumableUploads: 0,
      databaseBytes: 0,
    }
    const blobs: ManifestEntry[] = []
    const resumable: ManifestEntry[] = []

    const handle = openSqlite(databaseFile)
    try {
      const integrity = new FileIntegrityRepository(handle.db)
      const gone: RecordedBlob[] = []
      for (let afterId = 0; ;) {
        const batch = await integrity.filesAfter(afterId, BATCH_SIZE)
        if (batch.length === 0) break
        afterId = batch[batch.length - 1]!.fileId
        await forEachInParallel(batch, PARALLEL_COPIES, async (file) => {
          const how = await linkOrCopy(source.blobPath(file.storageKey), copy.blobPath(file.storageKey))
          if (how === 'gone') return void gone.push(file)
          report[how]++
          blobs.push({ key: file.storageKey, size: file.size, sha256: file.sha256 })
        })
      }
      // Deleted since the snapshot (the row first, then the bytes): deleted from the copy as well.
      // A blob missing while the live row is still there is damage of the live data: left out too.
      const live = await this.liveFileIds(gone.map((file) => file.fileId))
      const files = new FilesRepository(handle.db)
      // At time 0 every file is live, expired or not, so deleteOwned finds it.
      for (const file of gone) await files.deleteOwned(file.accountId, file.fileId, 0)
      report.missingInData = gone
        .filter((file) => live.has(file.fileId))
        .map((file) => ({ fileId: file.fileId, storageKey: file.storageKey }))
        .sort((a, b) => a.fileId - b.fileId)
      report.deletedMeanwhile = gone.length - report.missingInData.length

      // An open resumable upload's committed bytes: in resumable/, or in objects/ if it completed since.
      for (const upload of await integrity.openUploads()) {
        const entry = await copyPrefix(
          [source.resumableUploadPath(upload.storageKey), source.blobPath(upload.storageKey)],
          upload.committedBytes,
          copy.resumableUploadPath(upload.storageKey),
        )
        if (entry) resumable.push({ key: upload.storageKey, ...entry })
      }
    } finally {
      await handle.db.destroy()
    }
    settleSqliteFile(databaseFile)

    const database = await digestStream(createReadStream(databaseFile))
    blobs.sort((a, b) => a.key.localeCompare(b.key))
    const manifest: BackupManifest = {
      format: FORMAT,
      version: FORMAT_VERSION,
      created_at: createdAt,
      database: { file: DATABASE_FILE, ...database },
      blobs,
      resumable_uploads: resumable,
    }
    // Written last, under its final name only once whole: a folder without it is no backup.
    const manifestFile = path.join(dir, MANIFEST_FILE)
    await writeDurably(`${manifestFile}.tmp`, `${JSON.stringify(manifest, null, 1)}\n`)
    await fs.rename(`${manifestFile}.tmp`, manifestFile)
    report.files = blobs.length
    report.bytes = blobs.reduce((sum, blob) => sum + blob.size, 0)
    report.resumableUploads = resumable.length
    report.databaseBytes = database.size
    return report
  }

  /** Which of `ids` the live database still has. */
  private async liveFileIds(ids: number[]): Promise<Set<number>> {
    if (ids.length === 0) return new Set()
    const live = openSqlite(this.config.sqlitePath)
    try {
      return await new FileIntegrityRepository(live.db).existingFileIds(ids)
    } finally {
      await live.db.destroy()
    }
  }

  /**
   * Restores a backup into the configured data folder, which must be empty: every blob and the
   * database are checked against the manifest as they are copied, and the database is put in
   * place last. On any failure, the data folder is left as empty as it was.
   */
  async restore(source: string): Promise<RestoreReport> {
    const dir = path.resolve(source)
    const manifest = await readManifest(dir)
    const backupStore = new FsBlobStore(path.join(dir, BLOBS_FOLDER))
    const created = await claimEmptyFolder(this.config.dataDir, 'The data folder (FILESHARE_DATA_DIR)')
    try {
      const store = await new FsBlobStore(this.config.blobDir).init()
      const pendingDatabase = `${this.config.sqlitePath}.restoring`
      await copyVerified(path.join(dir, manifest.database.file), pendingDatabase, manifest.database, 'the database copy')
      await forEachInParallel(manifest.blobs, PARALLEL_COPIES, (blob) =>
        copyVerified(backupStore.blobPath(blob.key), store.blobPath(blob.key), blob, `blob ${blob.key}`),
      )
      await forEachInParallel(manifest.resumable_uploads, PARALLEL_COPIES, (upload) =>
        copyVerified(
          backupStore.resumableUploadPath(upload.key),
          store.resumableUploadPath(upload.key),
          upload,
          `resumable upload ${upload.key}`,
        ),
      )
      await fs.rename(pendingDatabase, this.config.sqlitePath)
      return {
        dataDir: this.config.dataDir,
        files: manifest.blobs.length,
        bytes: manifest.blobs.reduce((sum, blob) => sum + blob.size, 0),
        resumableUploads: manifest.resumable_uploads.length,
      }
    } catch (error) {
      await undoClaim(this.config.dataDir, created)
      throw error
    }
  }
}

/**
 * Makes sure `dir` is an empty folder, creating it if absent; refuses anything else before
 * touching it. Returns whether it was created (then undoing removes it, else only its content).
 */
async function claimEmptyFolder(dir: string, what: string): Promise<boolean> {
  let entries: string[]
  try {
    entries = await fs.readdir(dir)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOTDIR') throw new BackupError(`${what} ${dir} is not a folder.`)
    if (code !== 'ENOENT') throw error
    await fs.mkdir(dir, { recursive: true })
    return true
  }
  if (entries.length > 0) throw new BackupError(`${what} ${dir} is not empty: it must be empty or absent.`)
  return false
}

async function undoClaim(dir: string, created: boolean): Promise<void> {
  if (created) await fs.rm(dir, { recursive: true, force: true })
  else for (const entry of await fs.readdir(dir)) await fs.rm(path.join(dir, entry), { recursive: true, force: true })
}

/** Hard-links `from` to `to` (same file system), else copies it; 'gone' when `from` no longer exists. */
async function linkOrCopy(from: string, to: string): Promise<'linked' | 'copied' | 'gone'> {
  await fs.mkdir(path.dirname(to), { recursive: true })
  try {
    await fs.link(from, to)
    return 'linked'
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT') return 'gone'
    if (code !== 'EXDEV' && code !== 'EPERM' && code !== 'EMLINK' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP') throw error
  }
  try {
    await fs.copyFile(from, to)
    return 'copied'
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'gone'
    throw error
  }
}

/**
 * Copies the first `bytes` bytes of the first of `candidates` that exists and holds that many,
 * hashing them; undefined when none does (the upload ended since the snapshot).
 */
async function copyPrefix(candidates: string[], bytes: number, to: string): Promise<{ size: number; sha256: string } | undefined> {
  for (const from of candidates) {
    const stat = await fs.stat(from).catch(() => undefined)
    if (!stat?.isFile() || stat.size < bytes) continue
    const hash = createHash('sha256')
    const source = bytes === 0 ? [] : createReadStream(from, { start: 0, end: bytes - 1 })
    await pipeline(source, tap(hash), createWriteStream(to))
    return { size: bytes, sha256: hash.digest('hex') }
  }
  return undefined
}

/** A pass-through that feeds a hash. */
function tap(hash: ReturnType<typeof createHash>): Transform {
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      hash.update(chunk)
      callback(null, chunk)
    },
  })
}

/**
 * Copies `from` to `to` (through a temporary name beside it), refusing the copy unless its size
 * and SHA-256 are what `expected` says.
 */
async function copyVerified(from: string, to: string, expected: { size: number; sha256: string }, what: string): Promise<void> {
  await fs.mkdir(path.dirname(to), { recursive: true })
  const pending = `${to}.part`
  const hash = createHash('sha256')
  let size = 0
  const counter = tap(hash).on('data', (chunk: Buffer) => (size += chunk.length))
  try {
    await pipeline(createReadStream(from), counter, createWriteStream(pending, { flags: 'wx', flush: true }))
  } catch (error) {
    await fs.rm(pending, { force: true })
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new BackupError(`The backup is damaged: ${what} is missing.`)
    throw error
  }
  const sha256 = hash.digest('hex')
  if (size !== expected.size || sha256 !== expected.sha256) {
    await fs.rm(pending, { force: true })
    throw new BackupError(
      `The backup is damaged: ${what} has ${size} bytes with SHA-256 ${sha256}; the manifest records ${expected.size} bytes with ${expected.sha256}.`,
    )
  }
  await fs.rename(pending, to)
}

async function writeDurably(file: string, text: string): Promise<void> {
  const handle = await fs.open(file, 'wx')
  try {
    await handle.writeFile(text)
    await handle.sync()
  } finally {
    await handle.close()
  }
}

/** Reads and checks manifest.json: any flaw is a BackupError naming the field. */
export async function readManifest(dir: string): Promise<BackupManifest> {
  const file = path.join(dir, MANIFEST_FILE)
  let text: string
  try {
    text = await fs.readFile(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new BackupError(`No backup at ${dir}: it has no ${MANIFEST_FILE}.`)
    throw error
  }
  const damaged = (why: string) => new BackupError(`The backup manifest ${file} is damaged: ${why}.`)
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw damaged('it is not valid JSON')
  }
  const manifest = value as Partial<BackupManifest> | null
  if (typeof manifest !== 'object' || manifest === null) throw damaged('it is not a JSON object')
  if (manifest.format !== FORMAT) throw damaged(`"format" is not "${FORMAT}"`)
  if (manifest.version !== FORMAT_VERSION) throw damaged(`"version" ${JSON.stringify(manifest.version)} is not ${FORMAT_VERSION}`)
  if (typeof manifest.created_at !== 'string' || Number.isNaN(Date.parse(manifest.created_at))) throw damaged('"created_at" is not a time')
  const database = manifest.database
  if (!isEntry(database) || database.file !== DATABASE_FILE) throw damaged('"database" is not a file with its size and SHA-256')
  const keys = new FsBlobStore(dir)
  for (const field of ['blobs', 'resumable_uploads'] as const) {
    const entries: unknown = manifest[field]
    if (!Array.isArray(entries)) throw damaged(`"${field}" is not a list`)
    entries.forEach((entry: unknown, index) => {
      if (!isEntry(entry) || typeof entry.key !== 'string' || !isBlobKey(keys, entry.key))
        throw damaged(`${field}[${index}] is not a blob key with its size and SHA-256`)
    })
  }
  return manifest as BackupManifest
}

function isEntry(value: unknown): value is { size: number; sha256: string; [field: string]: unknown } {
  const entry = value as { size?: unknown; sha256?: unknown } | null
  return (
    typeof entry === 'object' &&
    entry !== null &&
    Number.isSafeInteger(entry.size) &&
    (entry.size as number) >= 0 &&
    typeof entry.sha256 === 'string' &&
    SHA256_PATTERN.test(entry.sha256)
  )
}

/** A key the folder store would have chosen (it refuses any other, a path among them). */
function isBlobKey(store: FsBlobStore, key: string): boolean {
  try {
    store.blobPath(key)
    return true
  } catch {
    return false
  }
}
