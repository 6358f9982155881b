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
    location.assign('sign-in')
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
      location.assign('sign-in')
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

/** Shows a failure of a page's first load instead of an empty page. */
export function reportLoadError(error) {
  const status = document.getElementById('status')
  if (status) say(status, `Could not load this page: ${error.message}`)
}
