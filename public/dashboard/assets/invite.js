import { api, say } from './common.js'

const form = document.getElementById('invite-form')
const error = document.getElementById('form-error')
const TOKEN_KEY = 'fileshare-invite-token'

// The token travels in the fragment, which browsers never send to a server; drop it from the
// address bar, but keep it in this tab's sessionStorage so that a reload still works.
const fromLink = location.hash.slice(1)
if (fromLink) sessionStorage.setItem(TOKEN_KEY, fromLink)
history.replaceState(null, '', location.pathname)
const token = sessionStorage.getItem(TOKEN_KEY) ?? ''

async function showAccount() {
  if (!token) {
    say(error, 'This page needs the whole invitation link. Open the link the operator gave you.')
    return
  }
  try {
    const details = await api('invite/details', { method: 'POST', body: { token } })
    document.getElementById('invite-email').textContent = details.email
    // For password managers: the account the new password belongs to.
    form.username.value = details.email
    document.getElementById('invite-for').hidden = false
  } catch (failure) {
    if (failure.code === 'invalid_invite') sessionStorage.removeItem(TOKEN_KEY)
    say(error, failure.message)
  }
}

form.addEventListener('submit', async (event) => {
  event.preventDefault()
  say(error, '')
  const password = form.password.value
  if ([...password].length < 12) {
    say(error, 'The password must have at least 12 characters.')
    form.password.focus()
    return
  }
  if (password !== form.confirm.value) {
    say(error, 'The two passwords differ.')
    form.confirm.focus()
    return
  }
  const submit = form.querySelector('button[type=submit]')
  submit.disabled = true
  try {
    await api('invite', { method: 'POST', body: { token, password } })
    sessionStorage.removeItem(TOKEN_KEY)
    location.assign('files')
  } catch (failure) {
    say(error, failure.message)
  } finally {
    submit.disabled = false
  }
})

showAccount().finally(() => document.body.setAttribute('data-ready', 'true'))
