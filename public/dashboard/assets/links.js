// A file's links and its expiry (issue 28, ../shared/spec/links.md), a QR code of each link, its
// name and its preview (issue 37): the panel that opens under a file's row on the files page. Its
// markup is the page's <template id="file-panel"> and the sections below; every id in a copy gets
// the file's prefix, so that several panels can be open at once.
import { api, ApiError, button, confirmWith, copyAt, copyFieldAt, formatBytes, formatDate, formatNumber, say } from './common.js'
import { clearMarks, markFields } from './field-errors.js'

/** The lifetimes offered wherever an expiry is chosen: the upload box, a new link, a file. */
const LIFETIMES = [
  [3600, '1 hour'],
  [86400, '1 day'],
  [7 * 86400, '7 days'],
  [30 * 86400, '30 days'],
]
const ON_A_DATE = 'date'
const STATUS_TEXT = { active: 'Active', expired: 'Expired', exhausted: 'Exhausted', revoked: 'Revoked' }

const template = document.getElementById('file-panel')
const confirmDialog = document.getElementById('confirm-link')
const listStatus = document.getElementById('status')
/** What the confirmation says of each action on a link, after the link's name. */
const CONFIRMATIONS = {
  rotate: {
    title: 'Rotate this link?',
    effect: 'gets a new URL, and the old one stops working at once. Its downloads, limit, expiry and password stay.',
    button: ['Rotate', ''],
  },
  revoke: {
    title: 'Revoke this link?',
    effect: 'stops working at once, for everyone who has it. This cannot be undone; the file and its other links stay.',
    button: ['Revoke', 'danger'],
  },
}

/** Fills an expiry <select>: `never` (its text) first when given, the lifetimes, then "On a date…" unless `date` is false. */
export function fillExpiryChoices(select, { never, date = true }) {
  const choices = [
    ...(never ? [['', never]] : []),
    ...LIFETIMES.map(([seconds, text]) => [String(seconds), `After ${text}`]),
    ...(date ? [[ON_A_DATE, 'On a date…']] : []),
  ]
  select.replaceChildren(...choices.map(([value, text]) => new Option(text, value)))
}

/** uqr's ES module (src/http/qr-code-assets.ts serves it), loaded the first time a QR code is shown. */
let qrLibrary
function loadQrLibrary() {
  qrLibrary ??= import('./vendor/uqr/index.mjs').catch((error) => {
    qrLibrary = undefined
    throw error
  })
  return qrLibrary
}

const SVG_NS = 'http://www.w3.org/2000/svg'

/**
 * The QR code of `text` as an SVG element named `label`: dark modules on a light ground with the
 * four-module quiet zone scanners need, in both themes. Medium error correction survives a
 * smudged phone screen; a link's URL (under 200 characters) stays a small code.
 */
async function qrCodeSvg(text, label) {
  const { encode } = await loadQrLibrary()
  const { size, data } = encode(text, { ecc: 'M', border: 4 })
  const svg = document.createElementNS(SVG_NS, 'svg')
  svg.setAttribute('viewBox', `0 0 ${size} ${size}`)
  svg.setAttribute('role', 'img')
  svg.setAttribute('aria-label', label)
  svg.setAttribute('shape-rendering', 'crispEdges')
  const ground = document.createElementNS(SVG_NS, 'rect')
  ground.setAttribute('width', String(size))
  ground.setAttribute('height', String(size))
  ground.setAttribute('fill', '#fff')
  const modules = document.createElementNS(SVG_NS, 'path')
  const squares = []
  data.forEach((line, y) => line.forEach((dark, x) => dark && squares.push(`M${x} ${y}h1v1h-1z`)))
  modules.setAttribute('d', squares.join(''))
  modules.setAttribute('fill', '#000')
  svg.append(ground, modules)
  return svg
}

/** What the server says it previews (src/services/file-previews.ts), by the type the upload was given. */
const PREVIEWED_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'application/pdf'])
/** The largest image previewed (MAX_IMAGE_PREVIEW_BYTES there). */
const MAX_IMAGE_PREVIEW_BYTES = 20 * 1024 * 1024
/** The longest name the server keeps (src/lib/filename.ts), in bytes of UTF-8. */
const MAX_FILENAME_BYTES = 255

/** The panel's own sections after the template's: the file's name, and its preview. Ids get the file's prefix. */
const SECTIONS = `
  <h3 id="rename-title">Name of <span class="panel-file-name"></span></h3>
  <form class="rename-form" novalidate aria-labelledby="rename-title">
    <div class="field">
      <label for="rename-name">File name</label>
      <input id="rename-name" name="filename" maxlength="1024" autocomplete="off" spellcheck="false" aria-describedby="rename-hint">
      <p id="rename-hint" class="hint">Its links keep working. No / or \\; at most 255 bytes.</p>
    </div>
    <p class="error rename-error" id="rename-error" role="alert"></p>
    <button type="submit">Rename</button>
    <p class="status rename-status" role="status"></p>
  </form>
  <div class="preview-section" hidden>
    <h3 id="preview-title">Preview of <span class="panel-file-name"></span></h3>
    <p class="hint preview-hint" id="preview-hint"></p>
    <button type="button" class="secondary show-preview" aria-expanded="false" aria-controls="preview-box" aria-describedby="preview-hint">Show preview</button>
    <div class="preview-box" id="preview-box" hidden></div>
    <p class="status preview-status" role="status"></p>
  </div>`

/** A mistake in a form, with the field to fix. */
class FieldError extends Error {
  constructor(field, message) {
    super(message)
    this.field = field
  }
}

/** The API's `YYYY-MM-DD HH:MM:SS` from a datetime-local value, which the page labels as UTC. */
function apiTime(value) {
  const [day, time] = value.split('T')
  return `${day} ${time.length === 5 ? `${time}:00` : time.slice(0, 8)}`
}

/** The expiry an expiry <select> (and its date field) asks for: `{expires_in}`, `{expires_at}`, or `{}` for "Never". */
function chosenExpiry(select, dateInput) {
  if (select.value === '') return {}
  if (select.value !== ON_A_DATE) return { expires_in: Number(select.value) }
  if (!dateInput.value) throw new FieldError(dateInput, 'Choose the date and time of the expiry (UTC).')
  const at = apiTime(dateInput.value)
  if (Date.parse(`${at.replace(' ', 'T')}Z`) <= Date.now()) throw new FieldError(dateInput, 'Choose a date and time in the future (UTC).')
  return { expires_at: at }
}

/** What the page calls a link where it is listed: its label, else "Default link" or its number. */
function linkTitle(link) {
  return link.label ?? (link.default ? 'Default link' : `Link #${link.link_id}`)
}

/** How buttons, dialogs and messages name a link: unique on the page, since several files' panels can be open. */
function linkName(link, filename) {
  if (link.default) return `the default link of ${filename}`
  return link.label === null ? `link #${link.link_id} of ${filename}` : `the link “${link.label}” of ${filename}`
}

const capitalized = (text) => text.charAt(0).toUpperCase() + text.slice(1)

/** Asks before rotating or revoking the link named `name`; true when confirmed. */
async function confirmed(action, name) {
  const {
    title,
    effect,
    button: [label, className],
  } = CONFIRMATIONS[action]
  document.getElementById('confirm-link-title').textContent = title
  document.getElementById('confirm-link-effect').textContent = effect
  const confirm = document.getElementById('confirm-link-action')
  confirm.textContent = label
  confirm.className = className
  return (await confirmWith(confirmDialog, document.getElementById('confirm-link-name'), capitalized(name))) === 'confirm'
}

function linkFacts(link) {
  const facts = [
    [
      'Downloads',
      link.max_downloads === null
        ? `${formatNumber(link.download_count)} (no limit)`
        : `${formatNumber(link.download_count)} of ${formatNumber(link.max_downloads)}`,
    ],
    ['Expires', link.expires_at ? `${formatDate(link.expires_at)} UTC` : 'never'],
    ['Password', link.password_protected ? 'yes' : 'no'],
    ['Created', `${formatDate(link.created_at)} UTC`],
  ]
  const list = document.createElement('dl')
  list.className = 'link-facts'
  for (const [term, value] of facts) {
    const pair = document.createElement('div')
    const dt = document.createElement('dt')
    dt.textContent = term
    const dd = document.createElement('dd')
    dd.textContent = value
    pair.append(dt, dd)
    list.append(pair)
  }
  return list
}

/** Gives every id in `root` the prefix, and every reference to one (for, aria-*) too. */
function prefixIds(root, prefix) {
  for (const element of root.querySelectorAll('[id]')) element.id = prefix + element.id
  for (const attribute of ['for', 'aria-labelledby', 'aria-describedby', 'aria-controls']) {
    for (const element of root.querySelectorAll(`[${attribute}]`)) {
      const ids = element.getAttribute(attribute).split(' ')
      element.setAttribute(attribute, ids.map((id) => prefix + id).join(' '))
    }
  }
}

/**
 * The panel of one file: its links (default first, revoked last) with copy, rotate and revoke;
 * a form that creates a link; the file's expiry, set or removed. `onFileChanged()` reloads the
 * file list (a new expiry, a rotated default link), which hands the fresh record to `update`.
 * Returns `{row, update(file), load()}`; `row` goes right under the file's row.
 */
export function filePanel(file, onFileChanged) {
  const row = template.content.firstElementChild.cloneNode(true)
  row.querySelector('section.panel').insertAdjacentHTML('beforeend', SECTIONS)
  const prefix = `file-${file.file_id}-`
  prefixIds(row, prefix)
  row.id = `${prefix}panel`
  const find = (selector) => row.querySelector(selector)
  const heading = find('h3')
  const loading = find('.links-loading')
  const list = find('ul.links')
  const newLink = find('.new-link')
  const newLinkTitle = find('.new-link h4')
  const newLinkUrl = find('.new-link textarea')
  const linksStatus = find('.links-status')
  const createForm = find('form.create-link')
  const createError = find('.create-error')
  const fileExpiryNote = find('.file-expiry-note')
  const expiryNow = find('.expiry-now')
  const expiryForm = find('form.expiry-form')
  const expiryError = find('.expiry-error')
  const expiryStatus = find('.expiry-status')
  const removeExpiry = find('.remove-expiry')
  const renameForm = find('form.rename-form')
  const renameField = renameForm.elements.filename
  const renameError = find('.rename-error')
  const renameStatus = find('.rename-status')
  const previewSection = find('.preview-section')
  const previewHint = find('.preview-hint')
  const showPreview = find('.show-preview')
  const previewBox = find('.preview-box')
  const previewStatus = find('.preview-status')
  let current = file
  /** The link whose URL the "new link" box shows, if any. */
  let shownLinkId = null

  // Each expiry <select> shows its date field only for "On a date…"; the date can't be in the past.
  for (const select of row.querySelectorAll('select.expiry-choice')) {
    fillExpiryChoices(select, { never: select.dataset.never })
    const dateField = select.closest('.form-grid').querySelector('.date-field')
    select.addEventListener('change', () => {
      dateField.hidden = select.value !== ON_A_DATE
      dateField.querySelector('input').min = new Date().toISOString().slice(0, 16)
    })
  }

  /** Every message of the panel (and the list's, above it) goes when a new action starts: none is left over from an earlier one. */
  function clearMessages() {
    for (const message of [listStatus, linksStatus, createError, expiryError, expiryStatus, renameStatus, previewStatus]) say(message, '')
    clearMarks(renameForm, renameError)
    for (const field of row.querySelectorAll('[aria-invalid]')) field.removeAttribute('aria-invalid')
  }

  function showFieldError(error, where) {
    if (!(error instanceof FieldError)) throw error
    say(where, error.message)
    error.field.setAttribute('aria-invalid', 'true')
    error.field.focus()
  }

  /** The URL of a link just created or rotated, with a copy button; focus goes there. */
  function showNewLink(link, title) {
    shownLinkId = link.link_id
    newLinkTitle.textContent = title
    newLinkUrl.value = link.url
    newLink.hidden = false
    newLink.focus()
  }

  function hideNewLink() {
    shownLinkId = null
    newLink.hidden = true
  }

  function linkItem(link) {
    const item = document.createElement('li')
    item.className = `link-item ${link.status}`
    item.dataset.linkId = String(link.link_id)
    const head = document.createElement('div')
    head.className = 'link-head'
    const title = document.createElement('span')
    title.className = 'link-title'
    title.textContent = linkTitle(link)
    head.append(title)
    if (link.default && link.label !== null) {
      const tag = document.createElement('span')
      tag.className = 'tag'
      tag.textContent = 'Default'
      head.append(tag)
    }
    const state = document.createElement('span')
    state.className = `badge ${link.status}`
    state.textContent = STATUS_TEXT[link.status] ?? link.status
    head.append(state)
    item.append(head, linkFacts(link))
    // A link that answers 404 (expired, exhausted) has nothing to copy or rotate (counts and expiry
    // stay with a new URL); it can still be revoked, to clear it away. A revoked link has no action.
    const name = linkName(link, current.filename)
    const actions = document.createElement('div')
    actions.className = 'link-actions'
    if (link.status === 'active') {
      const url = document.createElement('code')
      url.className = 'link-url'
      url.textContent = link.url
      item.append(url)
      // The visible text starts each name (WCAG 2.5.3), which names the link and the file.
      const copy = button('Copy URL', () => copyLink(link, copy), 'secondary small')
      copy.setAttribute('aria-label', `Copy URL of ${name}`)
      copy.dataset.url = link.url
      const rotate = button('Rotate', () => rotateLink(link), 'secondary small')
      rotate.setAttribute('aria-label', `Rotate ${name}`)
      actions.append(copy, qrToggle(link, name), rotate)
    }
    if (!link.default && link.status !== 'revoked') {
      const revoke = button('Revoke', () => revokeLink(link), 'danger small revoke')
      revoke.setAttribute('aria-label', `Revoke ${name}`)
      actions.append(revoke)
    }
    if (actions.children.length > 0) item.append(actions)
    const qrCode = item.querySelector('.qr-toggle')?.qrCode
    if (qrCode) item.append(qrCode)
    return item
  }

  /**
   * A disclosure button that shows the link's QR code under its item, with the URL as text beside
   * it; focus stays on the button, whose state (aria-expanded) says whether the code is shown.
   */
  function qrToggle(link, name) {
    const figure = document.createElement('figure')
    figure.className = 'qr-code'
    figure.id = `${prefix}qr-${link.link_id}`
    figure.hidden = true
    const toggle = button(
      'QR code',
      async () => {
        clearMessages()
        const opening = figure.hidden
        if (opening && figure.childElementCount === 0) {
          try {
            const caption = document.createElement('figcaption')
            const title = document.createElement('span')
            title.className = 'qr-title'
            title.textContent = 'Scan it with a phone to open this URL:'
            const url = document.createElement('code')
            url.textContent = link.url
            caption.append(title, ' ', url)
            figure.append(await qrCodeSvg(link.url, `QR code of ${name}`), caption)
          } catch (error) {
            say(linksStatus, `Could not show the QR code of ${name}: ${error.message}`)
            return
          }
        }
        figure.hidden = !opening
        toggle.setAttribute('aria-expanded', String(opening))
      },
      'secondary small qr-toggle',
    )
    toggle.setAttribute('aria-label', `QR code of ${name}`)
    toggle.setAttribute('aria-expanded', 'false')
    toggle.setAttribute('aria-controls', figure.id)
    toggle.qrCode = figure
    return toggle
  }

  async function load() {
    try {
      const { links } = await api(`files/${current.file_id}/links`)
      // The server lists the default link first, then the newest; revoked ones (kept 30 days) go last.
      links.sort((a, b) => Number(a.status === 'revoked') - Number(b.status === 'revoked'))
      list.replaceChildren(...links.map(linkItem))
      loading.hidden = true
    } catch (error) {
      loading.hidden = true
      say(linksStatus, `Could not load the links: ${error.message}`)
    }
  }

  async function copyLink(link, control) {
    clearMessages()
    await copyAt(control, link.url, `the URL of ${linkName(link, current.filename)}`)
  }

  async function rotateLink(link) {
    const name = linkName(link, current.filename)
    if (!(await confirmed('rotate', name))) return
    clearMessages()
    try {
      const { link: rotated } = await api(`links/${link.link_id}/rotate`, { method: 'POST' })
      await load()
      // The default link is the file's public link: the list shows the new one.
      if (link.default) await onFileChanged()
      showNewLink(rotated, `New URL of ${name}`)
      say(linksStatus, `Rotated ${name}: the old URL no longer works.`)
    } catch (error) {
      say(linksStatus, `Could not rotate ${name}: ${error.message}`)
    }
  }

  async function revokeLink(link) {
    const name = linkName(link, current.filename)
    if (!(await confirmed('revoke', name))) return
    // Where focus goes once the list is redrawn: the Revoke button that takes this one's place, or the heading.
    const revokeButtons = () => [...list.querySelectorAll('button.revoke')]
    const place = revokeButtons().findIndex((element) => element.closest('li').dataset.linkId === String(link.link_id))
    clearMessages()
    try {
      await api(`links/${link.link_id}`, { method: 'DELETE' })
      if (shownLinkId === link.link_id) hideNewLink()
      await load()
      const remaining = revokeButtons()
      ;(remaining[Math.min(Math.max(place, 0), remaining.length - 1)] ?? heading).focus()
      say(linksStatus, `Revoked ${name}: its URL no longer works.`)
    } catch (error) {
      say(linksStatus, `Could not revoke ${name}: ${error.message}`)
    }
  }

  /** The new link's fields, as the API takes them; a FieldError names the first field to fix. */
  function linkFields() {
    const fields = createForm.elements
    const body = {}
    const label = fields.label.value.trim()
    if (label) body.label = label
    Object.assign(body, chosenExpiry(fields.expires, fields.expires_at))
    const limit = fields.max_downloads
    const count = Number(limit.value)
    if (limit.validity.badInput || (limit.value !== '' && !(Number.isInteger(count) && count >= 1 && count <= 1_000_000))) {
      throw new FieldError(limit, 'The download limit is a whole number from 1 to 1,000,000; leave it empty for no limit.')
    }
    if (limit.value !== '') body.max_downloads = count
    const password = fields.password.value
    if (password !== '' && [...password].length < 8) {
      throw new FieldError(fields.password, 'The password needs at least 8 characters; leave it empty for none.')
    }
    if (password !== '') body.password = password
    return body
  }

  createForm.addEventListener('submit', async (event) => {
    event.preventDefault()
    clearMessages()
    let body
    try {
      body = linkFields()
    } catch (error) {
      showFieldError(error, createError)
      return
    }
    const submit = createForm.querySelector('button[type=submit]')
    submit.disabled = true
    try {
      const { link } = await api(`files/${current.file_id}/links`, { method: 'POST', body })
      createForm.reset()
      createForm.querySelector('.date-field').hidden = true
      await load()
      const name = linkName(link, current.filename)
      showNewLink(link, `New link: ${linkTitle(link)}`)
      say(linksStatus, `Created ${name}.`)
    } catch (error) {
      say(createError, `Could not create the link: ${error.message}`)
    } finally {
      submit.disabled = false
    }
  })

  const copyNewLink = find('.copy-new-link')
  copyNewLink.addEventListener('click', () => copyFieldAt(copyNewLink, newLinkUrl, 'the new URL'))

  /** Changes the file's expiry (PATCH files/{id}); the list then shows it. */
  async function changeExpiry(body, describe) {
    clearMessages()
    for (const element of expiryForm.querySelectorAll('button')) element.disabled = true
    try {
      const { file: changed } = await api(`files/${current.file_id}`, { method: 'PATCH', body })
      update(changed)
      await onFileChanged()
      say(expiryStatus, describe(changed))
      return true
    } catch (error) {
      say(expiryError, `Could not change the expiry: ${error.message}`)
      return false
    } finally {
      for (const element of expiryForm.querySelectorAll('button')) element.disabled = false
    }
  }

  expiryForm.addEventListener('submit', async (event) => {
    event.preventDefault()
    clearMessages()
    let body
    try {
      body = chosenExpiry(expiryForm.elements.expires, expiryForm.elements.expires_at)
    } catch (error) {
      showFieldError(error, expiryError)
      return
    }
    await changeExpiry(body, (changed) => `${changed.filename} now expires ${formatDate(changed.expires_at)} UTC.`)
  })

  removeExpiry.addEventListener('click', async () => {
    // The button goes once there is no expiry to remove: focus stays in the form, on the choice.
    expiryForm.elements.expires.focus()
    await changeExpiry({ expires_at: null }, (changed) => `${changed.filename} no longer expires.`)
  })

  /** Shows the file as the server last described it (its name, its expiry). */
  function update(fresh) {
    // What the holder typed stays; an untouched field follows the file's name.
    if (renameField.value === '' || renameField.value === current.filename) renameField.value = fresh.filename
    current = fresh
    offerPreview()
    for (const name of row.querySelectorAll('.panel-file-name')) name.textContent = fresh.filename
    const until = fresh.expires_at ? `${formatDate(fresh.expires_at)} UTC` : ''
    expiryNow.textContent = until
      ? `This file expires ${until}. Then it is deleted, and every link to it stops working.`
      : 'This file does not expire: it stays until you delete it.'
    fileExpiryNote.textContent = until ? `No link outlives its file, which expires ${until}.` : ''
    removeExpiry.hidden = !until
    return row
  }

  /** The name as the holder typed it, checked as the server will (src/lib/filename.ts); a FieldError says what to fix. */
  function chosenName() {
    const name = renameField.value.trim()
    if (name === '') throw new FieldError(renameField, 'Type a name for the file.')
    if (/[/\\]/.test(name)) throw new FieldError(renameField, 'A file name cannot contain / or \\.')
    const bytes = new TextEncoder().encode(name).length
    if (bytes > MAX_FILENAME_BYTES) {
      throw new FieldError(
        renameField,
        `The name is too long: at most ${MAX_FILENAME_BYTES} bytes of UTF-8, and this one has ${formatNumber(bytes)}.`,
      )
    }
    return name
  }

  /** Renames the file (PATCH files/{id}); the list shows the new name. A refusal is shown on the field. */
  renameForm.addEventListener('submit', async (event) => {
    event.preventDefault()
    clearMessages()
    let filename
    try {
      filename = chosenName()
    } catch (error) {
      if (!(error instanceof FieldError)) throw error
      markFields(renameError, error.message, [error.field])
      return
    }
    if (filename === current.filename) {
      say(renameStatus, `The file is already called ${filename}.`)
      return
    }
    const submit = renameForm.querySelector('button[type=submit]')
    submit.disabled = true
    try {
      const { file: renamed } = await api(`files/${current.file_id}`, { method: 'PATCH', body: { filename } })
      renameField.value = renamed.filename
      update(renamed)
      // The links' buttons name the file ("Copy URL of the default link of <name>"): drawn again.
      await Promise.all([onFileChanged(), load()])
      say(renameStatus, `Renamed to ${renamed.filename}.`)
    } catch (error) {
      // The server's word on the name (a 400) belongs to the field; anything else to the form.
      if (error instanceof ApiError && error.status === 400) markFields(renameError, error.message, [renameField])
      else say(renameError, `Could not rename the file: ${error.message}`)
    } finally {
      submit.disabled = false
      // The list redrew the row under the panel: focus comes back to the form, not the page's body.
      if (!row.contains(document.activeElement)) (renameField.getAttribute('aria-invalid') ? renameField : submit).focus()
    }
  })

  const previewUrl = () => `api/files/${current.file_id}/preview`

  /**
   * A preview is offered where the upload's type says PNG, JPEG, GIF, WebP or PDF; the server
   * checks the stored bytes themselves and refuses anything else, so the offer is only a guess.
   */
  function offerPreview() {
    const type = current.content_type
    const offered = PREVIEWED_TYPES.has(type) && (type === 'application/pdf' || current.size <= MAX_IMAGE_PREVIEW_BYTES)
    previewSection.hidden = !offered
    previewHint.textContent =
      type === 'application/pdf'
        ? 'The PDF opens in a new tab, in a sandbox: it cannot reach the dashboard or your session.'
        : `An image of ${formatBytes(current.size)}; it is loaded only when you ask.`
  }

  function hidePreview() {
    previewBox.hidden = true
    previewBox.replaceChildren()
    showPreview.textContent = 'Show preview'
    showPreview.setAttribute('aria-expanded', 'false')
  }

  /**
   * What the server previews of the file now (its type from the bytes), or why not. HEAD first: the
   * server then reads the file's first bytes only, not the whole file; a refusal is asked again with
   * GET, whose answer is the error's small JSON body.
   */
  async function previewType() {
    const headers = { accept: 'image/*,application/pdf' }
    const head = await fetch(previewUrl(), { method: 'HEAD', headers })
    if (head.ok) return head.headers.get('content-type')
    const answer = await fetch(previewUrl(), { headers })
    if (answer.ok) {
      await answer.body?.cancel()
      return answer.headers.get('content-type')
    }
    const body = await answer.json().catch(() => ({}))
    // "No preview: it is not …" reads "No preview of <name>: it is not …" in the page.
    throw new Error((body.error?.message ?? `the server answered ${answer.status}.`).replace(/^No preview: /, ''))
  }

  showPreview.addEventListener('click', async () => {
    clearMessages()
    if (!previewBox.hidden) {
      hidePreview()
      return
    }
    // Busy, not disabled: a disabled button would drop the focus to the page's body.
    if (showPreview.getAttribute('aria-busy') === 'true') return
    showPreview.setAttribute('aria-busy', 'true')
    try {
      const type = await previewType()
      const name = current.filename
      if (type === 'application/pdf') {
        const open = document.createElement('a')
        open.href = previewUrl()
        open.target = '_blank'
        open.rel = 'noopener noreferrer'
        open.className = 'open-pdf'
        open.textContent = `Open ${name} in a new tab`
        previewBox.replaceChildren(open)
      } else {
        const image = document.createElement('img')
        image.alt = `Preview of ${name}`
        image.decoding = 'async'
        const loaded = new Promise((resolve, reject) => {
          image.addEventListener('load', resolve, { once: true })
          image.addEventListener('error', () => reject(new Error('the browser could not show the image.')), { once: true })
        })
        image.src = previewUrl()
        previewBox.replaceChildren(image)
        previewBox.hidden = false
        await loaded
      }
      previewBox.hidden = false
      showPreview.textContent = 'Hide preview'
      showPreview.setAttribute('aria-expanded', 'true')
    } catch (error) {
      hidePreview()
      say(previewStatus, `No preview of ${current.filename}: ${error.message}`)
    } finally {
      showPreview.removeAttribute('aria-busy')
    }
  })

  update(file)
  return { row, update, load }
}
