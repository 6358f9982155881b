import type { AccountStats } from '../services/accounts.js'

/** The `GET /stats` body (without `success`): the contract's stats and limits, plus the plan. */
export function presentStats({ plan, totalFiles, totalSize, totalDownloads, uploadsToday, storageReserved, limits }: AccountStats) {
  return {
    plan,
    stats: {
      total_files: totalFiles,
      total_size: totalSize,
      total_downloads: totalDownloads,
      uploads_today: uploadsToday,
      storage_reserved: storageReserved,
    },
    limits: {
      max_file_size: limits.maxFileSize,
      daily_uploads: limits.dailyUploads,
      requests_per_minute: limits.requestsPerMinute,
      requests_per_day: limits.requestsPerDay,
      max_storage: limits.maxStorage,
    },
  }
}
