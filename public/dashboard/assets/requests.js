// The Upload requests page (issue 34, ../shared/spec/upload-requests.md): a form that creates a
// request and shows its link with a copy button; the account's requests with their counters, link,
// Close and Delete; and per request the files it received, refreshed while they are open and the
// page is in view. Every value from the server goes in with textContent, never as HTML; every
// change carries the CSRF header (common.js's api()).
import {
  api,
  cell,
  confirmWith,
  clearFeedback,
  copyAt,
  copyFieldAt,
  formatBytes,
  formatDate,
  formatNumber,
  initPage,
  reportLoadError,
  say,
} from './common.js'

/** How often an open list of files (and its request's counters) is asked again while the page is in view. */
const POLL_MS = 3_000
const FILES_PAGE_SIZE = 50
/** The operator's default maximum (FILESHARE_UPLOAD_REQUEST_MAX_DAYS); the server has the last word. */
const MAX_DAYS = 90
const MB = 1_048_576

const byId = (id) => document.getElementById(id)
const status = byId('status')
const list = byId('requests-list')
const noRequests = byId('no-requests')
const summary = byId('requests-summary')
const template = byId('request-template')
const form = byId('create-form')
const formError = byId('form-error')
const expiresChoice = byId('request-expires')
const daysField = byId('days-field')
const dateField = byId('date-field')
const newRequest = byId('new-request')
const newRequestUrl = byId('new-request-url')
const confirmDialog = byId('confirm-request')

/** The cards on the page, by request_id: `{ item, update(request), refreshFiles(), watching() }`. */
const cards = new Map()
/** The plan's largest file in bytes, from `usage` (the hint and the check before sending). */
let planMaxFileSize = null

// ---- How a request reads ----

const STATUS_TEXT = { active: 'Active', expired: 'Expired', closed: 'Closed', full: 'Full' }
const STATUS_BADGE = { active: 'active', expired: 'expired', closed: 'revoked', full: 'exhausted' }

/** A length of time in seconds, in words: "1 day", "30 days", "2 hours". */
function duration(seconds) {
  const units = [
    [31_536_000, 'year'],
    [86_400, 'day'],
    [3_600, 'hour'],
    [60, 'minute'],
    [1, 'second'],
  ]
  for (const [size, name] of units) {
    if (seconds % size === 0) {
      const count = seconds / size
      return `${formatNumber(count)} ${name}${count === 1 ? '' : 's'}`
    }
  }
  return `${formatNumber(seconds)} seconds`
}

function filesText(request) {
  const received = formatNumber(request.files_received)
  return request.max_files === null ? `${received} (no limit)` : `${received} of ${formatNumber(request.max_files)}`
}

function bytesText(request) {
  const received = formatBytes(request.bytes_received)
  return request.max_total_size === null ? received : `${received} of ${formatBytes(request.max_total_size)}`
}

/** Gives every id in `root` the prefix, and every reference to one (for, aria-*) too. */
function prefixIds(root, prefix) {
  for (const element of [root, ...root.querySelectorAll('[id]')]) if (element.id) element.id = prefix + element.id
  for (const attribute of ['for', 'aria-labelledby', 'aria-describedby', 'aria-controls']) {
    for (const element of root.querySelectorAll(`[${attribute}]`)) {
      const ids = element.getAttribute(attribute).split(' ')
      element.setAttribute(attribute, ids.map((id) => prefix + id).join(' '))
    }
  }
}

/** Asks before a close or a delete; true when confirmed. */
async function confirmed({ title, effect, action, danger }, request) {
  byId('confirm-request-title').textContent = title
  byId('confirm-request-effect').textContent = effect
  const confirm = byId('confirm-request-action')
  confirm.textContent = action
  confirm.className = danger ? 'danger' : ''
  return (await confirmWith(confirmDialog, byId('confirm-request-name'), request.label)) === 'confirm'
}

// ---- One request's card ----

function fileRow(file) {
  const row = document.createElement('tr')
  row.dataset.fileId = String(file.file_id)
  const download = cell('', '', 'link')
  const link = document.createElement('a')
  link.href = file.public_link
  link.textContent = 'Download'
  link.rel = 'noopener noreferrer'
  link.setAttribute('aria-label', `Download ${file.filename}`)
  download.append(link)
  row.append(
    cell(file.filename, 'Name', 'name'),
    cell(formatBytes(file.size), 'Size', 'num size'),
    cell(formatDate(file.upload_date), 'Uploaded (UTC)', 'date'),
    cell(file.expires_at ? formatDate(file.expires_at) : 'never', 'Expires (UTC)', 'date'),
    download,
  )
  return row
}

function requestCard(initial) {
  const item = template.content.firstElementChild.cloneNode(true)
  prefixIds(item, `request-${initial.request_id}-`)
  item.dataset.requestId = String(initial.request_id)
  const find = (selector) => item.querySelector(selector)
  const itemStatus = find('.request-status')
  const itemError = find('.request-error')
  const copy = find('.copy-link')
  const toggleFiles = find('.toggle-files')
  const close = find('.close-request')
  const remove = find('.delete')
  const panel = find('.request-files-panel')
  const loading = find('.files-loading')
  const table = find('.request-files-table')
  const tbody = table.querySelector('tbody')
  const noFiles = find('.no-files')
  const older = find('.older')
  let request = initial
  /** The files shown, newest first, and where the next older page starts (null: none). */
  let files = []
  let nextBeforeId = null
  let loadedOnce = false
  let busy = false

  const clearMessages = () => {
    say(itemStatus, '')
    say(itemError, '')
  }

  function update(fresh) {
    request = fresh
    card.request = fresh
    find('.request-label').textContent = fresh.label
    const badge = find('.request-state')
    badge.textContent = STATUS_TEXT[fresh.status] ?? fresh.status
    badge.className = `badge request-state ${STATUS_BADGE[fresh.status] ?? 'revoked'}`
    item.classList.toggle('inactive', fresh.status !== 'active')
    const message = find('.request-message')
    message.textContent = fresh.message ?? ''
    message.hidden = !fresh.message
    find('.request-files').textContent = filesText(fresh)
    find('.request-bytes').textContent = bytesText(fresh)
    find('.request-expires').textContent = `${formatDate(fresh.expires_at)} UTC`
    find('.request-max-file-size').textContent = fresh.max_file_size === null ? "The plan's" : formatBytes(fresh.max_file_size)
    find('.request-file-lifetime').textContent = fresh.file_expires_in === null ? 'Until deleted' : duration(fresh.file_expires_in)
    find('.request-password').textContent = fresh.password_protected ? 'Yes' : 'No'
    find('.request-created').textContent = `${formatDate(fresh.created_at)} UTC`
    const url = find('.request-url')
    url.href = fresh.url
    url.textContent = fresh.url
    // The visible words start each button's name (WCAG 2.5.3); the label tells the cards apart.
    copy.setAttribute('aria-label', `Copy link of ${fresh.label}`)
    toggleFiles.setAttribute('aria-label', `Files of ${fresh.label}`)
    close.setAttribute('aria-label', `Close ${fresh.label}`)
    remove.setAttribute('aria-label', `Delete ${fresh.label}`)
    close.hidden = fresh.status === 'closed'
  }

  function showFiles() {
    tbody.replaceChildren(...files.map(fileRow))
    loading.hidden = true
    table.hidden = files.length === 0
    noFiles.hidden = files.length > 0
    older.hidden = nextBeforeId === null
  }

  /**
   * Asks for the newest files again (and the request, for its counters): the files newer than those
   * shown go on top and are announced; the older pages already shown stay.
   */
  async function refreshFiles({ announce = true } = {}) {
    const [{ files: newest, pagination }, { upload_request: fresh }] = await Promise.all([
      api(`upload-requests/${request.request_id}/files?limit=${FILES_PAGE_SIZE}`),
      api(`upload-requests/${request.request_id}`),
    ])
    const known = new Set(files.map((file) => file.file_id))
    const arrived = loadedOnce ? newest.filter((file) => !known.has(file.file_id)) : []
    const oldestNew = newest.length > 0 ? newest[newest.length - 1].file_id : Infinity
    const olderShown = files.filter((file) => file.file_id < oldestNew)
    if (olderShown.length === 0 || pagination.next_before_id === null) nextBeforeId = pagination.next_before_id
    files = pagination.next_before_id === null ? newest : [...newest, ...olderShown]
    loadedOnce = true
    update(fresh)
    showFiles()
    if (announce && arrived.length > 0) {
      const names = arrived.map((file) => file.filename).join(', ')
      say(itemStatus, `${arrived.length === 1 ? 'A new file' : `${arrived.length} new files`}: ${names}.`)
    }
  }

  const watching = () => !panel.hidden

  toggleFiles.addEventListener('click', async () => {
    if (!panel.hidden) {
      panel.hidden = true
      toggleFiles.setAttribute('aria-expanded', 'false')
      return
    }
    clearMessages()
    panel.hidden = false
    toggleFiles.setAttribute('aria-expanded', 'true')
    try {
      await refreshFiles({ announce: false })
    } catch (error) {
      loading.hidden = true
      say(itemError, `Could not load the files: ${error.message}`)
    }
  })

  find('.refresh').addEventListener('click', async () => {
    clearMessages()
    try {
      await refreshFiles({ announce: false })
      say(itemStatus, `Refreshed: ${filesText(request)} files, ${bytesText(request)}.`)
    } catch (error) {
      say(itemError, `Could not load the files: ${error.message}`)
    }
  })

  older.addEventListener('click', async () => {
    if (nextBeforeId === null) return
    clearMessages()
    try {
      const { files: page, pagination } = await api(
        `upload-requests/${request.request_id}/files?limit=${FILES_PAGE_SIZE}&before_id=${nextBeforeId}`,
      )
      const first = page[0]
      files = [...files, ...page]
      nextBeforeId = pagination.next_before_id
      showFiles()
      // Focus to the first row that came in (or stays on the list's heading when none did).
      const row = first && tbody.querySelector(`tr[data-file-id="${first.file_id}"] a`)
      ;(row ?? find('h4')).focus()
    } catch (error) {
      say(itemError, `Could not load older files: ${error.message}`)
    }
  })

  copy.addEventListener('click', async () => {
    clearMessages()
    await copyAt(copy, request.url, `the link of ${request.label}`)
  })

  close.addEventListener('click', async () => {
    if (busy) return
    const ok = await confirmed(
      {
        title: 'Close this request?',
        effect:
          'Its link stops working at once and uploads in progress end. The files already received stay in your files. A closed request cannot be opened again.',
        action: 'Close request',
      },
      request,
    )
    if (!ok) return
    busy = true
    clearMessages()
    try {
      const { upload_request: closed } = await api(`upload-requests/${request.request_id}/close`, { method: 'POST' })
      update(closed)
      // The Close button is gone: focus goes to the card's Delete button, next to where it was.
      remove.focus()
      say(itemStatus, `Closed ${closed.label}: its link no longer takes files.`)
    } catch (error) {
      say(itemError, `Could not close it: ${error.message}`)
    } finally {
      busy = false
    }
  })

  remove.addEventListener('click', async () => {
    if (busy) return
    const ok = await confirmed(
      {
        title: 'Delete this request?',
        effect: 'Its link stops working at once and it leaves this list. The files already received stay in your files.',
        action: 'Delete',
        danger: true,
      },
      request,
    )
    if (!ok) return
    busy = true
    clearMessages()
    // Where focus goes once the card is gone: the Delete button that takes this one's place, or the list's heading.
    const deleteButtons = () => [...list.querySelectorAll('button.delete')]
    const place = deleteButtons().indexOf(remove)
    try {
      await api(`upload-requests/${request.request_id}`, { method: 'DELETE' })
      item.remove()
      cards.delete(request.request_id)
      if (newRequest.dataset.requestId === String(request.request_id)) newRequest.hidden = true
      showCount()
      const remaining = deleteButtons()
      ;(remaining[Math.min(Math.max(place, 0), remaining.length - 1)] ?? byId('requests-title')).focus()
      say(status, `Deleted the request ${request.label}; the files it received stay in your files.`)
    } catch (error) {
      say(itemError, `Could not delete it: ${error.message}`)
    } finally {
      busy = false
    }
  })

  const card = { item, update, refreshFiles, watching, request: initial }
  update(initial)
  return card
}

// ---- The list ----

function showCount() {
  const count = cards.size
  noRequests.hidden = count > 0
  list.hidden = count === 0
  const active = [...cards.values()].filter((card) => card.request.status === 'active').length
  summary.textContent = count === 0 ? '' : `${formatNumber(count)} ${count === 1 ? 'request' : 'requests'}, ${formatNumber(active)} active.`
}

/** Puts a request on the page (newest first), or brings its card up to date. */
function place(request) {
  const known = cards.get(request.request_id)
  if (known) {
    known.update(request)
    return known
  }
  const card = requestCard(request)
  cards.set(request.request_id, card)
  const older = [...list.children].find((element) => Number(element.dataset.requestId) < request.request_id)
  list.insertBefore(card.item, older ?? null)
  return card
}

async function loadRequests() {
  const { upload_requests: requests } = await api('upload-requests')
  for (const request of requests) place(request)
  const ids = new Set(requests.map((request) => request.request_id))
  for (const [id, card] of cards) {
    if (!ids.has(id)) {
      card.item.remove()
      cards.delete(id)
    }
  }
  showCount()
}

// ---- Watching files arrive: the open lists, every few seconds, while the page is in view ----

let polling = false
async function poll() {
  if (polling || document.visibilityState !== 'visible') return
  polling = true
  try {
    for (const card of cards.values()) {
      if (!card.watching()) continue
      try {
        await card.refreshFiles()
      } catch {
        // The next round tries again; Refresh says what went wrong.
      }
    }
    if (cards.size > 0) showCount()
  } finally {
    polling = false
  }
}
setInterval(poll, POLL_MS)
// Back in view: at once, rather than at the next tick.
document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'visible') poll()
})

// ---- The form ----

expiresChoice.addEventListener('change', () => {
  const onDate = expiresChoice.value === 'date'
  daysField.hidden = onDate
  dateField.hidden = !onDate
  clearFieldError('days')
  clearFieldError('expires_at')
})

/** Each field the page marks, by the API's name for it (days stands for expires_in). */
const FIELDS = {
  label: 'request-label',
  message: 'request-message',
  days: 'request-days',
  expires_at: 'request-expires-at',
  max_files: 'request-max-files',
  max_file_size: 'request-max-file-size',
  max_total_size: 'request-max-total-size',
  password: 'request-password',
}

function describedBy(element, id, on) {
  const ids = (element.getAttribute('aria-describedby') ?? '').split(' ').filter((value) => value && value !== id)
  if (on) ids.push(id)
  if (ids.length > 0) element.setAttribute('aria-describedby', ids.join(' '))
  else element.removeAttribute('aria-describedby')
}

function setFieldError(name, message) {
  const input = byId(FIELDS[name])
  const error = `${FIELDS[name]}-error`
  say(byId(error), message)
  input.setAttribute('aria-invalid', 'true')
  describedBy(input, error, true)
}

function clearFieldError(name) {
  const input = byId(FIELDS[name])
  const error = `${FIELDS[name]}-error`
  say(byId(error), '')
  input.removeAttribute('aria-invalid')
  describedBy(input, error, false)
}

/** The API's `YYYY-MM-DD HH:MM:SS` from a datetime-local value, which the page labels as UTC. */
function apiTime(value) {
  const [day, time] = value.split('T')
  return `${day} ${time.length === 5 ? `${time}:00` : time.slice(0, 8)}`
}

/** A size field in MB as bytes: undefined when empty, or a message. */
function megabytes(text, what) {
  if (text === '') return { value: undefined }
  const number = Number(text)
  if (!Number.isFinite(number) || number <= 0) return { problem: `${what} must be a number of MB above 0, such as 25 or 0.5.` }
  return { value: Math.max(1, Math.round(number * MB)) }
}

/** The request's body, or null after marking every field at fault (focus on the first). */
function readForm() {
  for (const name of Object.keys(FIELDS)) clearFieldError(name)
  const faults = []
  const body = {}
  const fields = form.elements

  const label = fields.label.value.trim()
  if (label === '') faults.push(['label', 'Give the request a label, such as "Invoices for March".'])
  else if (label.length > 200) faults.push(['label', 'The label is at most 200 characters.'])
  else body.label = label

  const message = fields.message.value
  if (message.length > 2000) faults.push(['message', 'The message is at most 2,000 characters.'])
  else if (message.trim() !== '') body.message = message

  if (expiresChoice.value === 'date') {
    const value = fields.expires_at.value
    if (!value) faults.push(['expires_at', 'Choose the date and time of the expiry (UTC).'])
    else {
      const at = apiTime(value)
      const ms = Date.parse(`${at.replace(' ', 'T')}Z`)
      if (!(ms > Date.now())) faults.push(['expires_at', 'Choose a date and time in the future (UTC).'])
      else if (ms - Date.now() > MAX_DAYS * 86_400_000) faults.push(['expires_at', `Choose a date at most ${MAX_DAYS} days ahead.`])
      else body.expires_at = at
    }
  } else {
    const days = Number(fields.days.value)
    if (fields.days.value === '' || !Number.isInteger(days) || days < 1 || days > MAX_DAYS) {
      faults.push(['days', `Give a whole number of days from 1 to ${MAX_DAYS}.`])
    } else body.expires_in = days * 86_400
  }

  if (fields.max_files.value !== '') {
    const count = Number(fields.max_files.value)
    if (!Number.isInteger(count) || count < 1 || count > 10_000)
      faults.push(['max_files', 'Give a whole number of files from 1 to 10,000.'])
    else body.max_files = count
  }

  const fileSize = megabytes(fields.max_file_size.value.trim(), 'The largest file')
  if (fileSize.problem) faults.push(['max_file_size', fileSize.problem])
  else if (fileSize.value !== undefined && planMaxFileSize !== null && fileSize.value > planMaxFileSize) {
    faults.push(['max_file_size', `Your plan takes files of at most ${formatBytes(planMaxFileSize)}.`])
  } else if (fileSize.value !== undefined) body.max_file_size = fileSize.value

  const totalSize = megabytes(fields.max_total_size.value.trim(), 'All files together')
  if (totalSize.problem) faults.push(['max_total_size', totalSize.problem])
  else if (totalSize.value !== undefined) body.max_total_size = totalSize.value

  const password = fields.password.value
  if (password !== '') {
    const length = [...password].length
    if (length < 8 || length > 1024) faults.push(['password', 'The password needs 8 to 1,024 characters.'])
    else body.password = password
  }

  if (fields.file_expires_in.value !== '') body.file_expires_in = Number(fields.file_expires_in.value)

  if (faults.length > 0) {
    for (const [field, message] of faults) setFieldError(field, message)
    byId(FIELDS[faults[0][0]]).focus()
    return null
  }
  return body
}

/** The field a refusal of the server names ("label must …", "expires_in must …"), or null. */
function fieldOf(error) {
  if (error.code !== 'invalid_parameter') return null
  const named = /^(\w+)/.exec(error.message)?.[1]
  if (named === 'expires_in') return 'days'
  return named && named in FIELDS ? named : null
}

form.addEventListener('submit', async (event) => {
  event.preventDefault()
  say(formError, '')
  say(status, '')
  const body = readForm()
  if (!body) return
  const submit = form.querySelector('button[type=submit]')
  submit.disabled = true
  try {
    const { upload_request: created } = await api('upload-requests', { method: 'POST', body })
    place(created)
    showCount()
    newRequestUrl.value = created.url
    byId('new-request-label').textContent = created.label
    newRequest.dataset.requestId = String(created.request_id)
    clearFeedback(newRequest)
    newRequest.hidden = false
    newRequest.focus()
    form.reset()
    expiresChoice.dispatchEvent(new Event('change'))
    say(status, `Created the request ${created.label}. Send its link to the person who has the files.`)
  } catch (error) {
    const field = fieldOf(error)
    if (field) {
      setFieldError(field, error.message)
      byId(FIELDS[field]).focus()
    } else {
      say(formError, `Could not create the request: ${error.message}`)
    }
  } finally {
    submit.disabled = false
  }
})

byId('copy-new-request').addEventListener('click', () => copyFieldAt(byId('copy-new-request'), newRequestUrl, 'the link'))

/** The plan's largest file, for the hint and the check; the page works without it. */
async function loadPlanLimit() {
  try {
    const usage = await api('usage')
    planMaxFileSize = usage.limits.max_file_size
    byId('request-max-file-size-hint').textContent = `Empty: your plan's limit, ${formatBytes(planMaxFileSize)}.`
  } catch {
    // The server checks the size anyway.
  }
}

async function load() {
  await initPage()
  await Promise.all([loadRequests(), loadPlanLimit()])
  document.body.setAttribute('data-ready', 'true')
}

load().catch(reportLoadError)
