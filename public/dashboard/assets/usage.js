import { api, formatBytes, formatNumber, initPage, reportLoadError } from './common.js'

/** Fills one bar (role="meter") and its sentence. */
function showBar(name, used, limit) {
  const bar = document.getElementById(`${name}-bar`)
  const share = limit > 0 ? Math.min(1, used / limit) : 1
  bar.setAttribute('aria-valuemax', String(limit))
  bar.setAttribute('aria-valuenow', String(Math.min(used, limit)))
  bar.setAttribute('aria-valuetext', `${formatNumber(used)} of ${formatNumber(limit)}`)
  bar.classList.toggle('high', share >= 0.9)
  // A style property set from script, not a style attribute: the page's CSP allows it.
  bar.querySelector('.fill').style.width = `${(share * 100).toFixed(1)}%`
  const percent = limit > 0 ? ` (${Math.round(share * 100)}%)` : ''
  document.getElementById(`${name}-text`).textContent = `${formatNumber(used)} of ${formatNumber(limit)}${percent}`
}

async function load() {
  const session = await initPage()
  const usage = await api('usage')
  document.getElementById('plan').textContent = `${usage.plan}${session.account.api_access ? '' : ' (no API access)'}`
  document.getElementById('total-files').textContent = formatNumber(usage.stats.total_files)
  document.getElementById('total-size').textContent = formatBytes(usage.stats.total_size)
  document.getElementById('total-downloads').textContent = formatNumber(usage.stats.total_downloads)
  document.getElementById('max-file-size').textContent = formatBytes(usage.limits.max_file_size)
  showBar('uploads', usage.stats.uploads_today, usage.limits.daily_uploads)
  showBar('requests', usage.requests_today, usage.limits.requests_per_day)
  document.getElementById('requests-text').textContent += `; at most ${formatNumber(usage.limits.requests_per_minute)} per minute.`
  document.body.setAttribute('data-ready', 'true')
}

load().catch(reportLoadError)
