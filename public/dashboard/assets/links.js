// A file's links and its expiry (issue 28, ../shared/spec/links.md): the panel that opens under a
// file's row on the files page. Its markup is the page's <template id="file-panel">; every id in a
// copy gets the file's prefix, so that several panels can be open at once.
import { api, button, confirmWith, copyAt, copyFieldAt, formatDate, formatNumber, say } from './common.js'

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
    for (const message of [listStatus, linksStatus, createError, expiryError, expiryStatus]) say(message, '')
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
      actions.append(copy, rotate)
    }
    if (!link.default && link.status !== 'revoked') {
      const revoke = button('Revoke', () => revokeLink(link), 'danger small revoke')
      revoke.setAttribute('aria-label', `Revoke ${name}`)
      actions.append(revoke)
    }
    if (actions.children.length > 0) item.append(actions)
    return item
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
    current = fresh
    for (const name of row.querySelectorAll('.panel-file-name')) name.textContent = fresh.filename
    const until = fresh.expires_at ? `${formatDate(fresh.expires_at)} UTC` : ''
    expiryNow.textContent = until
      ? `This file expires ${until}. Then it is deleted, and every link to it stops working.`
      : 'This file does not expire: it stays until you delete it.'
    fileExpiryNote.textContent = until ? `No link outlives its file, which expires ${until}.` : ''
    removeExpiry.hidden = !until
    return row
  }

  update(file)
  return { row, update, load }
}
