import { api, say } from './common.js'

const form = document.getElementById('invite-form')
const error = document.getElementById('form-error')
// The token travels in the fragment, which browsers never send to a server; drop it from the address bar.
const token = location.hash.slice(1)
history.replaceState(null, '', location.pathname)
if (!token) say(error, 'This page needs the whole invitation link. Open the link the operator gave you.')

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
    location.assign('files')
  } catch (failure) {
    say(error, failure.message)
  } finally {
    submit.disabled = false
  }
})
