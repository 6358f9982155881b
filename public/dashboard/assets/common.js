// Shared by every dashboard page: JSON calls with the CSRF token, the session, formatting, copying.
// Values from the server go into the page with textContent only, never as HTML.

let csrfToken = ''

/** Why a call failed, with the API's error code and message. */
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message)
    this.status = status
    this.code = code
  }
}

async function errorOf(response) {
  try {
    const body = await response.json()
    return new ApiError(response.status, body.error?.code ?? 'error', body.error?.message ?? response.statusText)
  } catch {
    return new ApiError(response.status, 'error', `The server answered ${response.status}.`)
  }
}

/** Calls a dashboard endpoint (relative to /dashboard/api/). A lost session sends the browser to sign-in. */
export async function api(path, { method = 'GET', body } = {}) {
  const headers = { accept: 'application/json' }
  if (method !== 'GET') headers['x-csrf-token'] = csrfToken
  if (body !== undefined) headers['content-type'] = 'application/json'
  const response = await fetch(`api/${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
  if (response.status === 401 && !path.startsWith('sign-in')) {
    // sign-in.js says why the holder is there ("Your session ended; sign in again.").
    location.assign('sign-in?expired')
    throw new ApiError(401, 'sign_in_required', 'Sign in to continue.')
  }
  if (!response.ok) throw await errorOf(response)
  return response.json()
}

export function useSession(session) {
  csrfToken = session.csrf_token
}

/** The header that every state change must carry (an XMLHttpRequest upload sets it itself). */
export function csrfHeader() {
  return ['x-csrf-token', csrfToken]
}

/** For pages behind sign-in: loads the session, shows who is signed in, wires the sign-out button. */
export async function initPage() {
  const session = await api('session')
  useSession(session)
  document.getElementById('account-email').textContent = session.account.email
  document.getElementById('sign-out').addEventListener('click', async () => {
    try {
      await api('sign-out', { method: 'POST' })
    } finally {
      // sign-in.js says "You are signed out." there.
      location.assign('sign-in?signed-out')
    }
  })
  return session
}

/** Writes a message into a status or alert element (screen readers announce it). */
export function say(element, message) {
  element.textContent = message
}

export function formatBytes(bytes) {
  if (bytes < 1024) return `${bytes} B`
  const units = ['KiB', 'MiB', 'GiB', 'TiB']
  let value = bytes
  let unit = -1
  do {
    value /= 1024
    unit++
  } while (value >= 1024 && unit < units.length - 1)
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`
}

export function formatNumber(value) {
  return new Intl.NumberFormat('en').format(value)
}

/** `YYYY-MM-DD HH:MM` in UTC, from an ISO date or the API's `YYYY-MM-DD HH:MM:SS`. */
export function formatDate(value) {
  if (!value) return 'never'
  return value.replace('T', ' ').slice(0, 16)
}

/** Copies text; falls back to a selected field where the Clipboard API is missing (plain http). */
export async function copyText(text) {
  if (navigator.clipboard && window.isSecureContext) {
    await navigator.clipboard.writeText(text)
    return
  }
  // Selecting the text takes focus; it goes back where it was (the copy button), not to the page's body.
  const focused = document.activeElement
  const field = document.createElement('textarea')
  field.value = text
  field.setAttribute('readonly', '')
  field.className = 'offscreen'
  document.body.append(field)
  field.select()
  const copied = document.execCommand('copy')
  field.remove()
  focused?.focus({ preventScroll: true })
  if (!copied) throw new Error('The browser did not allow copying.')
}

/** Copies a field's text and says so in `status`; where the browser refuses, selects the text for the keyboard. `what`: "the key". */
export async function copyField(field, status, what) {
  say(status, '')
  try {
    await copyText(field.value)
    say(status, `Copied ${what}.`)
  } catch (error) {
    field.select()
    say(status, `Could not copy (${error.message}); ${what} is selected, copy it with your keyboard.`)
  }
}

/**
 * Feedback where the action is. A page's one status line sits under its h1, often far out of view
 * (867 px above "Copy key" on a phone); so an action answers at its own button instead: the button's
 * label reads `label` ("Copied") for FEEDBACK_MS, and a polite live region right after the button
 * says `message` to screen readers (a changed label alone is not announced). A failure (`error:
 * true`) is shown in that region, visibly, until the next feedback there or clearFeedback(); a
 * success is only heard: the label says it to the eye, and nothing is left behind to go stale.
 */
const FEEDBACK_MS = 2000
/** The live region after each control that has given feedback, and the timer that restores its label. */
const notes = new WeakMap()

function noteFor(control) {
  let entry = notes.get(control)
  if (entry?.note.isConnected && entry.note.previousElementSibling === control) return entry
  const note = document.createElement('span')
  note.className = 'action-note'
  note.setAttribute('role', 'status')
  control.after(note)
  entry = { note, label: [], timer: 0, fresh: true }
  notes.set(control, entry)
  return entry
}

export function feedbackAt(control, message, { label, error = false } = {}) {
  const entry = noteFor(control)
  restoreLabel(control, entry)
  entry.note.classList.toggle('failed', error)
  if (label) {
    // Its own nodes are kept and put back (a "Copy" button may hold a visually hidden rest of its name).
    entry.label = [...control.childNodes]
    // The button keeps its width while its label is short for a moment: nothing beside it moves.
    control.style.minWidth = `${control.getBoundingClientRect().width}px`
    control.textContent = label
    // A name that starts the visible text (WCAG 2.5.3): "Copied (Copy link to a.txt)" while it reads "Copied".
    entry.name = control.getAttribute('aria-label')
    if (entry.name !== null) control.setAttribute('aria-label', `${label} (${entry.name})`)
    control.classList.add('done')
    entry.timer = setTimeout(() => restoreLabel(control, entry), FEEDBACK_MS)
  }
  // A live region that appears already holding its text is often not read: a new one gets it a moment later.
  // The same text twice in a row is read again only if it changes in between.
  entry.note.textContent = ''
  const write = () => {
    entry.note.textContent = message
  }
  if (entry.fresh) setTimeout(write, 50)
  else requestAnimationFrame(write)
  entry.fresh = false
}

function restoreLabel(control, entry) {
  if (!entry.timer) return
  clearTimeout(entry.timer)
  entry.timer = 0
  control.replaceChildren(...entry.label)
  if (entry.name !== null && entry.name !== undefined) control.setAttribute('aria-label', entry.name)
  control.style.minWidth = ''
  control.classList.remove('done')
}

/** Empties every note of feedback under `root` and gives their buttons back their labels (on a new page of a list, a new filter). */
export function clearFeedback(root = document) {
  for (const note of root.querySelectorAll('.action-note')) {
    const control = note.previousElementSibling
    const entry = control && notes.get(control)
    if (entry) restoreLabel(control, entry)
    note.textContent = ''
    note.classList.remove('failed')
  }
}

/** Copies `text` and says so at `control`; where the browser refuses, shows the text there to copy by hand. `what`: "the link of a.txt". */
export async function copyAt(control, text, what) {
  try {
    await copyText(text)
    feedbackAt(control, `Copied ${what}.`, { label: 'Copied' })
  } catch (error) {
    feedbackAt(control, `Could not copy (${error.message}). ${capitalise(what)}: ${text}`, { error: true })
  }
}

/** copyField's twin that answers at the button: copies a field's text; where refused, selects it for the keyboard. */
export async function copyFieldAt(control, field, what) {
  try {
    await copyText(field.value)
    feedbackAt(control, `Copied ${what}.`, { label: 'Copied' })
  } catch (error) {
    field.select()
    feedbackAt(control, `Could not copy (${error.message}); ${what} is selected, copy it with your keyboard.`, { error: true })
  }
}

function capitalise(text) {
  return text.charAt(0).toUpperCase() + text.slice(1)
}

/** A button element with text; `onClick` runs on click (and Enter/Space, as for any button). */
export function button(label, onClick, className = 'secondary') {
  const element = document.createElement('button')
  element.type = 'button'
  element.className = className
  element.textContent = label
  element.addEventListener('click', onClick)
  return element
}

/** A table cell holding text; `label` names its column where a narrow screen stacks the cells. */
export function cell(text, label, className) {
  const element = document.createElement('td')
  element.textContent = text
  element.dataset.label = label
  if (className) element.className = className
  return element
}

/** Asks with a <dialog> (focus stays inside it; Escape cancels). Resolves to the chosen button's value. */
export function confirmWith(dialog, nameElement, name) {
  nameElement.textContent = name
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => resolve(dialog.returnValue), { once: true })
    dialog.returnValue = 'cancel'
    dialog.showModal()
  })
}

/**
 * On a phone the header's list of pages scrolls sideways (dashboard.css): the current page is
 * scrolled into view, and the nav is marked on the side where more pages are (`more-before`,
 * `more-after`: a fade and an arrow), so that the last ones are not simply off the screen.
 */
function fitNavigation() {
  const nav = document.querySelector('header.top nav')
  const list = nav?.querySelector('ul')
  if (!list) return
  const mark = () => {
    const hidden = list.scrollWidth - list.clientWidth
    nav.classList.toggle('more-before', hidden > 1 && list.scrollLeft > 1)
    nav.classList.toggle('more-after', hidden > 1 && list.scrollLeft < hidden - 1)
  }
  const current = list.querySelector('[aria-current="page"]')?.parentElement
  if (current && list.scrollWidth > list.clientWidth) {
    const [item, box] = [current.getBoundingClientRect(), list.getBoundingClientRect()]
    // In the middle where it can be; the browser keeps scrollLeft within the list.
    list.scrollLeft += item.left - box.left - (box.width - item.width) / 2
  }
  mark()
  list.addEventListener('scroll', mark, { passive: true })
  window.addEventListener('resize', mark)
}
// A module runs once the document is parsed: the header is there.
fitNavigation()

/** Shows a failure of a page's first load instead of an empty page. */
export function reportLoadError(error) {
  const status = document.getElementById('status')
  if (status) say(status, `Could not load this page: ${error.message}`)
}
