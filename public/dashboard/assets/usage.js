import { api, formatBytes, formatNumber, initPage, reportLoadError } from './common.js'

/** Share of the quota taken (used + reserved) from which the page warns that it is almost full. */
const NEAR_FULL = 0.9

const byId = (id) => document.getElementById(id)

/** Fills one bar (role="meter") and its sentence. */
function showBar(name, used, limit) {
  const bar = byId(`${name}-bar`)
  const share = limit > 0 ? Math.min(1, used / limit) : 1
  bar.setAttribute('aria-valuemax', String(limit))
  bar.setAttribute('aria-valuenow', String(Math.min(used, limit)))
  bar.setAttribute('aria-valuetext', `${formatNumber(used)} of ${formatNumber(limit)}`)
  bar.classList.toggle('high', share >= 0.9)
  // A style property set from script, not a style attribute: the page's CSP allows it.
  bar.querySelector('.fill').style.width = `${(share * 100).toFixed(1)}%`
  const percent = limit > 0 ? ` (${Math.round(share * 100)}%)` : ''
  byId(`${name}-text`).textContent = `${formatNumber(used)} of ${formatNumber(limit)}${percent}`
}

/** The share of `whole` that `part` is, never rounded to 100% before it is full, nor to 0% once it holds anything. */
function percentOf(part, whole) {
  if (part >= whole) return `${Math.round((part / whole) * 100)}%`
  const share = part / whole
  if (share > 0 && share < 0.01) return 'under 1%'
  return `${Math.min(99, Math.floor(share * 100))}%`
}

/** A segment of the storage bar: its share of the quota, and at least a sliver when it holds anything. */
function setWidth(fill, bytes, quota) {
  fill.style.width = bytes > 0 ? `max(4px, ${((bytes / quota) * 100).toFixed(2)}%)` : '0'
}

/** The warning under the storage bar, or none (`title` null). */
function warn(level, title, text) {
  byId('storage-warning').hidden = title === null
  byId('storage-warning').dataset.level = level ?? ''
  byId('storage-warning-title').textContent = title ?? ''
  byId('storage-warning-text').textContent = text ?? ''
}

/** Storage: used, reserved by uploads in progress, free, and the quota (`null`: unlimited), with a bar of two segments. */
function showStorage(used, reserved, quota) {
  const held = used + reserved
  // Near or over the quota, the bar and its legend turn red (the warning's words say it without colour).
  byId('storage').classList.toggle('high', quota !== null && held >= quota * NEAR_FULL)
  byId('total-size').textContent = formatBytes(used)
  byId('storage-reserved').textContent = formatBytes(reserved)
  byId('max-storage').textContent = quota === null ? 'Unlimited' : formatBytes(quota)
  byId('storage-free-item').hidden = quota === null
  const bar = byId('storage-bar')
  // A meter needs a maximum: without a quota (or with none to fill), the figures and the sentence say it all.
  bar.hidden = quota === null || quota === 0
  const parts = reserved > 0 ? `${formatBytes(used)} used and ${formatBytes(reserved)} reserved` : `${formatBytes(used)} used`
  if (quota === null) {
    byId('storage-summary').textContent = `${parts}; no storage quota (unlimited).`
    warn(null, null)
    return
  }
  const free = Math.max(0, quota - held)
  byId('storage-free').textContent = formatBytes(free)
  const summary = quota > 0 ? `${parts} of ${formatBytes(quota)} (${percentOf(held, quota)})` : `${parts} of a quota of 0 B`
  byId('storage-summary').textContent = `${summary}.`
  if (quota > 0) {
    const usedShown = Math.min(used, quota)
    bar.setAttribute('aria-valuemax', String(quota))
    bar.setAttribute('aria-valuenow', String(Math.min(held, quota)))
    bar.setAttribute('aria-valuetext', summary)
    setWidth(bar.querySelector('.used'), usedShown, quota)
    setWidth(bar.querySelector('.reserved'), Math.min(reserved, quota - usedShown), quota)
  }
  if (used > quota) {
    warn(
      'over',
      'Over the quota.',
      `Your files take ${formatBytes(used - quota)} more than the quota allows. Uploads are refused until you delete at least that much, or the operator raises the quota.`,
    )
  } else if (quota === 0) {
    warn(
      'full',
      'No storage.',
      'Your plan includes no storage, so uploads are refused. Ask the operator for a plan or a quota with storage.',
    )
  } else if (held >= quota) {
    warn(
      'full',
      'Full.',
      reserved > 0
        ? 'Uploads in progress hold the rest of the quota; any other upload is refused. Delete files you no longer need, or ask the operator for a larger quota.'
        : 'Uploads are refused until you delete files, or the operator raises the quota.',
    )
  } else if (held >= quota * NEAR_FULL) {
    warn(
      'near',
      'Almost full.',
      `Only ${formatBytes(free)} left: a larger upload is refused. Delete files you no longer need, or ask the operator for a larger quota.`,
    )
  } else warn(null, null)
}

async function load() {
  const session = await initPage()
  const usage = await api('usage')
  byId('plan').textContent = `${usage.plan}${session.account.api_access ? '' : ' (no API access)'}`
  byId('total-files').textContent = formatNumber(usage.stats.total_files)
  byId('total-downloads').textContent = formatNumber(usage.stats.total_downloads)
  byId('max-file-size').textContent = formatBytes(usage.limits.max_file_size)
  showStorage(usage.stats.total_size, usage.stats.storage_reserved, usage.limits.max_storage)
  showBar('uploads', usage.stats.uploads_today, usage.limits.daily_uploads)
  showBar('requests', usage.requests_today, usage.limits.requests_per_day)
  byId('requests-text').textContent += `; at most ${formatNumber(usage.limits.requests_per_minute)} per minute.`
  document.body.setAttribute('data-ready', 'true')
}

load().catch(reportLoadError)
