import {
  api,
  button,
  cell,
  confirmWith,
  copyField,
  formatDate,
  formatNumber,
  formatBytes,
  initPage,
  reportLoadError,
  say,
} from './common.js'

const status = document.getElementById('status')
const keysBody = document.getElementById('keys-body')
const noKeys = document.getElementById('no-keys')
const form = document.getElementById('create-key-form')
const formError = document.getElementById('form-error')
const newKey = document.getElementById('new-key')
const newKeyValue = document.getElementById('new-key-value')
const confirmDialog = document.getElementById('confirm-revoke')
const nameInput = document.getElementById('key-name')
const passwordForm = document.getElementById('password-form')
const passwordError = document.getElementById('password-error')
let accountEmail = ''

function keyState(key) {
  if (key.revoked_at) return `Revoked ${formatDate(key.revoked_at)}`
  if (key.expires_at && Date.parse(key.expires_at) <= Date.now()) return `Expired ${formatDate(key.expires_at)}`
  return 'Active'
}

function keyRow(key) {
  const row = document.createElement('tr')
  const state = keyState(key)
  if (state !== 'Active') row.className = 'inactive'
  row.append(
    // `name` wraps a long name anywhere; `date` keeps a date on one line (dashboard.css).
    cell(key.name, 'Name', 'name'),
    cell(`${key.prefix}…`, 'Prefix', 'mono'),
    cell(formatDate(key.created_at), 'Created (UTC)', 'date'),
    cell(formatDate(key.last_used_at), 'Last used (UTC)', 'date'),
    cell(state, 'State'),
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

form.addEventListener('submit', async (event) => {
  event.preventDefault()
  say(formError, '')
  const name = nameInput.value.trim()
  if (!name) {
    say(formError, 'Give the key a name.')
    nameInput.focus()
    return
  }
  try {
    const created = await api('keys', { method: 'POST', body: { name } })
    newKeyValue.value = created.api_key
    newKey.hidden = false
    newKey.focus()
    form.reset()
    say(status, `Created the key ${created.key.name}. Copy it now: it is not shown again.`)
    await loadKeys()
  } catch (error) {
    say(formError, error.message)
  }
})

document.getElementById('copy-key').addEventListener('click', () => copyField(newKeyValue, status, 'the key'))

passwordForm.addEventListener('submit', async (event) => {
  event.preventDefault()
  say(passwordError, '')
  const current = passwordForm.current.value
  const password = passwordForm.password.value
  if (!current) {
    say(passwordError, 'Enter your current password.')
    passwordForm.current.focus()
    return
  }
  if ([...password].length < 12) {
    say(passwordError, 'The new password must have at least 12 characters.')
    passwordForm.password.focus()
    return
  }
  if (password !== passwordForm.confirm.value) {
    say(passwordError, 'The two new passwords differ.')
    passwordForm.confirm.focus()
    return
  }
  const submit = passwordForm.querySelector('button[type=submit]')
  submit.disabled = true
  try {
    await api('password', { method: 'POST', body: { current_password: current, new_password: password } })
    passwordForm.reset()
    say(status, 'Changed your password. Every other session of your account has ended; this one goes on.')
  } catch (error) {
    say(passwordError, error.message)
    if (error.code === 'wrong_password') {
      passwordForm.current.value = ''
      passwordForm.current.focus()
    }
  } finally {
    submit.disabled = false
  }
})

document.getElementById('sign-out-everywhere').addEventListener('click', async () => {
  const dialog = document.getElementById('confirm-sign-out-everywhere')
  const choice = await confirmWith(dialog, document.getElementById('confirm-sign-out-everywhere-email'), accountEmail)
  if (choice !== 'sign-out') return
  try {
    await api('sign-out-everywhere', { method: 'POST' })
    location.assign('sign-in')
  } catch (error) {
    say(status, `Could not sign out everywhere: ${error.message}`)
  }
})

async function load() {
  const session = await initPage()
  accountEmail = session.account.email
  document.getElementById('email').textContent = session.account.email
  document.getElementById('account-id').textContent = String(session.account.account_id)
  document.getElementById('plan').textContent = session.account.plan
  document.getElementById('api-base').textContent = session.api_base_url
  showAccess(session)
  await loadKeys()
  document.body.setAttribute('data-ready', 'true')
}

load().catch(reportLoadError)
