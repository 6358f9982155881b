import {
  api,
  button,
  cell,
  confirmWith,
  copyFieldAt,
  feedbackAt,
  formatDate,
  formatNumber,
  formatBytes,
  initPage,
  reportLoadError,
  say,
} from './common.js'
import { clearMarks, markFields } from './field-errors.js'
import { initAccountSecurity } from './settings-security.js'

const status = document.getElementById('status')
const keysBody = document.getElementById('keys-body')
const noKeys = document.getElementById('no-keys')
const form = document.getElementById('create-key-form')
const formError = document.getElementById('form-error')
const newKey = document.getElementById('new-key')
const newKeyValue = document.getElementById('new-key-value')
const confirmDialog = document.getElementById('confirm-revoke')
const nameInput = document.getElementById('key-name')
const scopeBoxes = [...form.querySelectorAll('input[name=scope]')]
const presetRadios = [...form.querySelectorAll('input[name=preset]')]
const ipsInput = document.getElementById('key-ips')
const expirySelect = document.getElementById('key-expiry')
const daysField = document.getElementById('key-days-field')
const daysInput = document.getElementById('key-days')
const passwordForm = document.getElementById('password-form')
const passwordError = document.getElementById('password-error')
let accountEmail = ''

function keyState(key) {
  if (key.revoked_at) return `Revoked ${formatDate(key.revoked_at)}`
  if (key.expires_at && Date.parse(key.expires_at) <= Date.now()) return `Expired ${formatDate(key.expires_at)}`
  return 'Active'
}

/** Every scope, in the order the API lists them. */
const SCOPES = [
  'files:read',
  'files:write',
  'files:delete',
  'links:read',
  'links:write',
  'stats:read',
  'webhooks:manage',
  'requests:manage',
  'audit:read',
]

/** The form's presets: what each one ticks. "custom" is any other set. */
const PRESETS = {
  full: SCOPES,
  read: ['files:read', 'links:read', 'stats:read'],
  upload: ['files:write'],
}

const MAX_EXPIRY_DAYS = 3650

/** A key's scopes in a few words: "Full access" when it holds all of them, else their names. */
function scopesText(scopes) {
  if (SCOPES.every((scope) => scopes.includes(scope))) return 'Full access'
  return SCOPES.filter((scope) => scopes.includes(scope)).join(', ') || 'none'
}

function lastUseCell(key) {
  const element = cell(formatDate(key.last_used_at), 'Last used (UTC)', 'date')
  if (!key.last_used_at || !key.last_used_ip) return element
  // The date and the address under it in one box, so that a phone's stacked card keeps them together.
  const box = document.createElement('span')
  box.className = 'last-use'
  const from = document.createElement('span')
  from.className = 'last-address'
  from.textContent = `from ${key.last_used_ip}`
  // The space keeps the cell's text one sentence for a screen reader; the address takes a line of its own.
  box.append(formatDate(key.last_used_at), ' ', from)
  element.replaceChildren(box)
  return element
}

/** The state; a date in it stays whole when the cell wraps ("Revoked" above "2026-11-28 00:23", never "2026-" above "11-28"). */
function stateCell(state) {
  const element = cell(state, 'State')
  const [, word, date] = /^(\S+) (.+)$/.exec(state) ?? []
  if (!date) return element
  const whole = document.createElement('span')
  whole.className = 'key-state-date'
  whole.textContent = date
  element.replaceChildren(`${word} `, whole)
  return element
}

function keyRow(key) {
  const row = document.createElement('tr')
  const state = keyState(key)
  if (state !== 'Active') row.className = 'inactive'
  row.append(
    // `name` wraps a long name anywhere; `date` keeps a date on one line (dashboard.css).
    cell(key.name, 'Name', 'name'),
    cell(`${key.prefix}…`, 'Prefix', 'mono'),
    cell(scopesText(key.scopes ?? SCOPES), 'Scopes', 'scopes'),
    cell(key.allowed_ips?.length ? key.allowed_ips.join(', ') : 'Anywhere', 'Allowed from', 'addresses'),
    cell(formatDate(key.created_at), 'Created (UTC)', 'date'),
    lastUseCell(key),
    stateCell(state),
  )
  const actions = cell('', '', 'actions')
  if (state === 'Active') {
    const revoke = button('Revoke', () => revokeKey(key), 'danger')
    revoke.setAttribute('aria-label', `Revoke key ${key.name}`)
    actions.append(revoke)
  }
  row.append(actions)
  return row
}

async function loadKeys() {
  const { keys } = await api('keys')
  // Active keys first, newest first within each group.
  keys.sort((a, b) => Number(Boolean(a.revoked_at)) - Number(Boolean(b.revoked_at)) || b.key_id - a.key_id)
  keysBody.replaceChildren(...keys.map(keyRow))
  noKeys.hidden = keys.length > 0
}

async function revokeKey(key) {
  const choice = await confirmWith(confirmDialog, document.getElementById('confirm-revoke-name'), key.name)
  if (choice !== 'revoke') return
  // Where focus goes once the table is redrawn: the Revoke button that takes this one's place (the
  // next active key, else the one before), or the table's heading when no active key is left.
  const revokeButtons = () => [...keysBody.querySelectorAll('td.actions button')]
  const place = revokeButtons().findIndex((element) => element === document.activeElement)
  try {
    await api(`keys/${key.key_id}`, { method: 'DELETE' })
    say(status, `Revoked the key ${key.name}.`)
    await loadKeys()
    const remaining = revokeButtons()
    const next = remaining[Math.min(Math.max(place, 0), remaining.length - 1)]
    if (next) next.focus()
    else document.getElementById('keys-title').focus()
  } catch (error) {
    say(status, `Could not revoke ${key.name}: ${error.message}`)
  }
}

/** The plan's API access; on a plan without it, why the API refuses and which plans include it. */
function showAccess(session) {
  const box = document.getElementById('api-access')
  const { account } = session
  const lead = document.createElement('p')
  if (account.api_access) {
    box.className = 'notice ok'
    lead.textContent = `Your plan, ${account.plan}, includes API access. The API is at `
    const code = document.createElement('code')
    code.textContent = session.api_base_url
    lead.append(code, '.')
    box.replaceChildren(lead)
    return
  }
  box.className = 'notice warn'
  lead.textContent =
    `Your plan, ${account.plan}, does not include API access: the API refuses every request made with your keys ` +
    '(403 plan_not_supported). These plans include it; ask the operator to move your account to one of them:'
  const list = document.createElement('ul')
  for (const plan of session.api_plans) {
    const item = document.createElement('li')
    item.textContent =
      `${plan.name}: ${formatNumber(plan.requests_per_minute)} requests a minute, ${formatNumber(plan.requests_per_day)} a day, ` +
      `files up to ${formatBytes(plan.max_file_size)}, ${formatNumber(plan.daily_uploads)} uploads a day`
    list.append(item)
  }
  box.replaceChildren(lead, list)
}

// ---- The create form: presets tick scopes; the scopes say which preset they match. ----

function checkedScopes() {
  return scopeBoxes.filter((box) => box.checked).map((box) => box.value)
}

/** The preset that the ticked scopes are exactly, else "custom". */
function syncPreset() {
  const checked = checkedScopes()
  const match = Object.entries(PRESETS).find(
    ([, scopes]) => scopes.length === checked.length && scopes.every((scope) => checked.includes(scope)),
  )
  const name = match ? match[0] : 'custom'
  for (const radio of presetRadios) radio.checked = radio.value === name
}

for (const radio of presetRadios) {
  radio.addEventListener('change', () => {
    const scopes = PRESETS[radio.value]
    // "Custom" keeps the ticks as they are.
    if (!scopes) return
    for (const box of scopeBoxes) box.checked = scopes.includes(box.value)
    clearFieldError('scopes')
  })
}
for (const box of scopeBoxes) box.addEventListener('change', syncPreset)

function syncExpiry() {
  daysField.hidden = expirySelect.value !== 'custom'
}
expirySelect.addEventListener('change', syncExpiry)

// ---- Field errors: the field gets aria-invalid and its message through aria-describedby. ----

/** Each field the page checks: the elements to mark, the message's element, where focus goes. */
const FIELDS = {
  name: { marked: () => [nameInput], error: 'key-name-error', focus: () => nameInput },
  scopes: { marked: () => [document.getElementById('key-scopes'), ...scopeBoxes], error: 'key-scopes-error', focus: () => scopeBoxes[0] },
  allowed_ips: { marked: () => [ipsInput], error: 'key-ips-error', focus: () => ipsInput },
  days: { marked: () => [daysInput], error: 'key-days-error', focus: () => daysInput },
}

function describedBy(element, id, on) {
  const ids = (element.getAttribute('aria-describedby') ?? '').split(' ').filter((value) => value && value !== id)
  if (on) ids.push(id)
  if (ids.length > 0) element.setAttribute('aria-describedby', ids.join(' '))
  else element.removeAttribute('aria-describedby')
}

function setFieldError(name, message) {
  const field = FIELDS[name]
  say(document.getElementById(field.error), message)
  for (const element of field.marked()) {
    // A fieldset is a group, where aria-invalid has no meaning: it gets the message only.
    if (element.tagName !== 'FIELDSET') element.setAttribute('aria-invalid', 'true')
    describedBy(element, field.error, true)
  }
}

function clearFieldError(name) {
  const field = FIELDS[name]
  say(document.getElementById(field.error), '')
  for (const element of field.marked()) {
    element.removeAttribute('aria-invalid')
    describedBy(element, field.error, false)
  }
}

// ---- The address rules of the server (src/services/key-policy.ts), checked here first. ----

const IPV4 = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/

/** 4 or 6 for an IPv4 or IPv6 address as the server reads it, else 0. */
function ipFamily(text) {
  if (IPV4.test(text)) return 4
  // The browser's URL parser knows IPv6 (with an IPv4 tail too); a zone (%eth0) is refused, as it means nothing elsewhere.
  if (!text.includes(':') || !/^[0-9A-Fa-f:.]+$/.test(text)) return 0
  try {
    new URL(`http://[${text}]/`)
    return 6
  } catch {
    return 0
  }
}

/** Whether one entry is an address or a CIDR range: 10.0.0.0/8, 2001:db8::/32, 192.0.2.7. */
function isAddressOrRange(entry) {
  const [address = '', prefix, ...rest] = entry.split('/')
  const family = ipFamily(address)
  if (family === 0 || rest.length > 0) return false
  if (prefix === undefined) return true
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128)
}

/** The entries of the addresses field: one per line, or separated by commas (or spaces). */
function addressEntries(text) {
  return text.split(/[\s,]+/).filter((entry) => entry !== '')
}

/** The request's body, or null after marking every field at fault (focus on the first). */
function readForm() {
  for (const name of Object.keys(FIELDS)) clearFieldError(name)
  const faults = []
  const name = nameInput.value.trim()
  if (!name) faults.push(['name', 'Give the key a name.'])
  const scopes = checkedScopes()
  if (scopes.length === 0) faults.push(['scopes', 'Tick at least one scope, or choose a preset.'])
  const addresses = addressEntries(ipsInput.value)
  const bad = addresses.filter((entry) => !isAddressOrRange(entry))
  if (bad.length > 0) {
    const list = bad.map((entry) => `"${entry}"`).join(', ')
    faults.push([
      'allowed_ips',
      `${list} ${bad.length === 1 ? 'is not an IP address or a CIDR range' : 'are not IP addresses or CIDR ranges'} (such as 10.0.0.0/8 or 2001:db8::/32).`,
    ])
  }
  let days = null
  if (expirySelect.value === 'custom') {
    days = Number(daysInput.value)
    if (!/^\d+$/.test(daysInput.value.trim()) || days < 1 || days > MAX_EXPIRY_DAYS) {
      faults.push(['days', `Give a whole number of days from 1 to ${MAX_EXPIRY_DAYS}.`])
    }
  } else if (expirySelect.value !== 'never') {
    days = Number(expirySelect.value)
  }
  if (faults.length > 0) {
    for (const [field, message] of faults) setFieldError(field, message)
    FIELDS[faults[0][0]].focus().focus()
    return null
  }
  // All nine: no list, so that the key holds every scope, present and future ("*").
  const body = { name, expires_in_days: days }
  if (scopes.length < SCOPES.length) body.scopes = scopes
  if (addresses.length > 0) body.allowed_ips = addresses
  return body
}

form.addEventListener('submit', async (event) => {
  event.preventDefault()
  say(formError, '')
  const body = readForm()
  if (!body) return
  const submit = form.querySelector('button[type=submit]')
  submit.disabled = true
  try {
    const created = await api('keys', { method: 'POST', body })
    newKeyValue.value = created.api_key
    newKey.hidden = false
    newKey.focus()
    form.reset()
    syncPreset()
    syncExpiry()
    say(status, `Created the key ${created.key.name}. Copy it now: it is not shown again.`)
    await loadKeys()
  } catch (error) {
    // The server's word, next to the form (the page checks the same rules first, so this is rare).
    say(formError, error.message)
  } finally {
    submit.disabled = false
  }
})

// Feedback at the button (the page's status line is far above it on a phone).
const copyKey = document.getElementById('copy-key')
copyKey.addEventListener('click', () => copyFieldAt(copyKey, newKeyValue, 'the key'))

let changingPassword = false
passwordForm.addEventListener('submit', async (event) => {
  event.preventDefault()
  clearMarks(passwordForm, passwordError)
  const current = passwordForm.current.value
  const password = passwordForm.password.value
  if (!current) return markFields(passwordError, 'Enter your current password.', [passwordForm.current])
  if ([...password].length < 12)
    return markFields(passwordError, 'The new password must have at least 12 characters.', [passwordForm.password])
  if (password !== passwordForm.confirm.value) return markFields(passwordError, 'The two new passwords differ.', [passwordForm.confirm])
  // Not `disabled`: a disabled button loses focus, which then drops to <body>.
  const submit = passwordForm.querySelector('button[type=submit]')
  if (changingPassword) return
  changingPassword = true
  submit.setAttribute('aria-disabled', 'true')
  try {
    await api('password', { method: 'POST', body: { current_password: current, new_password: password } })
    passwordForm.reset()
    passwordForm.username.value = accountEmail
    feedbackAt(submit, 'Changed your password. Every other session of your account has ended; this one goes on.', { label: 'Changed' })
    await security.refreshSessions()
  } catch (error) {
    if (error.code === 'wrong_password') {
      passwordForm.current.value = ''
      markFields(passwordError, error.message, [passwordForm.current])
    } else if (error.code === 'invalid_parameter') {
      markFields(passwordError, error.message, [passwordForm.password])
    } else {
      markFields(passwordError, error.message, [])
    }
  } finally {
    changingPassword = false
    submit.removeAttribute('aria-disabled')
  }
})

document.getElementById('sign-out-everywhere').addEventListener('click', async () => {
  const dialog = document.getElementById('confirm-sign-out-everywhere')
  const choice = await confirmWith(dialog, document.getElementById('confirm-sign-out-everywhere-email'), accountEmail)
  if (choice !== 'sign-out') return
  try {
    await api('sign-out-everywhere', { method: 'POST' })
    location.assign('sign-in?everywhere')
  } catch (error) {
    say(status, `Could not sign out everywhere: ${error.message}`)
  }
})

const security = initAccountSecurity()

async function load() {
  const session = await initPage()
  accountEmail = session.account.email
  passwordForm.username.value = accountEmail
  document.getElementById('email').textContent = session.account.email
  document.getElementById('account-id').textContent = String(session.account.account_id)
  document.getElementById('plan').textContent = session.account.plan
  document.getElementById('api-base').textContent = session.api_base_url
  // Where the operator requires a second factor and the holder has none, only enrolment is open.
  const mustEnrol = session.two_factor.required && !session.two_factor.enabled
  await security.load(session, mustEnrol)
  if (!mustEnrol) {
    showAccess(session)
    await loadKeys()
  }
  document.body.setAttribute('data-ready', 'true')
}

load().catch(reportLoadError)
