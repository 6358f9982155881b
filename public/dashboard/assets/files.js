import {
  api,
  ApiError,
  button,
  cell,
  confirmWith,
  clearFeedback,
  copyAt,
  csrfHeader,
  feedbackAt,
  formatBytes,
  formatDate,
  formatNumber,
  initPage,
  reportLoadError,
  say,
} from './common.js'
import { fileIcon } from './file-icons.js'
import { filePanel, fillExpiryChoices } from './links.js'
import { createUploads } from './uploads.js'

/** How often a file still being checked for viruses is asked about again, while the page is in view. */
const SCAN_POLL_MS = 2000
/** How many of the latest `scan.infected` events the notice of removed files looks at. */
const INFECTED_EVENTS = 20
const status = document.getElementById('status')
const body = document.getElementById('files-body')
const filesList = document.getElementById('files-list')
const listTitle = document.getElementById('list-title')
const empty = document.getElementById('empty')
const emptyUpload = document.getElementById('empty-upload')
const pager = document.getElementById('pager')
const pageNumbers = document.getElementById('page-numbers')
const pageShort = document.getElementById('page-short')
const pageInfo = document.getElementById('page-info')
const pagerLinks = {
  first: document.getElementById('first'),
  prev: document.getElementById('prev'),
  next: document.getElementById('next'),
  last: document.getElementById('last'),
}
const dropzone = document.getElementById('dropzone')
const input = document.getElementById('file-input')
const uploadsPanel = document.getElementById('uploads-panel')
const uploads = document.getElementById('uploads')
const clearUploads = document.getElementById('clear-uploads')
const limitsText = document.getElementById('upload-limits')
const confirmDialog = document.getElementById('confirm-delete')
const uploadExpires = document.getElementById('upload-expires')
const infectedNotice = document.getElementById('infected-notice')
const infectedList = document.getElementById('infected-list')
/** The open panels of links and expiry, by file id: kept across reloads of the list, with what is typed in them. */
const panels = new Map()
const find = document.getElementById('find')
const findQuery = document.getElementById('find-q')
const findType = document.getElementById('find-type')
const findState = document.getElementById('find-state')
const findSort = document.getElementById('find-sort')
const findLimit = document.getElementById('find-limit')
const noMatch = document.getElementById('no-match')
const noMatchText = document.getElementById('no-match-text')
const clearSearch = document.getElementById('clear-search')
const caption = document.getElementById('files-caption')
const selection = document.getElementById('selection')
const selectPage = document.getElementById('select-page')
const selectionBar = document.getElementById('selection-bar')
const selectionCount = document.getElementById('selection-count')
const selectionSaid = document.getElementById('selection-said')
const downloadSelected = document.getElementById('download-selected')
const deleteSelected = document.getElementById('delete-selected')
const clearSelection = document.getElementById('clear-selection')
const confirmMany = document.getElementById('confirm-delete-many')
/** The files chosen on this page (id → name). Only this page's: a page change empties it. */
const selected = new Map()

/** The list's orders as the page names them in its address (`?sort=largest`): each an API sort and order. */
const SORTS = {
  newest: { sort: 'upload_date', order: 'desc', words: 'newest first' },
  oldest: { sort: 'upload_date', order: 'asc', words: 'oldest first' },
  name: { sort: 'filename', order: 'asc', words: 'by name, A to Z' },
  'name-desc': { sort: 'filename', order: 'desc', words: 'by name, Z to A' },
  largest: { sort: 'size', order: 'desc', words: 'largest first' },
  smallest: { sort: 'size', order: 'asc', words: 'smallest first' },
  downloads: { sort: 'download_count', order: 'desc', words: 'most downloaded first' },
}
/**
 * The kinds of file the Type filter offers (in the address: `?type=images`), each the API's `type`
 * values (GET files?type=…, any of them): a top-level type, or the content types the server gives
 * those files' extensions. The same kinds as the icons (assets/file-icons.js), the rarer ones left out.
 */
const TYPES = {
  images: { types: ['image'], words: 'images' },
  video: { types: ['video'], words: 'video' },
  audio: { types: ['audio'], words: 'audio' },
  pdf: { types: ['application/pdf'], words: 'PDF' },
  documents: {
    types: [
      'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
      'application/msword',
      'application/vnd.oasis.opendocument.text',
      'application/rtf',
      'application/epub+zip',
    ],
    words: 'documents',
  },
  spreadsheets: {
    types: [
      'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
      'application/vnd.ms-excel',
      'application/vnd.oasis.opendocument.spreadsheet',
      'text/csv',
    ],
    words: 'spreadsheets',
  },
  archives: {
    types: [
      'application/zip',
      'application/gzip',
      'application/x-tar',
      'application/x-7z-compressed',
      'application/vnd.rar',
      'application/x-bzip2',
      'application/x-xz',
    ],
    words: 'archives',
  },
  text: { types: ['text'], words: 'text' },
}
/** The states the State filter offers (in the address: `?state=expiring`), each the API's `state`. */
const STATES = {
  expiring: { state: 'expiring', words: 'expiring' },
  'expired-links': { state: 'expired_links', words: 'with expired links' },
  requested: { state: 'from_upload_request', words: 'from an upload request' },
}
const PAGE_SIZES = [10, 20, 50, 100]
/** What the list shows with nothing in the address: every file, newest first, 20 a page. */
const DEFAULT_VIEW = { q: '', type: '', state: '', sort: 'newest', limit: 20 }
/** The API's longest search (GET files?q=). */
const QUERY_MAX = 255

/** A search as the API takes it: no control characters (no stored name has one), at most QUERY_MAX characters. */
function cleanQuery(text) {
  return [...text.replace(/\p{Cc}/gu, '')].slice(0, QUERY_MAX).join('')
}

/**
 * The list's place and view, kept in the address (`?q=report&sort=largest&limit=50&page=3`), so
 * that a reload and Back keep them; a value the page does not offer is read as its default.
 */
function pageFromAddress() {
  const value = Number(new URLSearchParams(location.search).get('page'))
  return Number.isInteger(value) && value >= 1 ? value : 1
}
function viewFromAddress() {
  const params = new URLSearchParams(location.search)
  const sort = params.get('sort')
  const limit = Number(params.get('limit'))
  const type = params.get('type')
  const state = params.get('state')
  return {
    q: cleanQuery(params.get('q') ?? ''),
    type: Object.hasOwn(TYPES, type) ? type : DEFAULT_VIEW.type,
    state: Object.hasOwn(STATES, state) ? state : DEFAULT_VIEW.state,
    sort: Object.hasOwn(SORTS, sort) ? sort : DEFAULT_VIEW.sort,
    limit: PAGE_SIZES.includes(limit) ? limit : DEFAULT_VIEW.limit,
  }
}
function addressOf(number) {
  const url = new URL(location.href)
  const shown = { q: view.q, type: view.type, state: view.state, sort: view.sort, limit: view.limit, page: number }
  const fallback = { ...DEFAULT_VIEW, page: 1 }
  // In one order, whatever order they were chosen in: the same view has the same address.
  const params = new URLSearchParams()
  for (const [name, value] of Object.entries(shown)) if (value !== fallback[name]) params.set(name, String(value))
  for (const [name, value] of url.searchParams) if (!Object.hasOwn(shown, name)) params.append(name, value)
  url.search = params.toString()
  return url.pathname + url.search + url.hash
}

let page = pageFromAddress()
let view = viewFromAddress()
let pages = 0
let maxFileSize = Infinity
/** The account's storage as the last `usage` gave it: used and reserved bytes, and the quota (`null`: unlimited). */
let storage = { used: 0, reserved: 0, quota: null }
/** Why uploads are off (a plan without uploads, none left today), or '' when they are on. */
let uploadsOff = ''

function copyButton(file) {
  // Answered at the button ("Copied", and a live region beside it), not in the status line far above.
  const copy = button('Copy link', () => copyAt(copy, file.public_link, `the public link of ${file.filename}`))
  // The visible text starts the name (WCAG 2.5.3): speech users say what they see.
  copy.setAttribute('aria-label', `Copy link to ${file.filename}`)
  copy.dataset.link = file.public_link
  return copy
}

/** A file's virus scan (`file.scan`, issue 35) in words: its badge, and what it means for the file's link. */
const SCAN_WORDS = {
  pending: 'Checking for viruses…',
  clean: 'Scanned',
  skipped: 'Not scanned: too large',
  error: 'Could not be scanned',
  infected: 'Virus found',
}
/** The server's scan mode (the session's scan_mode): in required mode links wait for the scan. */
let scanMode = 'off'
const SCAN_LINK_HINTS = {
  required: {
    pending: 'The link downloads once the check is done.',
    error: 'Too large for the virus scanner: the link will not download.',
  },
  async: {
    pending: 'The link works already; the file is removed if a virus is found.',
    error: 'Too large for the virus scanner: served unscanned.',
  },
}

function scanBadge(scan) {
  const badge = document.createElement('span')
  badge.className = `badge scan scan-${scan.status}`
  badge.textContent = SCAN_WORDS[scan.status] ?? scan.status
  return badge
}

/**
 * The row's checkbox, at the start of the name's cell (a column of its own would move every other
 * cell's index), in a label larger than the box: a finger's size on a phone.
 */
function selectBox(file) {
  const label = document.createElement('label')
  label.className = 'select-box'
  const check = document.createElement('input')
  check.type = 'checkbox'
  check.className = 'select-file'
  check.checked = selected.has(file.file_id)
  check.setAttribute('aria-label', `Select ${file.filename}`)
  check.addEventListener('change', () => {
    if (check.checked) selected.set(file.file_id, file.filename)
    else selected.delete(file.file_id)
    showSelection({ announce: true })
  })
  label.append(check)
  return label
}

function fileRow(file) {
  const row = document.createElement('tr')
  row.className = 'file'
  row.dataset.fileId = String(file.file_id)
  row.dataset.name = file.filename
  row.classList.toggle('chosen', selected.has(file.file_id))
  const name = cell('', 'Name', 'name')
  name.setAttribute('title', file.content_type)
  // The icon of the file's kind, then its name; what is said of the file goes under both.
  const text = document.createElement('div')
  text.className = 'name-text'
  const filename = document.createElement('span')
  filename.className = 'file-name'
  filename.textContent = file.filename
  text.append(fileIcon(file.content_type, file.filename), filename)
  // A file with an expiry says so under its name (no column: most files have none, and the row has enough).
  if (file.expires_at) {
    const expiry = document.createElement('span')
    expiry.className = 'file-expiry'
    expiry.textContent = `Expires ${formatDate(file.expires_at)} UTC`
    text.append(expiry)
  }
  if (file.scan) {
    const scan = document.createElement('span')
    scan.className = 'file-scan'
    scan.append(scanBadge(file.scan))
    text.append(scan)
  }
  const nameBox = document.createElement('div')
  nameBox.className = 'name-box'
  nameBox.append(selectBox(file), text)
  name.append(nameBox)
  row.append(
    name,
    cell(formatBytes(file.size), 'Size', 'num size'),
    cell(formatDate(file.upload_date), 'Uploaded (UTC)', 'date'),
    cell(formatNumber(file.download_count), 'Downloads', 'num downloads'),
  )

  const linkCell = cell('', 'Public link', 'link')
  const link = document.createElement('a')
  link.href = file.public_link
  link.textContent = 'Download'
  link.rel = 'noopener noreferrer'
  link.setAttribute('aria-label', `Download ${file.filename}`)
  const copy = copyButton(file)
  linkCell.append(link, ' ', copy)
  const linkHint = file.scan && SCAN_LINK_HINTS[scanMode]?.[file.scan.status]
  if (linkHint) {
    const hint = document.createElement('span')
    hint.className = 'scan-link-hint'
    hint.id = `scan-hint-${file.file_id}`
    hint.textContent = linkHint
    copy.setAttribute('aria-describedby', hint.id)
    linkCell.append(hint)
  }
  row.append(linkCell)

  const actions = cell('', '', 'actions')
  const remove = button('Delete', () => deleteFile(file, row), 'danger')
  remove.setAttribute('aria-label', `Delete ${file.filename}`)
  actions.append(remove)
  // A disclosure: the file's links and expiry open in a row right under this one. A cell of its own,
  // last (next to what it opens), which a phone's card shows beside the file's name.
  const more = cell('', '', 'more')
  const toggle = button('Links', () => togglePanel(file, row, toggle), 'secondary links-toggle')
  toggle.setAttribute('aria-label', `Links of ${file.filename}`)
  setExpanded(toggle, file.file_id)
  more.append(toggle)
  row.append(actions, more)
  return row
}

function setExpanded(toggle, fileId) {
  const open = panels.has(fileId)
  toggle.setAttribute('aria-expanded', String(open))
  if (open) toggle.setAttribute('aria-controls', panels.get(fileId).row.id)
  else toggle.removeAttribute('aria-controls')
}

function togglePanel(file, row, toggle) {
  const open = panels.get(file.file_id)
  if (open) {
    open.row.remove()
    panels.delete(file.file_id)
  } else {
    const panel = filePanel(file, () => loadFiles())
    panels.set(file.file_id, panel)
    row.after(panel.row)
    panel.load()
  }
  setExpanded(toggle, file.file_id)
}

/** What has focus, in a form that finds it again in the redrawn list: its file and its name. */
function focusedPlace() {
  const element = document.activeElement
  const fileId = element?.closest('tr.file')?.dataset.fileId
  if (!fileId || !body.contains(element)) return { element }
  return { fileId, name: element.getAttribute('aria-label') ?? element.textContent }
}

function restoreFocus({ element, fileId, name }) {
  if (element && element !== document.activeElement && element.isConnected) element.focus({ preventScroll: true })
  if (fileId === undefined) return
  const again = [...(body.querySelector(`tr.file[data-file-id="${fileId}"]`)?.querySelectorAll('a, button, input') ?? [])].find(
    (candidate) => (candidate.getAttribute('aria-label') ?? candidate.textContent) === name,
  )
  again?.focus({ preventScroll: true })
}

/** The page numbers to offer: the first, the last, and two either side of the current one; gaps as null. */
function pageWindow(current, count) {
  const shown = [...new Set([1, count, ...[-2, -1, 0, 1, 2].map((step) => current + step)])]
    .filter((number) => number >= 1 && number <= count)
    .sort((a, b) => a - b)
  return shown.flatMap((number, index) => (index > 0 && number - shown[index - 1] > 1 ? [null, number] : [number]))
}

/** A pager link goes to a page; one that would go nowhere (Previous on page 1) stays in place, unseen. */
function setTarget(link, number, usable) {
  link.classList.toggle('off', !usable)
  if (usable) link.href = addressOf(number)
  else link.removeAttribute('href')
}

function renderPager(total) {
  pager.hidden = pages <= 1
  const count = `${formatNumber(total)} file${total === 1 ? '' : 's'}${narrowing()}`
  pageInfo.textContent = pages > 1 ? `Page ${page} of ${pages} (${count})` : count
  if (pages <= 1) return
  setTarget(pagerLinks.first, 1, page > 1)
  setTarget(pagerLinks.prev, page - 1, page > 1)
  setTarget(pagerLinks.next, page + 1, page < pages)
  setTarget(pagerLinks.last, pages, page < pages)
  pageShort.textContent = `${page} / ${pages}`
  pageNumbers.replaceChildren(
    ...pageWindow(page, pages).map((number) => {
      const item = document.createElement('li')
      if (number === null) {
        item.textContent = '…'
        item.setAttribute('aria-hidden', 'true')
        return item
      }
      const link = document.createElement('a')
      link.textContent = String(number)
      link.href = addressOf(number)
      link.setAttribute('aria-label', `Page ${number}`)
      if (number === page) link.setAttribute('aria-current', 'page')
      item.append(link)
      return item
    }),
  )
}

/** The latest list asked for: an answer to an earlier one (typing goes on, Back pressed twice) arrives stale and is dropped. */
let listAsked = 0

async function loadFiles() {
  const { sort, order } = SORTS[view.sort]
  const query = new URLSearchParams({ page: String(page), limit: String(view.limit) })
  if (view.q) query.set('q', view.q)
  for (const type of TYPES[view.type]?.types ?? []) query.append('type', type)
  if (view.state) query.set('state', STATES[view.state].state)
  if (view.sort !== DEFAULT_VIEW.sort) {
    query.set('sort', sort)
    query.set('order', order)
  }
  const asked = ++listAsked
  const result = await api(`files?${query}`)
  if (asked !== listAsked) return result
  pages = result.pagination.pages
  if (page > 1 && result.files.length === 0 && pages > 0) {
    page = pages
    history.replaceState(null, '', addressOf(page))
    return loadFiles()
  }
  // An open panel comes back under its file, as it was (with what is typed in it); one whose file left the page goes.
  const shown = new Set(result.files.map((file) => file.file_id))
  for (const fileId of panels.keys()) if (!shown.has(fileId)) panels.delete(fileId)
  // A chosen file that left the page (deleted, expired) is no longer chosen.
  for (const fileId of selected.keys()) if (!shown.has(fileId)) selected.delete(fileId)
  const focused = focusedPlace()
  body.replaceChildren(
    ...result.files.flatMap((file) =>
      panels.has(file.file_id) ? [fileRow(file), panels.get(file.file_id).update(file)] : [fileRow(file)],
    ),
  )
  restoreFocus(focused)
  watchPending(result.files)
  // No files: no table header and no pager, but a way to the first upload (or, for a search, out of it).
  const none = result.pagination.total === 0
  empty.hidden = !none || narrowed()
  noMatch.hidden = !none || !narrowed()
  say(noMatchText, none && narrowed() ? `No file${narrowing()}.` : '')
  find.hidden = none && !narrowed() && view.sort === DEFAULT_VIEW.sort && view.limit === DEFAULT_VIEW.limit
  filesList.hidden = none
  selection.hidden = none
  caption.textContent = `Your files, ${SORTS[view.sort].words}${narrowing(',')}`
  showSelection()
  if (none) {
    pager.hidden = true
    pageInfo.textContent = ''
  } else renderPager(result.pagination.total)
  return result
}

/** Goes to another page of the list: a new entry in the history, and the list's top in view. */
async function goToPage(number) {
  page = number
  // What was said about the page left behind is stale on the next one.
  say(status, '')
  clearFeedback(body)
  forgetSelection()
  history.pushState(null, '', addressOf(page))
  await loadFiles()
  listTitle.scrollIntoView({ block: 'start' })
  listTitle.focus({ preventScroll: true })
}

// ---- Acting on several files (issue 37): chosen with their checkboxes, deleted or downloaded as one ZIP ----

const filesCount = (count) => `${formatNumber(count)} file${count === 1 ? '' : 's'}`

/** The chosen files in the list's order (the ZIP's entries follow it), with their rows. */
function chosenRows() {
  return [...body.querySelectorAll('tr.file')].filter((row) => selected.has(Number(row.dataset.fileId)))
}

/** The checkboxes, "Select all on this page" (mixed when some are chosen) and the bar, as the selection is. */
function showSelection({ announce = false } = {}) {
  const rows = [...body.querySelectorAll('tr.file')]
  for (const row of rows) {
    const chosen = selected.has(Number(row.dataset.fileId))
    row.classList.toggle('chosen', chosen)
    row.querySelector('input.select-file').checked = chosen
  }
  const count = selected.size
  selectPage.checked = count > 0 && count === rows.length
  selectPage.indeterminate = count > 0 && count < rows.length
  selectionBar.hidden = count === 0
  selection.classList.toggle('active', count > 0)
  selectionCount.textContent = `${filesCount(count)} selected`
  if (announce) say(selectionSaid, `${filesCount(count)} of ${formatNumber(rows.length)} selected.`)
}

/** Empties the selection (a page change, "Clear selection"), quietly. */
function forgetSelection() {
  selected.clear()
  say(selectionSaid, '')
  clearFeedback(selectionBar)
  showSelection()
}

selectPage.addEventListener('change', () => {
  selected.clear()
  if (selectPage.checked) {
    for (const row of body.querySelectorAll('tr.file')) selected.set(Number(row.dataset.fileId), row.dataset.name)
  }
  showSelection({ announce: true })
})
clearSelection.addEventListener('click', () => {
  forgetSelection()
  say(selectionSaid, 'Selection cleared.')
  // The bar (and this button) goes: focus stays where the selection is made.
  selectPage.focus()
})

/** "Deleted 2 files: a.txt, b.txt. 1 file was not found (deleted or expired meanwhile): c.txt." */
function deletedText({ deleted, not_found: notFound }, names) {
  const list = (ids) => ids.map((id) => names.get(id) ?? `file ${id}`).join(', ')
  const parts = []
  if (deleted.length > 0) parts.push(`Deleted ${filesCount(deleted.length)}: ${list(deleted)}.`)
  if (notFound.length > 0) {
    parts.push(
      `${filesCount(notFound.length)} ${notFound.length === 1 ? 'was' : 'were'} not found (deleted or expired meanwhile): ${list(notFound)}.`,
    )
  }
  return parts.join(' ')
}

/** Deletes the chosen files with one confirmation and one call (POST files/delete); focus as after one delete. */
async function deleteChosen() {
  const rows = chosenRows()
  if (rows.length === 0) return
  const ids = rows.map((row) => Number(row.dataset.fileId))
  const names = new Map(selected)
  const choice = await confirmWith(confirmMany, document.getElementById('confirm-delete-many-count'), filesCount(ids.length))
  if (choice !== 'delete') return
  const index = [...body.querySelectorAll('tr.file')].indexOf(rows[0])
  try {
    const result = await api('files/delete', { method: 'POST', body: { ids } })
    say(status, deletedText(result, names))
    await Promise.all([loadFiles(), loadLimits()])
    focusAfterDelete(index)
  } catch (error) {
    say(status, `Could not delete the selected files: ${error.message}`)
    // A failure part-way leaves the files before it deleted: the list shows what is left.
    await loadFiles().catch(() => undefined)
  }
}

/** The API's error from an answer that is not the ZIP. */
async function archiveError(response) {
  const answer = await response.json().catch(() => undefined)
  return new ApiError(response.status, answer?.error?.code ?? 'error', answer?.error?.message ?? `The server answered ${response.status}.`)
}

/** Posts the ids as a plain form: its answer, an attachment, goes to the browser's downloads as it streams, and the page stays. */
function postArchiveForm(ids) {
  const form = document.createElement('form')
  form.method = 'POST'
  form.action = 'api/files/archive-download'
  form.hidden = true
  for (const [name, value] of [
    ['csrf_token', csrfHeader()[1]],
    ['ids', ids.join(',')],
  ]) {
    const field = document.createElement('input')
    field.type = 'hidden'
    field.name = name
    field.value = value
    form.append(field)
  }
  document.body.append(form)
  form.submit()
  form.remove()
}

/**
 * Downloads the chosen files as one ZIP. The JSON route (POST files/archive) is asked first and its
 * body cancelled once the status is known, so that a refusal (a file gone meanwhile) is said here;
 * then a plain form posts the ids with the session's CSRF token in a field (POST
 * files/archive-download), and the browser saves the ZIP as it streams: the page never holds it.
 */
let zipping = false
async function downloadChosen() {
  const ids = chosenRows().map((row) => Number(row.dataset.fileId))
  if (zipping || ids.length === 0) return
  zipping = true
  const label = downloadSelected.textContent
  downloadSelected.textContent = 'Preparing ZIP…'
  downloadSelected.setAttribute('aria-busy', 'true')
  try {
    const [csrfName, csrfValue] = csrfHeader()
    const response = await fetch('api/files/archive', {
      method: 'POST',
      headers: { accept: 'application/zip', 'content-type': 'application/json', [csrfName]: csrfValue },
      body: JSON.stringify({ ids }),
    })
    if (response.status === 401) {
      location.assign('sign-in?expired')
      return
    }
    if (!response.ok) throw await archiveError(response)
    await response.body?.cancel()
    postArchiveForm(ids)
    feedbackAt(downloadSelected, `Downloading ${filesCount(ids.length)} as one ZIP: your browser saves it.`)
  } catch (error) {
    feedbackAt(downloadSelected, `Could not download the ZIP: ${error.message}`, { error: true })
  } finally {
    downloadSelected.textContent = label
    downloadSelected.removeAttribute('aria-busy')
    zipping = false
  }
}

deleteSelected.addEventListener('click', () => deleteChosen())
downloadSelected.addEventListener('click', () => downloadChosen())

// ---- Finding files (issue 37): a search by name, filters, an order and a page size, in the address, done by the API ----

/** Whether the list shows only some of the files (a search or a filter). */
const narrowed = () => view.q !== '' || view.type !== '' || view.state !== ''

/** What narrows the list, in words after a count or a caption: ` matching “rep”, images`, `, PDF, expiring` ('' for none). */
function narrowing(first = '') {
  const filters = [...(view.type ? [TYPES[view.type].words] : []), ...(view.state ? [STATES[view.state].words] : [])]
  if (view.q) return [`${first} matching “${view.q}”`, ...filters].join(', ')
  return filters.length > 0 ? `${first || ','} ${filters.join(', ')}` : ''
}

/** Sets the form's fields to the view (at the start, and after Back or Forward). */
function showView() {
  if (findQuery.value !== view.q) findQuery.value = view.q
  findType.value = view.type
  findState.value = view.state
  findSort.value = view.sort
  findLimit.value = String(view.limit)
}

/** How long typing pauses before the list follows the search box. */
const TYPING_PAUSE_MS = 300
let typingTimer = 0
/** Whether the address's entry is already the one this run of typing made: the next keys replace it rather than add one each. */
let typing = false

/**
 * Shows another view of the list from its first page: a new entry in the history (Back returns to
 * the view before), except while typing goes on, which updates its own entry. The selection is of
 * the page it was made on, so it goes; focus stays where the holder is.
 */
async function applyView(next, { replace = false } = {}) {
  clearTimeout(typingTimer)
  if (Object.keys(DEFAULT_VIEW).every((key) => next[key] === view[key])) return
  view = next
  page = 1
  say(status, '')
  clearFeedback(body)
  forgetSelection()
  if (replace) history.replaceState(null, '', addressOf(page))
  else history.pushState(null, '', addressOf(page))
  await loadFiles()
}

const fieldsView = () => ({
  q: cleanQuery(findQuery.value),
  type: findType.value,
  state: findState.value,
  sort: findSort.value,
  limit: Number(findLimit.value),
})

findQuery.addEventListener('input', () => {
  clearTimeout(typingTimer)
  typingTimer = setTimeout(() => {
    applyView(fieldsView(), { replace: typing }).catch(reportLoadError)
    typing = true
  }, TYPING_PAUSE_MS)
})
// Leaving the box ends the run of typing: the next search is a new entry in the history.
findQuery.addEventListener('blur', () => {
  typing = false
})
find.addEventListener('submit', (event) => {
  event.preventDefault()
  applyView(fieldsView(), { replace: typing }).catch(reportLoadError)
  typing = false
})
for (const field of [findType, findState, findSort, findLimit]) {
  field.addEventListener('change', () => {
    typing = false
    applyView(fieldsView()).catch(reportLoadError)
  })
}
clearSearch.addEventListener('click', () => {
  findQuery.value = ''
  findType.value = ''
  findState.value = ''
  typing = false
  findQuery.focus()
  applyView(fieldsView()).catch(reportLoadError)
})

/** Turns uploading off, and says why, where the upload box would offer what the account cannot do. */
function setUploadsOff(reason) {
  uploadsOff = reason
  input.disabled = reason !== ''
  uploadExpires.disabled = reason !== ''
  dropzone.classList.toggle('disabled', reason !== '')
  emptyUpload.hidden = reason !== ''
}

async function loadLimits() {
  const usage = await api('usage')
  maxFileSize = usage.limits.max_file_size
  storage = { used: usage.stats.total_size, reserved: usage.stats.storage_reserved, quota: usage.limits.max_storage }
  const daily = usage.limits.daily_uploads
  const left = Math.max(0, daily - usage.stats.uploads_today)
  if (maxFileSize <= 0 || daily <= 0) {
    setUploadsOff(`Your plan, ${usage.plan}, does not include uploads. Ask the operator to move your account to a plan that does.`)
  } else if (left === 0) {
    setUploadsOff(`You have used all ${formatNumber(daily)} uploads of today. You can upload again after 00:00 UTC.`)
  } else setUploadsOff('')
  const room = storage.quota === null ? '' : ` ${formatBytes(storageFree())} of storage free.`
  limitsText.textContent =
    uploadsOff || `Up to ${formatBytes(maxFileSize)} per file; ${formatNumber(left)} of ${formatNumber(daily)} uploads left today.${room}`
}

function storageFree() {
  return Math.max(0, storage.quota - storage.used - storage.reserved)
}

/**
 * Why an upload failed, in words. The server's storage_quota_exceeded names the quota in bytes
 * ("… of 107374182400 bytes"); the page says how much is free and what to do instead.
 */
async function failureText(error) {
  if (error.code !== 'storage_quota_exceeded') return error.message
  await loadLimits().catch(() => undefined)
  if (storage.quota === null) return error.message
  const held = storage.reserved > 0 ? ` (${formatBytes(storage.reserved)} held by uploads in progress)` : ''
  return `not enough storage: ${formatBytes(storageFree())} of ${formatBytes(storage.quota)} free${held}. Delete files, or ask the operator for a larger quota.`
}

/**
 * After a delete, focus goes to the row that took the deleted one's place (or the one before it,
 * or the list's heading when none is left), never to the page's body.
 */
function focusAfterDelete(index) {
  const rows = body.querySelectorAll('tr.file')
  const row = rows[index] ?? rows[index - 1]
  const target = row?.querySelector('a, button') ?? (empty.hidden || emptyUpload.hidden ? listTitle : emptyUpload)
  target.focus()
}

async function deleteFile(file, row) {
  const choice = await confirmWith(confirmDialog, document.getElementById('confirm-delete-name'), file.filename)
  if (choice !== 'delete') return
  const index = [...body.querySelectorAll('tr.file')].indexOf(row)
  try {
    await api(`files/${file.file_id}`, { method: 'DELETE' })
    say(status, `Deleted ${file.filename}.`)
    await Promise.all([loadFiles(), loadLimits()])
    focusAfterDelete(index)
  } catch (error) {
    say(status, `Could not delete ${file.filename}: ${error.message}`)
  }
}

/** The list of uploads and what sends them (assets/uploads.js), told what they need of this page. */
const { uploadAll, clearFinished } = createUploads({
  status,
  panel: uploadsPanel,
  list: uploads,
  expires: uploadExpires,
  limits: () => ({ maxFileSize, uploadsOff }),
  failureText,
  copyButton,
  // The new file is the newest: the list goes to its first page to show it.
  async afterUpload() {
    if (page !== 1) {
      page = 1
      history.replaceState(null, '', addressOf(page))
    }
    await Promise.all([loadFiles(), loadLimits()])
  },
  onUploaded(upload, uploaded) {
    if (uploaded.scan?.status === 'pending') {
      // Its verdict comes later: the row follows the file (pollScans) and says it.
      uploadWatch.set(uploaded.file_id, upload)
      watched.set(uploaded.file_id, uploaded.filename)
    }
    showUploadVerdict(upload, uploaded)
  },
  onCleared() {
    for (const [fileId, upload] of uploadWatch) if (!upload.item.isConnected) uploadWatch.delete(fileId)
  },
})

// ---- Virus scanning (issue 35): files being checked, uploads' verdicts, files removed for a virus ----

/** Files still being checked for viruses (id → name): asked about every SCAN_POLL_MS until clamd has answered. */
const watched = new Map()
/** Rows of the list of uploads that wait for their file's verdict, by file id: `{item, state, progress}`. */
const uploadWatch = new Map()

/** What an upload's row says once its file is stored, by the file's scan status. */
const UPLOAD_VERDICTS = {
  pending: 'Uploaded. Checking for viruses…',
  clean: 'Uploaded and scanned: no virus found.',
  skipped: 'Uploaded. Not scanned: too large for the virus scanner.',
  error: 'Uploaded, but it could not be scanned.',
}

/** The list's files still pending are watched, with the uploads that wait; those that left the page are not. */
function watchPending(files) {
  for (const fileId of watched.keys()) if (!uploadWatch.has(fileId)) watched.delete(fileId)
  for (const file of files) if (file.scan?.status === 'pending') watched.set(file.file_id, file.filename)
}

/** An upload's row says what the scan found; an infected file's row turns red and loses its (dead) link. */
function showUploadVerdict({ item, state, progress }, file) {
  if (!file.scan || !item.isConnected) return
  if (file.scan.status !== 'infected') {
    say(state, UPLOAD_VERDICTS[file.scan.status] ?? 'Uploaded.')
    return
  }
  const box = item.querySelector('.upload-link')
  // Focus on the link or its copy button would drop to the page's body: it goes to the list instead.
  if (box?.contains(document.activeElement)) uploads.focus()
  box?.remove()
  item.classList.remove('done')
  item.classList.add('failed', 'infected')
  progress.setAttribute('aria-label', `Upload of ${item.dataset.name} removed: a virus was found`)
  say(state, `Removed: a virus was found (${file.scan.signature ?? 'no signature name given'})`)
}

/** Redraws a file's row (its scan's badge) where the list shows it, keeping focus and its open panel. */
function replaceRow(file) {
  const row = body.querySelector(`tr.file[data-file-id="${file.file_id}"]`)
  if (!row) return
  const focused = focusedPlace()
  row.replaceWith(fileRow(file))
  panels.get(file.file_id)?.update(file)
  restoreFocus(focused)
}

let polling = false
/** Asks about each watched file; a verdict redraws its row, or (a virus) reloads the list and the notice. */
async function pollScans() {
  if (polling || watched.size === 0 || document.visibilityState !== 'visible') return
  polling = true
  let removed = false
  try {
    for (const [fileId, filename] of [...watched]) {
      let file
      try {
        ;({ file } = await api(`files/${fileId}`))
      } catch (error) {
        // Deleted meanwhile (here or elsewhere): nothing left to follow. Anything else: the next round asks again.
        if (error.status === 404) {
          watched.delete(fileId)
          uploadWatch.delete(fileId)
        }
        continue
      }
      if (file.scan?.status === 'pending') continue
      watched.delete(fileId)
      const upload = uploadWatch.get(fileId)
      uploadWatch.delete(fileId)
      if (upload) showUploadVerdict(upload, file)
      if (file.scan?.status === 'infected') {
        removed = true
        if (!upload?.item.isConnected) {
          say(status, `Removed ${filename}: a virus was found (${file.scan.signature ?? 'no signature name given'}).`)
        }
      } else replaceRow(file)
    }
    if (removed) await Promise.all([loadFiles(), loadLimits(), loadInfected()])
  } catch {
    // The list could not be reloaded: the next verdict, or a reload of the page, tries again.
  } finally {
    polling = false
  }
}

/** One line of the notice: the file's name, the signature, when; and Dismiss, which deletes the remembered record. */
function infectedItem(file) {
  const item = document.createElement('li')
  item.dataset.fileId = String(file.file_id)
  const name = document.createElement('strong')
  name.className = 'infected-name'
  name.textContent = file.filename
  const what = document.createElement('span')
  what.className = 'infected-what'
  const when = file.scan.scanned_at ? `, removed ${formatDate(file.scan.scanned_at)} UTC` : ''
  what.textContent = `${formatBytes(file.size)}: ${file.scan.signature ?? 'a virus'} found${when}.`
  const dismiss = button('Dismiss', () => dismissInfected(file, item), 'secondary small')
  dismiss.setAttribute('aria-label', `Dismiss ${file.filename}`)
  item.append(name, ' ', what, ' ', dismiss)
  return item
}

/**
 * The notice of files removed for a virus: the latest `scan.infected` events of the audit log whose
 * file's record is still there (GET files/{id}: scan.status infected). A dismissed one (deleted) is gone.
 */
async function loadInfected() {
  const { events } = await api(`audit-events?action=scan.infected&limit=${INFECTED_EVENTS}`)
  const ids = [...new Set(events.map((event) => event.target?.id).filter((id) => Number.isInteger(id)))]
  const records = await Promise.all(
    ids.map((id) =>
      api(`files/${id}`).then(
        (answer) => answer.file,
        (error) => {
          if (error.status === 404) return null
          throw error
        },
      ),
    ),
  )
  const infected = records.filter((file) => file?.scan?.status === 'infected')
  infectedList.replaceChildren(...infected.map(infectedItem))
  infectedNotice.hidden = infected.length === 0
}

async function dismissInfected(file, item) {
  try {
    await api(`files/${file.file_id}`, { method: 'DELETE' })
  } catch (error) {
    if (error.status !== 404) {
      say(status, `Could not dismiss ${file.filename}: ${error.message}`)
      return
    }
  }
  const next = item.nextElementSibling ?? item.previousElementSibling
  item.remove()
  say(status, `Dismissed ${file.filename}.`)
  if (next) next.querySelector('button')?.focus()
  else {
    infectedNotice.hidden = true
    listTitle.focus()
  }
}

setInterval(pollScans, SCAN_POLL_MS)
// Back in view: at once, rather than at the next tick.
document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'visible') pollScans()
})

fillExpiryChoices(uploadExpires, { never: 'Never', date: false })
input.addEventListener('change', () => {
  const files = [...input.files]
  input.value = ''
  uploadAll(files)
})
emptyUpload.addEventListener('click', () => input.click())
clearUploads.addEventListener('click', () => {
  clearFinished()
  // The button goes with the list when nothing is left: focus stays in the upload box.
  if (uploadsPanel.hidden) input.focus()
})
for (const type of ['dragenter', 'dragover']) {
  dropzone.addEventListener(type, (event) => {
    event.preventDefault()
    if (!uploadsOff) dropzone.classList.add('over')
  })
}
dropzone.addEventListener('dragleave', () => dropzone.classList.remove('over'))
dropzone.addEventListener('drop', (event) => {
  event.preventDefault()
  dropzone.classList.remove('over')
  uploadAll([...event.dataTransfer.files])
})
pager.addEventListener('click', (event) => {
  const link = event.target.closest('a[href]')
  // A new tab or window (Ctrl, Shift, middle button) keeps the browser's own way.
  if (!link || event.ctrlKey || event.metaKey || event.shiftKey || event.altKey || event.button !== 0) return
  event.preventDefault()
  // Page 1's address leaves the number out.
  const number = Number(new URL(link.href).searchParams.get('page') ?? 1)
  goToPage(number).catch(reportLoadError)
})
window.addEventListener('popstate', () => {
  page = pageFromAddress()
  view = viewFromAddress()
  showView()
  typing = false
  say(status, '')
  forgetSelection()
  loadFiles().catch(reportLoadError)
})

showView()
initPage()
  .then((session) => {
    scanMode = session.scan_mode ?? 'off'
  })
  // The notice is extra: the list works without it (a failure leaves it hidden).
  .then(() => Promise.all([loadFiles(), loadLimits(), loadInfected().catch(() => undefined)]))
  .then(() => document.body.setAttribute('data-ready', 'true'))
  .catch(reportLoadError)
