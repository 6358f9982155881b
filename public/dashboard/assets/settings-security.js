// Account settings, Security: two-factor sign-in (enrol with a QR code, recovery codes, turn off),
// the email change the operator confirms, and the list of signed-in sessions with sign-out per session.
import { api, button, cell, clearFeedback, copyAt, feedbackAt, formatDate } from './common.js'
import { clearMarks, markFields } from './field-errors.js'

const $ = (id) => document.getElementById(id)

/** A form whose submit button stays focusable while it works (a disabled button drops focus to <body>). */
function busyForm(form, work) {
  let busy = false
  form.addEventListener('submit', async (event) => {
    event.preventDefault()
    if (busy) return
    const submit = form.querySelector('button[type=submit]')
    busy = true
    submit.setAttribute('aria-disabled', 'true')
    try {
      await work(submit)
    } finally {
      busy = false
      submit.removeAttribute('aria-disabled')
    }
  })
}

export function initAccountSecurity() {
  let session = null
  let mustEnrol = false

  // ---- Two-factor sign-in ----

  const state = $('two-factor-state')
  const off = $('two-factor-off')
  const on = $('two-factor-on')
  const enrol = $('enrol')
  const enrolForm = $('enrol-form')
  const recovery = $('recovery')
  const regenerateForm = $('regenerate-form')
  const disableForm = $('disable-form')

  async function showTwoFactor() {
    const status = await api('two-factor')
    const left = status.recovery_codes_left
    state.textContent = status.enabled
      ? `On. ${left} of 10 recovery codes left.${left <= 3 ? ' Make new ones soon.' : ''}`
      : status.required
        ? 'Off. This server requires it: set it up to go on.'
        : 'Off.'
    off.hidden = status.enabled || !enrol.hidden
    on.hidden = !status.enabled
    return status
  }

  function showRecoveryCodes(codes) {
    const list = $('recovery-codes')
    list.replaceChildren(
      ...codes.map((code) => {
        const item = document.createElement('li')
        item.textContent = code
        return item
      }),
    )
    recovery.hidden = false
    recovery.focus()
  }

  busyForm(off, async () => {
    const error = $('enrol-start-error')
    clearMarks(off, error)
    const password = off.password.value
    if (!password) return markFields(error, 'Enter your password.', [off.password])
    try {
      const started = await api('two-factor/enrol', { method: 'POST', body: { password } })
      off.reset()
      // The SVG goes in as an image (a data: URL): nothing of it runs, and the page's policy allows it.
      $('enrol-qr').src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(started.qr_svg)}`
      $('enrol-secret').textContent = started.secret.replace(/(.{4})/g, '$1 ').trim()
      off.hidden = true
      enrol.hidden = false
      clearMarks(enrolForm, $('enrol-error'))
      enrolForm.code.value = ''
      enrolForm.code.focus()
    } catch (failure) {
      off.password.value = ''
      markFields(error, failure.message, failure.code === 'wrong_password' ? [off.password] : [])
    }
  })

  $('enrol-cancel').addEventListener('click', () => {
    enrol.hidden = true
    off.hidden = false
    $('enrol-qr').removeAttribute('src')
    $('enrol-secret').textContent = ''
    off.password.focus()
  })

  busyForm(enrolForm, async () => {
    const error = $('enrol-error')
    clearMarks(enrolForm, error)
    const code = enrolForm.code.value.replace(/\s+/g, '')
    if (!/^\d{6}$/.test(code)) return markFields(error, 'Enter the 6 digits the app shows.', [enrolForm.code])
    try {
      const { recovery_codes: codes } = await api('two-factor/confirm', { method: 'POST', body: { code } })
      enrol.hidden = true
      $('enrol-qr').removeAttribute('src')
      $('enrol-secret').textContent = ''
      await showTwoFactor()
      showRecoveryCodes(codes)
      if (mustEnrol) {
        mustEnrol = false
        $('enrol-required').hidden = true
      }
    } catch (failure) {
      enrolForm.code.value = ''
      markFields(error, failure.message, [enrolForm.code])
    }
  })

  const copyRecovery = $('copy-recovery')
  copyRecovery.addEventListener('click', () => {
    const codes = [...$('recovery-codes').children].map((item) => item.textContent).join('\n')
    copyAt(copyRecovery, codes, 'the recovery codes')
  })

  $('recovery-done').addEventListener('click', () => {
    recovery.hidden = true
    $('recovery-codes').replaceChildren()
    clearFeedback(recovery)
    // A holder who had to enrol can now use every page: the page loads again in full.
    if (document.body.dataset.enrolled === 'pending') location.reload()
    else $('two-factor-title').focus()
  })

  busyForm(regenerateForm, async () => {
    const error = $('regenerate-error')
    clearMarks(regenerateForm, error)
    const code = regenerateForm.code.value.trim()
    if (!code) return markFields(error, 'Enter the code from your authenticator app.', [regenerateForm.code])
    try {
      const { recovery_codes: codes } = await api('two-factor/recovery-codes', { method: 'POST', body: { code } })
      regenerateForm.reset()
      await showTwoFactor()
      showRecoveryCodes(codes)
    } catch (failure) {
      regenerateForm.code.value = ''
      markFields(error, failure.message, [regenerateForm.code])
    }
  })

  busyForm(disableForm, async (submit) => {
    const error = $('disable-error')
    clearMarks(disableForm, error)
    const password = disableForm.password.value
    const code = disableForm.code.value.trim()
    if (!password || !code) {
      const missing = [!password && disableForm.password, !code && disableForm.code].filter(Boolean)
      return markFields(error, 'Enter your password and a code.', missing)
    }
    try {
      await api('two-factor/disable', { method: 'POST', body: { password, code } })
      disableForm.reset()
      await showTwoFactor()
      $('two-factor-title').focus()
      feedbackAt($('enrol-start'), 'Turned two-factor sign-in off.')
    } catch (failure) {
      if (failure.code === 'wrong_password') {
        disableForm.password.value = ''
        markFields(error, failure.message, [disableForm.password])
      } else if (failure.code === 'two_factor_failed') {
        disableForm.code.value = ''
        markFields(error, failure.message, [disableForm.code])
      } else {
        markFields(error, failure.message, [])
        submit.focus()
      }
    }
  })

  // ---- Email change ----

  const emailForm = $('email-form')

  /**
   * A change the operator could not make because another account has the address: asking answers
   * the same for every address (services/email-changes.ts), so this is where the holder learns it,
   * from the account's last email event, until they ask again or withdraw.
   */
  const declined = document.createElement('p')
  declined.id = 'email-declined'
  declined.className = 'notice warn'
  declined.hidden = true
  $('email-pending').after(declined)

  async function showDeclined() {
    const { events } = await api('audit-events?action=email.*&limit=1')
    const last = events[0]
    declined.hidden = !(last?.action === 'email.change_cancelled' && last.details?.reason === 'address_taken')
    if (declined.hidden) return
    declined.textContent =
      `The operator could not make ${last.details.new_email} your address (${formatDate(last.at)} UTC): another account has it. ` +
      'Your address is unchanged.'
  }

  function showPending(pending) {
    $('email-pending').hidden = !pending
    if (pending) declined.hidden = true
    if (!pending) return
    $('email-pending-address').textContent = pending.new_email
    $('email-pending-date').textContent = formatDate(pending.requested_at)
    $('email-current').textContent = session.account.email
  }

  busyForm(emailForm, async (submit) => {
    const error = $('email-error')
    clearMarks(emailForm, error)
    const email = emailForm.email.value.trim()
    const password = emailForm.password.value
    if (!/^[^\s@]+@[^\s@]+$/.test(email)) return markFields(error, 'Enter an email address, such as name@example.com.', [emailForm.email])
    if (!password) return markFields(error, 'Enter your password.', [emailForm.password])
    try {
      const { pending_email: pending } = await api('email', { method: 'POST', body: { new_email: email, password } })
      emailForm.reset()
      showPending(pending)
      // Said the same whether or not another account has the address: the operator finds out, and a
      // change that cannot be made is told on this page (showDeclined) and under Activity.
      feedbackAt(
        submit,
        `Asked to change your address to ${pending.new_email}; the operator confirms it. If it cannot be made (another account has the address), this page will say so.`,
        { label: 'Asked' },
      )
    } catch (failure) {
      if (failure.code === 'wrong_password') {
        emailForm.password.value = ''
        markFields(error, failure.message, [emailForm.password])
      } else if (failure.code === 'invalid_parameter') {
        markFields(error, failure.message, [emailForm.email])
      } else {
        markFields(error, failure.message, [])
      }
    }
  })

  $('email-cancel').addEventListener('click', async () => {
    try {
      await api('email', { method: 'DELETE' })
      showPending(null)
      feedbackAt(emailForm.querySelector('button[type=submit]'), 'Withdrew the email change.')
      emailForm.email.focus()
    } catch (failure) {
      feedbackAt($('email-cancel'), `Could not withdraw it: ${failure.message}`, { error: true })
    }
  })

  // ---- Sessions ----

  const sessionsBody = $('sessions-body')

  function sessionRow(entry) {
    const row = document.createElement('tr')
    const device = entry.device ?? 'Unknown device'
    const actions = cell('', '', 'actions')
    if (entry.current) {
      const here = document.createElement('span')
      here.className = 'this-device'
      here.textContent = 'This device'
      actions.append(here)
    } else {
      const end = button('Sign out', () => endSession(entry, device), 'secondary')
      end.setAttribute('aria-label', `Sign out ${device}, signed in ${formatDate(entry.created_at)}`)
      actions.append(end)
    }
    row.append(
      cell(device, 'Device', 'name'),
      cell(entry.ip ?? 'not kept', 'Address', 'mono'),
      cell(formatDate(entry.created_at), 'Signed in (UTC)', 'date'),
      cell(formatDate(entry.last_seen_at), 'Last seen (UTC)', 'date'),
      actions,
    )
    return row
  }

  async function refreshSessions() {
    const { sessions } = await api('sessions')
    sessionsBody.replaceChildren(...sessions.map(sessionRow))
  }

  async function endSession(entry, device) {
    const buttons = () => [...sessionsBody.querySelectorAll('td.actions button')]
    const place = buttons().findIndex((element) => element === document.activeElement)
    try {
      await api(`sessions/${entry.session_id}`, { method: 'DELETE' })
    } catch (failure) {
      // Already gone (signed out there, or expired) is what was asked for.
      if (failure.code !== 'not_found') {
        const here = buttons()[place]
        if (here) feedbackAt(here, `Could not sign out ${device}: ${failure.message}`, { error: true })
        return
      }
    }
    await refreshSessions()
    // Focus goes to the Sign out button that takes this one's place, else to the list's heading.
    const remaining = buttons()
    const next = remaining[Math.min(Math.max(place, 0), remaining.length - 1)]
    const target = next ?? $('sessions-title')
    target.focus()
    feedbackAt(target.tagName === 'BUTTON' ? target : $('sessions-title'), `Signed out ${device}.`)
  }

  return {
    async load(current, enrolFirst) {
      session = current
      mustEnrol = enrolFirst
      $('enrol-required').hidden = !enrolFirst
      if (enrolFirst) {
        // Only enrolment is open: the rest of the page would be refused.
        document.body.dataset.enrolled = 'pending'
        for (const element of document.querySelectorAll('#account, #api, .enrolled-only')) element.hidden = true
        await showTwoFactor()
        return
      }
      showPending(current.pending_email)
      await Promise.all([showTwoFactor(), refreshSessions(), current.pending_email ? undefined : showDeclined()])
    },
    refreshSessions,
  }
}
