import { api, say } from './common.js'

const form = document.getElementById('sign-in-form')
const error = document.getElementById('form-error')

form.addEventListener('submit', async (event) => {
  event.preventDefault()
  say(error, '')
  const email = form.email.value.trim()
  const password = form.password.value
  if (!email || !password) {
    say(error, 'Enter your email address and your password.')
    ;(email ? form.password : form.email).focus()
    return
  }
  const submit = form.querySelector('button[type=submit]')
  submit.disabled = true
  try {
    await api('sign-in', { method: 'POST', body: { email, password } })
    location.assign('files')
  } catch (failure) {
    say(error, failure.message)
    form.password.value = ''
    form.password.focus()
  } finally {
    submit.disabled = false
  }
})
