import { api } from './common.js'
import { clearMarks, markFields } from './field-errors.js'

const form = document.getElementById('sign-in-form')
const error = document.getElementById('form-error')
const codeStep = document.getElementById('code-step')
const passwordStep = document.getElementById('password-step')
const codeForm = document.getElementById('code-form')
const codeError = document.getElementById('code-error')
const signedOut = document.getElementById('signed-out')
/** The token of a right password, waiting for the second factor; only in this page's memory. */
let challenge = ''

// Why the holder is here: they signed out (sign-in?signed-out), everywhere (?everywhere), or their
// session ended (?expired). The word goes from the address bar, so a reload does not repeat it.
const reasons = {
  'signed-out': 'You are signed out.',
  everywhere: 'You are signed out everywhere.',
  expired: 'Your session ended; sign in again.',
}
const query = new URLSearchParams(location.search)
const reason = Object.keys(reasons).find((name) => query.has(name))
if (reason) {
  signedOut.textContent = reasons[reason]
  history.replaceState(null, '', location.pathname)
}

form.addEventListener('submit', async (event) => {
  event.preventDefault()
  clearMarks(form, error)
  signedOut.textContent = ''
  const email = form.email.value.trim()
  const password = form.password.value
  if (!email || !password) {
    const missing = [!email && form.email, !password && form.password].filter(Boolean)
    markFields(
      error,
      email ? 'Enter your password.' : password ? 'Enter your email address.' : 'Enter your email address and your password.',
      missing,
    )
    return
  }
  const submit = form.querySelector('button[type=submit]')
  submit.disabled = true
  try {
    const answer = await api('sign-in', { method: 'POST', body: { email, password } })
    if (answer.two_factor_required) {
      challenge = answer.challenge
      showCodeStep()
      return
    }
    location.assign('files')
  } catch (failure) {
    form.password.value = ''
    // Which of the two was wrong is not told (sign_in_failed): the password is what gets typed again.
    markFields(error, failure.message, failure.code === 'sign_in_failed' ? [form.password, form.email] : [form.password])
    form.password.focus()
  } finally {
    submit.disabled = false
  }
})

function showCodeStep() {
  passwordStep.hidden = true
  codeStep.hidden = false
  clearMarks(codeForm, codeError)
  codeForm.code.value = ''
  codeForm.code.focus()
}

function startOver(message = '') {
  challenge = ''
  codeStep.hidden = true
  passwordStep.hidden = false
  form.password.value = ''
  if (message) markFields(error, message, [form.password])
  else form.password.focus()
}

document.getElementById('start-over').addEventListener('click', () => startOver())

codeForm.addEventListener('submit', async (event) => {
  event.preventDefault()
  clearMarks(codeForm, codeError)
  const code = codeForm.code.value.trim()
  if (!code) {
    markFields(codeError, 'Enter the code from your authenticator app, or a recovery code.', [codeForm.code])
    return
  }
  const submit = codeForm.querySelector('button[type=submit]')
  submit.disabled = true
  try {
    await api('sign-in/two-factor', { method: 'POST', body: { challenge, code } })
    location.assign('files')
  } catch (failure) {
    // A challenge that expired or took too many wrong codes is gone: the password is asked again.
    if (failure.code === 'sign_in_expired') {
      startOver(failure.message)
      return
    }
    codeForm.code.value = ''
    markFields(codeError, failure.message, [codeForm.code])
  } finally {
    submit.disabled = false
  }
})

document.body.setAttribute('data-ready', 'true')
