import { api } from './common.js'
import { clearMarks, markFields } from './field-errors.js'

const form = document.getElementById('invite-form')
const error = document.getElementById('form-error')
const unusable = document.getElementById('invite-unusable')
const TOKEN_KEY = 'fileshare-invite-token'

// The token travels in the fragment, which browsers never send to a server; drop it from the
// address bar, but keep it in this tab's sessionStorage so that a reload still works.
const fromLink = location.hash.slice(1)
if (fromLink) sessionStorage.setItem(TOKEN_KEY, fromLink)
history.replaceState(null, '', location.pathname)
const token = sessionStorage.getItem(TOKEN_KEY) ?? ''

/** A link that cannot be used: the form goes (nothing typed there could work), the reason stays. */
function refuse(message) {
  form.hidden = true
  unusable.hidden = false
  document.getElementById('invite-unusable-message').textContent = message
}

async function showAccount() {
  if (!token) {
    refuse('This page needs the whole invitation link. Open the link the operator gave you.')
    return
  }
  try {
    const details = await api('invite/details', { method: 'POST', body: { token } })
    document.getElementById('invite-email').textContent = details.email
    // For password managers: the account the new password belongs to.
    form.username.value = details.email
    document.getElementById('invite-for').hidden = false
  } catch (failure) {
    if (failure.code === 'invalid_invite') {
      sessionStorage.removeItem(TOKEN_KEY)
      refuse(failure.message)
    } else {
      error.textContent = failure.message
    }
  }
}

form.addEventListener('submit', async (event) => {
  event.preventDefault()
  clearMarks(form, error)
  const password = form.password.value
  if ([...password].length < 12) {
    markFields(error, 'The password must have at least 12 characters.', [form.password])
    return
  }
  if (password !== form.confirm.value) {
    markFields(error, 'The two passwords differ.', [form.confirm])
    return
  }
  const submit = form.querySelector('button[type=submit]')
  submit.disabled = true
  try {
    const answer = await api('invite', { method: 'POST', body: { token, password } })
    sessionStorage.removeItem(TOKEN_KEY)
    if (answer.two_factor_required) {
      // The password is set; a holder with a second factor still signs in with a code.
      form.hidden = true
      const done = document.getElementById('password-set')
      done.hidden = false
      done.focus()
      return
    }
    location.assign('files')
  } catch (failure) {
    if (failure.code === 'invalid_invite') refuse(failure.message)
    else markFields(error, failure.message, failure.code === 'invalid_parameter' ? [form.password] : [])
  } finally {
    submit.disabled = false
  }
})

showAccount().finally(() => document.body.setAttribute('data-ready', 'true'))
