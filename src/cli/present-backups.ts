import type { BackupReport, RestoreReport } from '../services/backups.js'
import type { VerifyReport } from '../services/blob-verifier.js'

/** The JSON of `fileshare backup --json` (docs/cli.md). */
export function backupReportJson(report: BackupReport) {
  return {
    backup_dir: report.dir,
    files: report.files,
    file_bytes: report.bytes,
    blobs_linked: report.linked,
    blobs_copied: report.copied,
    files_deleted_meanwhile: report.deletedMeanwhile,
    missing_in_data: report.missingInData.map((file) => ({ file_id: file.fileId, storage_key: file.storageKey })),
    resumable_uploads: report.resumableUploads,
    database_bytes: report.databaseBytes,
  }
}

export function formatBackupReport(report: BackupReport): string {
  const lines = [
    `Backed up ${plural(report.files, 'file')} (${report.bytes} bytes) and the database (${report.databaseBytes} bytes) to ${report.dir}.`,
    `Blobs: ${report.linked} hard-linked, ${report.copied} copied.`,
  ]
  if (report.resumableUploads > 0) lines.push(`Resumable uploads in progress: ${report.resumableUploads} with their bytes so far.`)
  if (report.deletedMeanwhile > 0) lines.push(`${plural(report.deletedMeanwhile, 'file')} deleted while the backup ran: left out.`)
  for (const file of report.missingInData) {
    lines.push(`missing: file ${file.fileId}, storage key ${file.storageKey}: no blob in the data folder; left out (run fileshare verify)`)
  }
  return lines.join('\n')
}

/** The JSON of `fileshare restore --json` (docs/cli.md). */
export function restoreReportJson(report: RestoreReport) {
  return {
    data_dir: report.dataDir,
    files: report.files,
    file_bytes: report.bytes,
    resumable_uploads: report.resumableUploads,
  }
}

export function formatRestoreReport(report: RestoreReport): string {
  return (
    `Restored ${plural(report.files, 'file')} (${report.bytes} bytes), each checked against the manifest, ` +
    `into ${report.dataDir}. Start the server on it.`
  )
}

/** The JSON of `fileshare verify --json` (docs/cli.md): files by id and storage key, never a token. */
export function verifyReportJson(report: VerifyReport, graceMs: number) {
  return {
    ok: problems(report) === 0,
    sampled: report.sampled,
    files_checked: report.filesChecked,
    bytes_checked: report.bytesChecked,
    blobs_listed: report.blobsListed,
    grace_seconds: graceMs / 1000,
    damaged: report.damaged.map((blob) => ({
      file_id: blob.fileId,
      storage_key: blob.storageKey,
      recorded_size: blob.recordedSize,
      actual_size: blob.actualSize,
      recorded_sha256: blob.recordedSha256,
      actual_sha256: blob.actualSha256,
    })),
    missing: report.missing.map((blob) => ({ file_id: blob.fileId, storage_key: blob.storageKey })),
    orphans: report.orphans.map((blob) => ({ storage_key: blob.storageKey, size: blob.size })),
    recent_unreferenced_blobs: report.recentUnreferencedKept,
  }
}

export function formatVerifyReport(report: VerifyReport, graceMs: number): string {
  const lines = [
    ...report.damaged.map(
      (blob) =>
        `damaged: file ${blob.fileId}, storage key ${blob.storageKey}: ${blob.actualSize} bytes with SHA-256 ${blob.actualSha256}, ` +
        `recorded ${blob.recordedSize} bytes with ${blob.recordedSha256}`,
    ),
    ...report.missing.map((blob) => `missing: file ${blob.fileId}, storage key ${blob.storageKey}: no blob stored`),
    ...report.orphans.map((blob) => `orphan: storage key ${blob.storageKey} (${blob.size} bytes): no file refers to it`),
  ]
  const checked = `${report.sampled ? 'Sampled' : 'Checked'} ${plural(report.filesChecked, 'file')} (${report.bytesChecked} bytes) and ${plural(report.blobsListed, 'stored blob')}`
  const found = problems(report)
  lines.push(
    found === 0
      ? `${checked}: no damage, nothing missing, no orphans.`
      : `${checked}: ${report.damaged.length} damaged, ${report.missing.length} missing, ${plural(report.orphans.length, 'orphan')}.`,
  )
  if (report.recentUnreferencedKept > 0)
    lines.push(
      `${plural(report.recentUnreferencedKept, 'blob')} without a file, younger than ${graceMs / 1000} s, not judged (maybe uploads in flight).`,
    )
  return lines.join('\n')
}

function problems(report: VerifyReport): number {
  return report.damaged.length + report.missing.length + report.orphans.length
}

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`
}
