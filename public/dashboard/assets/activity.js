// The Activity page: the account's audit log, newest first, a page at a time, filtered by action and
// day, and exported as CSV. Every value from the server goes in with textContent, never as HTML.
import { api, cell, formatBytes, formatDate, formatNumber, initPage, reportLoadError, say } from './common.js'

const PAGE_SIZE = 20
/** The most the API gives in one page: the export reads the log 100 events at a time. */
const EXPORT_PAGE_SIZE = 100

/** The actions, by family, with the words the page shows for them. */
const FAMILIES = [
  {
    family: 'key',
    label: 'Keys',
    all: 'Every key event',
    actions: [
      ['key.created', 'Key created'],
      ['key.revoked', 'Key revoked'],
      ['key.expired_use', 'Expired key used'],
    ],
  },
  {
    family: 'session',
    label: 'Sign-ins',
    all: 'Every sign-in event',
    actions: [
      ['session.signed_in', 'Signed in'],
      ['session.sign_in_failed', 'Sign-in failed'],
      ['session.signed_out', 'Signed out'],
      ['session.signed_out_everywhere', 'Signed out everywhere'],
    ],
  },
  { family: 'password', label: 'Password', actions: [['password.changed', 'Password changed']] },
  // Protecting the account (issue 37): two-factor sign-in and the email address.
  {
    family: 'two_factor',
    label: 'Two-factor sign-in',
    all: 'Every two-factor event',
    actions: [
      ['two_factor.enabled', 'Two-factor sign-in on'],
      ['two_factor.disabled', 'Two-factor sign-in off'],
      ['two_factor.failed', 'Wrong two-factor code'],
      ['two_factor.recovery_code_used', 'Recovery code used'],
      ['two_factor.recovery_codes_regenerated', 'New recovery codes'],
    ],
  },
  {
    family: 'email',
    label: 'Email address',
    all: 'Every email event',
    actions: [
      ['email.change_requested', 'Email change asked'],
      ['email.change_cancelled', 'Email change withdrawn'],
      ['email.changed', 'Email changed'],
    ],
  },
  {
    family: 'file',
    label: 'Files',
    all: 'Every file event',
    actions: [
      ['file.uploaded', 'File uploaded'],
      ['file.deleted', 'File deleted'],
      ['file.expired', 'File expired'],
      ['file.updated', 'File changed'],
    ],
  },
  // The scanner (issue 35) removed an upload: its details name the file, its size and the signature.
  { family: 'scan', label: 'Virus scanning', actions: [['scan.infected', 'Virus found: file removed']] },
  {
    family: 'link',
    label: 'Links',
    all: 'Every link event',
    actions: [
      ['link.created', 'Link created'],
      ['link.updated', 'Link changed'],
      ['link.revoked', 'Link revoked'],
      ['link.rotated', 'Link rotated'],
      ['link.password_failed', 'Wrong link password'],
      ['link.exhausted', 'Link used up'],
    ],
  },
  {
    family: 'webhook',
    label: 'Webhooks',
    all: 'Every webhook event',
    actions: [
      ['webhook.created', 'Webhook endpoint added'],
      ['webhook.updated', 'Webhook endpoint changed'],
      ['webhook.deleted', 'Webhook endpoint deleted'],
      ['webhook.disabled', 'Webhook endpoint turned off by the server'],
    ],
  },
  {
    family: 'upload_request',
    label: 'Upload requests',
    all: 'Every upload request event',
    actions: [
      ['upload_request.created', 'Upload request created'],
      ['upload_request.updated', 'Upload request changed'],
      ['upload_request.closed', 'Upload request closed'],
      ['upload_request.deleted', 'Upload request deleted'],
    ],
  },
]
const ACTION_LABELS = new Map(FAMILIES.flatMap(({ actions }) => actions))

const byId = (id) => document.getElementById(id)
const status = byId('status')
const filters = byId('filters')
const actionSelect = byId('filter-action')
const sinceInput = byId('filter-since')
const filterError = byId('filter-error')
const eventsBody = byId('events-body')
const noEvents = byId('no-events')
const pager = byId('events-pager')
const newer = byId('newer')
const older = byId('older')
const exportButton = byId('export-csv')

/** The filters in force (as the page's address keeps them), and where each page shown so far began. */
let current = { action: '', since: '' }
let pageStarts = [null]
let nextBeforeId = null

function fillActions() {
  for (const { family, label, all, actions } of FAMILIES) {
    const group = document.createElement('optgroup')
    group.label = label
    if (all) group.append(new Option(all, `${family}.*`))
    for (const [action, words] of actions) group.append(new Option(words, action))
    actionSelect.append(group)
  }
}

// ---- How an event reads ----

function actorText(actor) {
  const name = actor.name ? ` ${actor.name}` : ''
  switch (actor.type) {
    case 'key':
      return `API key${actor.name ? ` “${actor.name}”` : ''}${actor.id === null ? '' : ` #${actor.id}`}`
    case 'session':
      return `Dashboard: ${actor.name ?? (actor.id === null ? 'signed in' : `account #${actor.id}`)}`
    case 'operator':
      return 'Operator (command line)'
    case 'public':
      return 'Visitor without a key'
    case 'system':
      return 'The server (automatic)'
    default:
      return `${actor.type}${name}`
  }
}

function targetText(target) {
  if (!target) return '—'
  return target.id === null ? target.type : `${target.type} #${target.id}`
}

/** One detail's value in words: sizes in bytes, times in UTC, lists with commas; never HTML. */
function detailValue(name, value) {
  if (value === null || value === undefined) return 'none'
  if (name === 'scopes' && Array.isArray(value) && value.includes('*')) return 'every scope (*)'
  if (typeof value === 'boolean') return value ? 'yes' : 'no'
  if (typeof value === 'number') {
    if (name === 'size') return formatBytes(value)
    if (name.endsWith('_at')) return `${formatDate(new Date(value).toISOString())} UTC`
    if (name.endsWith('_id')) return `#${value}`
    return formatNumber(value)
  }
  if (Array.isArray(value)) {
    if (value.length === 0) return 'none'
    return value.map((item) => (typeof item === 'object' && item !== null ? JSON.stringify(item) : String(item))).join(', ')
  }
  if (typeof value === 'object') return JSON.stringify(value)
  if (name.endsWith('_at')) return formatDate(value)
  return String(value)
}

const DETAIL_NAMES = { filename: 'file name', file_id: 'file', is_default: 'default link' }

/** The details as lines of "name: value". */
function detailLines(details) {
  return Object.entries(details ?? {}).map(
    ([name, value]) => `${DETAIL_NAMES[name] ?? name.replaceAll('_', ' ')}: ${detailValue(name, value)}`,
  )
}

/** The action's name in code, with places to break after its dots and underscores (session.signed_out_everywhere). */
function actionCode(name) {
  const code = document.createElement('code')
  for (const part of name.split(/(?<=[._])/)) {
    if (code.childNodes.length > 0) code.append(document.createElement('wbr'))
    code.append(part)
  }
  return code
}

function eventRow(event) {
  const row = document.createElement('tr')
  row.dataset.eventId = String(event.event_id)
  // The words and the action's name under them, in one box (one item of a phone's stacked card).
  const action = cell('', 'Action', 'action')
  const box = document.createElement('span')
  box.textContent = ACTION_LABELS.get(event.action) ?? event.action
  box.append(' ', actionCode(event.action))
  action.append(box)
  const details = cell('', 'Details', 'details')
  const lines = detailLines(event.details)
  if (lines.length > 0) {
    const list = document.createElement('ul')
    for (const line of lines) {
      const item = document.createElement('li')
      item.textContent = line
      list.append(item)
    }
    details.append(list)
  } else {
    details.textContent = '—'
  }
  row.append(
    cell(event.at.slice(0, 16), 'Time (UTC)', 'date'),
    action,
    cell(actorText(event.actor), 'Actor', 'actor'),
    cell(event.ip ?? 'not recorded', 'Address', 'address'),
    cell(targetText(event.target), 'Target', 'target'),
    details,
  )
  return row
}

// ---- Loading a page ----

function query(filter, limit, beforeId) {
  const params = new URLSearchParams({ limit: String(limit) })
  if (beforeId !== null && beforeId !== undefined) params.set('before_id', String(beforeId))
  if (filter.action) params.set('action', filter.action)
  if (filter.since) params.set('since', filter.since)
  return `audit-events?${params}`
}

const upperFirst = (text) => text.charAt(0).toUpperCase() + text.slice(1)
const lowerFirst = (text) => text.charAt(0).toLowerCase() + text.slice(1)

/** The filters in words: "every file event, from 2026-11-01", or "all events". */
function describeFilters(filter) {
  const parts = []
  if (filter.action) parts.push(actionSelect.querySelector(`option[value="${CSS.escape(filter.action)}"]`)?.textContent ?? filter.action)
  if (filter.since) parts.push(`from ${filter.since}`)
  return parts.length > 0 ? parts.join(', ') : 'all events'
}

async function showPage({ focus = false } = {}) {
  const beforeId = pageStarts[pageStarts.length - 1]
  byId('events-table').setAttribute('aria-busy', 'true')
  try {
    const page = await api(query(current, PAGE_SIZE, beforeId))
    nextBeforeId = page.pagination.next_before_id
    eventsBody.replaceChildren(...page.events.map(eventRow))
    const first = pageStarts.length === 1
    noEvents.hidden = page.events.length > 0
    noEvents.textContent = current.action || current.since ? 'No events match these filters.' : 'Nothing has happened in this account yet.'
    byId('events-table').hidden = page.events.length === 0
    pager.hidden = first && nextBeforeId === null
    newer.disabled = first
    older.disabled = nextBeforeId === null
    byId('page-number').textContent = `Page ${pageStarts.length}`
    byId('events-summary').textContent = `${upperFirst(describeFilters(current))}; newest first, ${PAGE_SIZE} a page.`
    if (focus) byId('events-title').focus()
  } finally {
    byId('events-table').removeAttribute('aria-busy')
  }
}

function readAddress() {
  const params = new URLSearchParams(location.search)
  return { action: params.get('action') ?? '', since: params.get('since') ?? '' }
}

/** The filters go into the page's address, so that a reload keeps them. */
function writeAddress(filter) {
  const params = new URLSearchParams()
  if (filter.action) params.set('action', filter.action)
  if (filter.since) params.set('since', filter.since)
  const search = params.toString()
  history.replaceState(null, '', search ? `?${search}` : location.pathname)
}

function showFilters(filter) {
  // An action the select does not offer (an address typed by hand) is still sent: the server judges it.
  if (filter.action && !actionSelect.querySelector(`option[value="${CSS.escape(filter.action)}"]`)) {
    actionSelect.append(new Option(filter.action, filter.action))
  }
  actionSelect.value = filter.action
  sinceInput.value = filter.since
}

async function applyFilters(filter) {
  say(filterError, '')
  sinceInput.removeAttribute('aria-invalid')
  const previous = { current, pageStarts, nextBeforeId }
  current = filter
  pageStarts = [null]
  try {
    await showPage()
    writeAddress(filter)
    say(status, `Showing ${lowerFirst(describeFilters(filter))}.`)
  } catch (error) {
    ;({ current, pageStarts, nextBeforeId } = previous)
    say(filterError, error.message)
    if (error.code === 'invalid_parameter' && /since/.test(error.message)) {
      sinceInput.setAttribute('aria-invalid', 'true')
      sinceInput.focus()
    }
  }
}

/** The filters as the form has them, or null after saying what is wrong. */
function formFilter() {
  // A date field with a half-typed date has no value, but is not valid either: say so rather than show everything.
  if (sinceInput.validity.badInput) {
    say(filterError, 'Give a whole date (year, month and day), or clear the field.')
    sinceInput.setAttribute('aria-invalid', 'true')
    sinceInput.focus()
    return null
  }
  return { action: actionSelect.value, since: sinceInput.value }
}

filters.addEventListener('submit', (event) => {
  event.preventDefault()
  const filter = formFilter()
  if (filter) void applyFilters(filter)
})

byId('clear-filters').addEventListener('click', () => {
  showFilters({ action: '', since: '' })
  void applyFilters({ action: '', since: '' })
})

older.addEventListener('click', async () => {
  if (nextBeforeId === null) return
  pageStarts.push(nextBeforeId)
  try {
    await showPage({ focus: true })
  } catch (error) {
    pageStarts.pop()
    say(status, `Could not load older events: ${error.message}`)
  }
})

newer.addEventListener('click', async () => {
  if (pageStarts.length === 1) return
  const left = pageStarts.pop()
  try {
    await showPage({ focus: true })
  } catch (error) {
    pageStarts.push(left)
    say(status, `Could not load newer events: ${error.message}`)
  }
})

// ---- CSV export (RFC 4180), built here from every page that matches the filters ----

const CSV_COLUMNS = [
  'event_id',
  'at_utc',
  'action',
  'actor_type',
  'actor_id',
  'actor_name',
  'ip',
  'user_agent',
  'target_type',
  'target_id',
  'details',
]

/**
 * One field: a text that a spreadsheet would run as a formula (it starts with =, +, -, @, a tab or
 * a carriage return) gets a leading apostrophe; a field with a comma, a quote or a line break is
 * quoted, its quotes doubled.
 */
function csvField(value) {
  let text = value === null || value === undefined ? '' : String(value)
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text
}

function csvRecord(event) {
  return [
    event.event_id,
    event.at,
    event.action,
    event.actor.type,
    event.actor.id,
    event.actor.name,
    event.ip,
    event.user_agent,
    event.target?.type,
    event.target?.id,
    JSON.stringify(event.details ?? {}),
  ]
    .map(csvField)
    .join(',')
}

function download(text, name) {
  // A byte order mark, so that spreadsheets read the file as UTF-8.
  const url = URL.createObjectURL(new Blob(['\ufeff', text], { type: 'text/csv;charset=utf-8' }))
  const link = document.createElement('a')
  link.href = url
  link.download = name
  link.hidden = true
  document.body.append(link)
  link.click()
  link.remove()
  setTimeout(() => URL.revokeObjectURL(url), 60_000)
}

exportButton.addEventListener('click', async () => {
  // What the form says, shown in the table first if it is not already: the file holds what the page shows.
  const filter = formFilter()
  if (!filter) return
  if (filter.action !== current.action || filter.since !== current.since) {
    await applyFilters(filter)
    if (filter !== current) return
  }
  exportButton.disabled = true
  say(status, 'Exporting…')
  const lines = [CSV_COLUMNS.join(',')]
  let beforeId = null
  try {
    do {
      const page = await api(query(filter, EXPORT_PAGE_SIZE, beforeId))
      for (const event of page.events) lines.push(csvRecord(event))
      beforeId = page.pagination.next_before_id
      if (beforeId !== null) say(status, `Exporting… ${formatNumber(lines.length - 1)} events so far.`)
    } while (beforeId !== null)
    const day = new Date().toISOString().slice(0, 10)
    download(`${lines.join('\r\n')}\r\n`, `fileshare-activity-${day}.csv`)
    const count = lines.length - 1
    say(status, `Exported ${formatNumber(count)} ${count === 1 ? 'event' : 'events'} (${describeFilters(filter)}).`)
  } catch (error) {
    say(status, `Could not export: ${error.message}`)
  } finally {
    exportButton.disabled = false
  }
})

async function load() {
  await initPage()
  fillActions()
  current = readAddress()
  showFilters(current)
  try {
    await showPage()
  } catch (error) {
    say(filterError, error.message)
  }
  document.body.setAttribute('data-ready', 'true')
}

load().catch(reportLoadError)
