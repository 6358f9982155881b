// The Webhooks page (issue 33, ../shared/spec/webhooks.md): the account's endpoints, a form that adds
// one and shows its secret once, and per endpoint: enable or disable, rotate the secret, send a
// test, delete, and its deliveries with Retry. Every value from the server goes in with
// textContent, never as HTML; every change carries the CSRF header (common.js's api()).
import { api, button, cell, clearFeedback, confirmWith, copyFieldAt, formatNumber, initPage, reportLoadError, say } from './common.js'

/** The most endpoints an account may have (the API's webhook_limit_exceeded). */
const MAX_WEBHOOKS = 20
const DELIVERIES_PAGE_SIZE = 10
/** After Send test or Retry, the page asks for the delivery's outcome this often, for this long. */
const POLL_MS = 400
const POLL_FOR_MS = 20_000

const byId = (id) => document.getElementById(id)
const status = byId('status')
const list = byId('webhooks-list')
const noWebhooks = byId('no-webhooks')
const summary = byId('endpoints-summary')
const template = byId('webhook-template')
const form = byId('add-form')
const formError = byId('form-error')
const urlInput = byId('webhook-url')
const allEvents = byId('all-events')
const eventBoxes = [...form.querySelectorAll('input[name=event]')]
const descriptionInput = byId('webhook-description')
const newSecret = byId('new-secret')
const newSecretValue = byId('new-secret-value')
const confirmDialog = byId('confirm-webhook')

/** The cards on the page, by webhook_id: `{ item, update(webhook), webhook }`. */
const cards = new Map()

// ---- How an endpoint and a delivery read ----

const STATE_TEXT = { pending: 'Pending', succeeded: 'Succeeded', failed: 'Failed' }
const STATE_BADGE = { pending: 'exhausted', succeeded: 'active', failed: 'failed' }

/** Why an endpoint is off, in words, with what to do. */
function disabledReason(webhook) {
  switch (webhook.disabled_reason) {
    case 'gone':
      return 'Turned off by the server: the endpoint answered 410 Gone. Enable it once it accepts messages again.'
    case 'failing':
      return 'Turned off by the server: no delivery succeeded for 5 days. Enable it once it accepts messages again.'
    case 'owner':
      return 'Turned off by you. It gets no messages, and events that happen meanwhile are not sent to it later.'
    default:
      return 'Turned off.'
  }
}

function eventsText(events) {
  return events.includes('*') ? 'All events' : events.join(', ')
}

/** `YYYY-MM-DD HH:MM:SS` (UTC) to the second, as the API gives it. */
const toSecond = (value) => value.replace('T', ' ').slice(0, 19)
/** `YYYY-MM-DD HH:MM` (UTC). */
const toMinute = (value) => value.replace('T', ' ').slice(0, 16)

/** What the endpoint answered last: its HTTP status, or the error that stood for an answer. */
function lastAnswer(delivery) {
  if (delivery.last_status !== null) {
    return delivery.last_error ? `HTTP ${delivery.last_status} (${delivery.last_error})` : `HTTP ${delivery.last_status}`
  }
  if (delivery.last_error) return `No answer: ${delivery.last_error}`
  return delivery.attempts === 0 ? 'Not sent yet' : 'No answer'
}

/** How the page names an endpoint in buttons, dialogs and messages: its URL. */
const endpointName = (webhook) => webhook.url

/** Gives every id in `root` the prefix, and every reference to one (for, aria-*) too. */
function prefixIds(root, prefix) {
  for (const element of [root, ...root.querySelectorAll('[id]')]) if (element.id) element.id = prefix + element.id
  for (const attribute of ['for', 'aria-labelledby', 'aria-describedby', 'aria-controls']) {
    for (const element of root.querySelectorAll(`[${attribute}]`)) {
      const ids = element.getAttribute(attribute).split(' ')
      element.setAttribute(attribute, ids.map((id) => prefix + id).join(' '))
    }
  }
}

/** Asks before a rotation or a delete; true when confirmed. */
async function confirmed({ title, effect, action, danger }, webhook) {
  byId('confirm-webhook-title').textContent = title
  byId('confirm-webhook-effect').textContent = effect
  const confirm = byId('confirm-webhook-action')
  confirm.textContent = action
  confirm.className = danger ? 'danger' : ''
  return (await confirmWith(confirmDialog, byId('confirm-webhook-name'), endpointName(webhook))) === 'confirm'
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

// ---- One endpoint's card ----

function webhookCard(initial) {
  const item = template.content.firstElementChild.cloneNode(true)
  prefixIds(item, `webhook-${initial.webhook_id}-`)
  item.dataset.webhookId = String(initial.webhook_id)
  const find = (selector) => item.querySelector(selector)
  const title = find('.webhook-url')
  const badge = find('.webhook-state')
  const description = find('.webhook-description')
  const reason = find('.webhook-reason')
  const itemStatus = find('.webhook-status')
  const itemError = find('.webhook-error')
  const toggleDeliveries = find('.toggle-deliveries')
  const sendTest = find('.send-test')
  const toggleEnabled = find('.toggle-enabled')
  const rotate = find('.rotate')
  const remove = find('.delete')
  const secretBox = find('.secret-box')
  const secretValue = secretBox.querySelector('textarea')
  const deliveries = find('.deliveries')
  const deliveriesTitle = deliveries.querySelector('h4')
  const loading = deliveries.querySelector('.deliveries-loading')
  const table = deliveries.querySelector('table')
  const body = table.querySelector('tbody')
  const none = deliveries.querySelector('.no-deliveries')
  const pager = deliveries.querySelector('.deliveries-pager')
  const newer = pager.querySelector('.newer')
  const older = pager.querySelector('.older')
  let webhook = initial
  /** Where each page of deliveries shown so far began (null: the newest), and where the next one begins. */
  let pageStarts = [null]
  let nextBeforeId = null
  /** The deliveries on the page now. */
  let shown = []
  /** Bumped by each action that waits for an outcome, so that an older wait stops. */
  let waiting = 0

  function clearMessages() {
    say(itemStatus, '')
    say(itemError, '')
    say(status, '')
  }

  function update(fresh) {
    webhook = fresh
    const name = endpointName(fresh)
    title.textContent = fresh.url
    badge.textContent = fresh.enabled ? 'Active' : 'Disabled'
    badge.className = `badge webhook-state ${fresh.enabled ? 'active' : 'disabled'}`
    item.classList.toggle('disabled', !fresh.enabled)
    description.textContent = fresh.description ?? ''
    description.hidden = !fresh.description
    reason.textContent = fresh.enabled ? '' : disabledReason(fresh)
    reason.hidden = fresh.enabled
    find('.webhook-events').textContent = eventsText(fresh.events)
    find('.webhook-created').textContent = `${toMinute(fresh.created_at)} UTC`
    // The visible text starts each button's name (WCAG 2.5.3); the rest names the endpoint.
    toggleDeliveries.setAttribute('aria-label', `Deliveries of ${name}`)
    sendTest.setAttribute('aria-label', `Send test to ${name}`)
    // A disabled endpoint is sent nothing, a test neither: enabling it comes first (focus goes there).
    if (!fresh.enabled && document.activeElement === sendTest) toggleEnabled.focus()
    sendTest.hidden = !fresh.enabled
    toggleEnabled.textContent = fresh.enabled ? 'Disable' : 'Enable'
    toggleEnabled.setAttribute('aria-label', `${fresh.enabled ? 'Disable' : 'Enable'} ${name}`)
    rotate.setAttribute('aria-label', `Rotate secret of ${name}`)
    remove.setAttribute('aria-label', `Delete ${name}`)
    secretValue.setAttribute('aria-label', `New signing secret of ${name}`)
    // Regions and groups named by the endpoint: several cards may show theirs at once.
    deliveries.setAttribute('aria-label', `Deliveries of ${name}`)
    secretBox.setAttribute('aria-label', `New signing secret of ${name}`)
    table.querySelector('caption').textContent = `Deliveries to ${name}, newest first`
    pager.setAttribute('aria-label', `Pages of deliveries to ${name}`)
    card.webhook = fresh
  }

  /**
   * Marks a button busy while its action runs, and refuses a second click meanwhile. aria-disabled,
   * not disabled: a disabled button loses the keyboard's focus, which should stay where it was.
   */
  function start(element) {
    if (element.getAttribute('aria-disabled') === 'true') return false
    element.setAttribute('aria-disabled', 'true')
    return true
  }
  function finish(element) {
    element.removeAttribute('aria-disabled')
  }

  // ---- Deliveries ----

  function deliveryRow(delivery) {
    const row = document.createElement('tr')
    row.dataset.deliveryId = String(delivery.delivery_id)
    const created = cell(toSecond(delivery.created_at), 'Created (UTC)', 'date')
    const event = cell('', 'Event', 'event')
    const box = document.createElement('span')
    const type = document.createElement('code')
    type.textContent = delivery.event_type
    const message = document.createElement('span')
    message.className = 'message-id mono'
    message.textContent = delivery.message_id
    box.append(type, ' ', message)
    event.append(box)
    const state = cell('', 'State', 'state')
    const badgeElement = document.createElement('span')
    badgeElement.className = `badge ${STATE_BADGE[delivery.state] ?? ''}`
    badgeElement.textContent = STATE_TEXT[delivery.state] ?? delivery.state
    state.append(badgeElement)
    let next = '—'
    if (delivery.state === 'pending') {
      next = webhook.enabled ? (delivery.next_attempt_at ? toSecond(delivery.next_attempt_at) : 'soon') : 'once the endpoint is enabled'
    }
    row.append(
      created,
      event,
      state,
      cell(formatNumber(delivery.attempts), 'Attempts', 'num'),
      cell(lastAnswer(delivery), 'Last answer', 'answer'),
      cell(next, 'Next attempt (UTC)', 'date'),
    )
    const actions = cell('', '', 'actions')
    if (delivery.state !== 'succeeded') {
      const retry = button('Retry', () => retryDelivery(delivery), 'secondary small retry')
      retry.setAttribute('aria-label', `Retry delivery of ${delivery.event_type} ${delivery.message_id}`)
      actions.append(retry)
    }
    row.append(actions)
    return row
  }

  /** Loads the page of deliveries the card is at, and shows it; focus stays where it was, or goes to the list's heading. */
  async function showDeliveries({ focus = false } = {}) {
    const beforeId = pageStarts[pageStarts.length - 1]
    const params = new URLSearchParams({ limit: String(DELIVERIES_PAGE_SIZE) })
    if (beforeId !== null) params.set('before_id', String(beforeId))
    table.setAttribute('aria-busy', 'true')
    try {
      const page = await api(`webhooks/${webhook.webhook_id}/deliveries?${params}`)
      // A Retry button that had focus: its row's new button takes it, else the list's heading.
      const focused = body.contains(document.activeElement) ? document.activeElement.closest('tr')?.dataset.deliveryId : undefined
      shown = page.deliveries
      nextBeforeId = page.pagination.next_before_id
      body.replaceChildren(...shown.map(deliveryRow))
      loading.hidden = true
      table.hidden = shown.length === 0
      none.hidden = shown.length > 0
      const first = pageStarts.length === 1
      pager.hidden = first && nextBeforeId === null
      newer.disabled = first
      older.disabled = nextBeforeId === null
      pager.querySelector('.page-number').textContent = `Page ${pageStarts.length}`
      if (focused !== undefined) {
        const again = body.querySelector(`tr[data-delivery-id="${CSS.escape(focused)}"] button`)
        ;(again ?? deliveriesTitle).focus()
      } else if (focus) {
        deliveriesTitle.focus()
      }
    } finally {
      table.removeAttribute('aria-busy')
    }
  }

  async function openDeliveries() {
    if (!deliveries.hidden) return
    deliveries.hidden = false
    toggleDeliveries.setAttribute('aria-expanded', 'true')
    pageStarts = [null]
    await showDeliveries()
  }

  toggleDeliveries.addEventListener('click', async () => {
    if (!deliveries.hidden) {
      deliveries.hidden = true
      toggleDeliveries.setAttribute('aria-expanded', 'false')
      return
    }
    say(itemError, '')
    try {
      await openDeliveries()
    } catch (error) {
      loading.hidden = true
      say(itemError, `Could not load the deliveries: ${error.message}`)
    }
  })

  find('.refresh').addEventListener('click', async () => {
    clearMessages()
    try {
      await showDeliveries()
      say(itemStatus, 'Deliveries refreshed.')
    } catch (error) {
      say(itemError, `Could not load the deliveries: ${error.message}`)
    }
  })

  older.addEventListener('click', async () => {
    if (nextBeforeId === null) return
    pageStarts.push(nextBeforeId)
    try {
      await showDeliveries({ focus: true })
    } catch (error) {
      pageStarts.pop()
      say(itemError, `Could not load older deliveries: ${error.message}`)
    }
  })

  newer.addEventListener('click', async () => {
    if (pageStarts.length === 1) return
    const left = pageStarts.pop()
    try {
      await showDeliveries({ focus: true })
    } catch (error) {
      pageStarts.push(left)
      say(itemError, `Could not load newer deliveries: ${error.message}`)
    }
  })

  /** The endpoint as the server has it now: an answer may have turned it off (410, webhooks.md). */
  async function refreshEndpoint() {
    try {
      const { webhook: fresh } = await api(`webhooks/${webhook.webhook_id}`)
      update(fresh)
    } catch {
      // The card keeps what it showed; the next load of the page tells.
    }
  }

  /**
   * Reloads the deliveries until `done(delivery)` holds for the one `matches` picks (or the time is
   * up); answers that delivery, or null. A newer wait of this card ends this one.
   */
  async function waitFor(matches, done) {
    const mine = ++waiting
    const until = Date.now() + POLL_FOR_MS
    while (Date.now() < until && mine === waiting) {
      await showDeliveries()
      const delivery = shown.find(matches)
      if (delivery && done(delivery)) return delivery
      await sleep(POLL_MS)
    }
    return null
  }

  /** A sentence on how a delivery went, for the card's status. */
  function outcome(delivery, what) {
    if (delivery.state === 'succeeded') return `${what} was delivered: the endpoint answered ${delivery.last_status}.`
    if (delivery.last_status === 410) {
      return `${what} was refused with HTTP 410 Gone, so the server turned the endpoint off. Enable it once it accepts messages again.`
    }
    const answer = lastAnswer(delivery)
    if (delivery.state === 'failed') return `${what} failed for good: ${answer}. Retry sends it again.`
    const next = delivery.next_attempt_at ? ` The next attempt is at ${toSecond(delivery.next_attempt_at)} UTC;` : ''
    return `${what} was not accepted: ${answer}.${next} Retry sends it now.`
  }

  sendTest.addEventListener('click', async () => {
    if (!start(sendTest)) return
    clearMessages()
    try {
      const { message_id: messageId } = await api(`webhooks/${webhook.webhook_id}/test`, { method: 'POST' })
      say(itemStatus, `Sent a test message (${messageId}); waiting for the endpoint's answer…`)
      pageStarts = [null]
      await openDeliveries()
      const delivery = await waitFor(
        (one) => one.message_id === messageId,
        (one) => one.attempts > 0,
      )
      if (delivery) await refreshEndpoint()
      say(
        itemStatus,
        delivery
          ? outcome(delivery, 'The test message')
          : `Sent a test message (${messageId}); it has no answer yet. Refresh shows how it went.`,
      )
    } catch (error) {
      say(itemError, `Could not send a test: ${error.message}`)
    } finally {
      finish(sendTest)
    }
  })

  async function retryDelivery(delivery) {
    clearMessages()
    const what = `The ${delivery.event_type} message ${delivery.message_id}`
    try {
      await api(`webhooks/${webhook.webhook_id}/deliveries/${delivery.delivery_id}/retry`, { method: 'POST' })
      say(itemStatus, `Retrying ${delivery.event_type} message ${delivery.message_id}…`)
      const after = await waitFor(
        (one) => one.delivery_id === delivery.delivery_id,
        (one) => one.attempts > delivery.attempts,
      )
      if (after) await refreshEndpoint()
      if (after) say(itemStatus, outcome(after, what))
      else if (!webhook.enabled) say(itemStatus, `${what} waits until the endpoint is enabled.`)
      else say(itemStatus, `${what} is due now; it has no answer yet. Refresh shows how it went.`)
    } catch (error) {
      say(itemError, `Could not retry: ${error.message}`)
    }
  }

  // ---- Enable, disable, rotate, delete ----

  toggleEnabled.addEventListener('click', async () => {
    if (!start(toggleEnabled)) return
    clearMessages()
    const enabled = !webhook.enabled
    try {
      const { webhook: changed } = await api(`webhooks/${webhook.webhook_id}`, { method: 'PATCH', body: { enabled } })
      update(changed)
      say(
        itemStatus,
        enabled
          ? 'Enabled: messages of new events go to it again, and deliveries that were waiting are sent now.'
          : 'Disabled: it gets no messages until you enable it; events meanwhile are not sent to it later.',
      )
      if (!deliveries.hidden) await showDeliveries()
    } catch (error) {
      say(itemError, `Could not ${enabled ? 'enable' : 'disable'} it: ${error.message}`)
    } finally {
      finish(toggleEnabled)
    }
  })

  rotate.addEventListener('click', async () => {
    const ok = await confirmed(
      {
        title: 'Rotate the signing secret?',
        effect:
          'A new secret signs every message from now on. The old one keeps signing too for 24 hours, so that your receiver can switch; then it stops.',
        action: 'Rotate secret',
      },
      webhook,
    )
    if (!ok) return
    clearMessages()
    try {
      const { webhook: rotated } = await api(`webhooks/${webhook.webhook_id}/rotate-secret`, { method: 'POST' })
      update(rotated)
      secretValue.value = rotated.secret
      secretBox.hidden = false
      secretBox.focus()
      say(itemStatus, 'Rotated the secret. Copy the new one now: it is not shown again. The old one keeps signing for 24 hours.')
    } catch (error) {
      say(itemError, `Could not rotate the secret: ${error.message}`)
    }
  })

  const copySecret = secretBox.querySelector('.copy-secret')
  copySecret.addEventListener('click', () => copyFieldAt(copySecret, secretValue, 'the new secret'))

  remove.addEventListener('click', async () => {
    const ok = await confirmed(
      {
        title: 'Delete this endpoint?',
        effect: 'It gets no more messages, and its pending deliveries are dropped. This cannot be undone.',
        action: 'Delete',
        danger: true,
      },
      webhook,
    )
    if (!ok) return
    clearMessages()
    // Where focus goes once the card is gone: the Delete button that takes this one's place, or the list's heading.
    const deleteButtons = () => [...list.querySelectorAll('button.delete')]
    const place = deleteButtons().indexOf(remove)
    try {
      await api(`webhooks/${webhook.webhook_id}`, { method: 'DELETE' })
      item.remove()
      cards.delete(webhook.webhook_id)
      if (newSecret.dataset.webhookId === String(webhook.webhook_id)) newSecret.hidden = true
      showCount()
      const remaining = deleteButtons()
      ;(remaining[Math.min(Math.max(place, 0), remaining.length - 1)] ?? byId('endpoints-title')).focus()
      say(status, `Deleted the endpoint ${endpointName(webhook)}; its pending deliveries were dropped.`)
    } catch (error) {
      say(itemError, `Could not delete it: ${error.message}`)
    }
  })

  const card = { item, update, webhook: initial }
  update(initial)
  return card
}

// ---- The list ----

function showCount() {
  const count = cards.size
  noWebhooks.hidden = count > 0
  list.hidden = count === 0
  summary.textContent =
    count === 0
      ? ''
      : `${count} of ${MAX_WEBHOOKS} endpoints an account may have${count === MAX_WEBHOOKS ? ': delete one to add another' : ''}.`
}

/** Puts an endpoint on the page (newest first), or brings its card up to date. */
function place(webhook) {
  const known = cards.get(webhook.webhook_id)
  if (known) {
    known.update(webhook)
    return known
  }
  const card = webhookCard(webhook)
  cards.set(webhook.webhook_id, card)
  // Newest first: before the first card that is older.
  const older = [...list.children].find((element) => Number(element.dataset.webhookId) < webhook.webhook_id)
  list.insertBefore(card.item, older ?? null)
  return card
}

async function loadWebhooks() {
  const { webhooks } = await api('webhooks')
  for (const webhook of webhooks) place(webhook)
  const ids = new Set(webhooks.map((webhook) => webhook.webhook_id))
  for (const [id, card] of cards) {
    if (!ids.has(id)) {
      card.item.remove()
      cards.delete(id)
    }
  }
  showCount()
}

// ---- The form: "All events" and the types follow each other. ----

allEvents.addEventListener('change', () => {
  for (const box of eventBoxes) box.checked = allEvents.checked
  clearFieldError('events')
})
for (const box of eventBoxes) {
  box.addEventListener('change', () => {
    // Every type ticked by hand is the same as All events ("*"), which also takes types added later.
    allEvents.checked = eventBoxes.every((other) => other.checked)
    if (box.checked) clearFieldError('events')
  })
}

/** Each field the page marks: the elements to mark, the message's element, where focus goes. */
const FIELDS = {
  url: { marked: () => [urlInput], error: 'webhook-url-error', focus: () => urlInput },
  events: {
    marked: () => [byId('webhook-events'), allEvents, ...eventBoxes],
    error: 'webhook-events-error',
    focus: () => allEvents,
  },
  description: { marked: () => [descriptionInput], error: 'webhook-description-error', focus: () => descriptionInput },
}

function describedBy(element, id, on) {
  const ids = (element.getAttribute('aria-describedby') ?? '').split(' ').filter((value) => value && value !== id)
  if (on) ids.push(id)
  if (ids.length > 0) element.setAttribute('aria-describedby', ids.join(' '))
  else element.removeAttribute('aria-describedby')
}

function setFieldError(name, message) {
  const field = FIELDS[name]
  say(byId(field.error), message)
  for (const element of field.marked()) {
    // A fieldset is a group, where aria-invalid has no meaning: it gets the message only.
    if (element.tagName !== 'FIELDSET') element.setAttribute('aria-invalid', 'true')
    describedBy(element, field.error, true)
  }
}

function clearFieldError(name) {
  const field = FIELDS[name]
  say(byId(field.error), '')
  for (const element of field.marked()) {
    element.removeAttribute('aria-invalid')
    describedBy(element, field.error, false)
  }
}

/** The URL's mistakes that need no server to see; null when it looks right. */
function urlProblem(text) {
  if (text === '') return 'Give the URL that receives the messages, such as https://example.com/webhooks.'
  let url
  try {
    url = new URL(text)
  } catch {
    return 'This is not a whole URL: give one such as https://example.com/webhooks.'
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    return 'The URL must start with https:// (or http:// where the operator allows it).'
  if (url.username !== '' || url.password !== '') return 'Take the user name and password out of the URL: the signature proves who sends.'
  return null
}

/** The request's body, or null after marking every field at fault (focus on the first). */
function readForm() {
  for (const name of Object.keys(FIELDS)) clearFieldError(name)
  const faults = []
  const url = urlInput.value.trim()
  const problem = urlProblem(url)
  if (problem) faults.push(['url', problem])
  const events = allEvents.checked ? ['*'] : eventBoxes.filter((box) => box.checked).map((box) => box.value)
  if (events.length === 0) faults.push(['events', 'Tick at least one event type, or All events.'])
  if (faults.length > 0) {
    for (const [field, message] of faults) setFieldError(field, message)
    FIELDS[faults[0][0]].focus().focus()
    return null
  }
  const body = { url, events }
  const description = descriptionInput.value.trim()
  if (description) body.description = description
  return body
}

/** The field a refusal of the server is about, from its code and message ("url must …", "events: …"). */
function fieldOf(error) {
  if (error.code === 'webhook_url_not_allowed') return 'url'
  if (error.code !== 'invalid_parameter') return null
  if (/\bevents\b/.test(error.message)) return 'events'
  if (/\bdescription\b/.test(error.message)) return 'description'
  if (/\burl\b/i.test(error.message)) return 'url'
  return null
}

form.addEventListener('submit', async (event) => {
  event.preventDefault()
  say(formError, '')
  say(status, '')
  const body = readForm()
  if (!body) return
  const submit = form.querySelector('button[type=submit]')
  submit.disabled = true
  try {
    const { webhook } = await api('webhooks', { method: 'POST', body })
    place(webhook)
    showCount()
    newSecretValue.value = webhook.secret
    byId('new-secret-url').textContent = webhook.url
    newSecret.dataset.webhookId = String(webhook.webhook_id)
    clearFeedback(newSecret)
    newSecret.hidden = false
    newSecret.focus()
    form.reset()
    say(status, `Added the endpoint ${webhook.url}. Copy its secret now: it is shown only once.`)
  } catch (error) {
    const field = fieldOf(error)
    if (field) {
      setFieldError(field, error.message)
      FIELDS[field].focus().focus()
    } else {
      say(formError, `Could not add the endpoint: ${error.message}`)
    }
  } finally {
    submit.disabled = false
  }
})

byId('copy-new-secret').addEventListener('click', () => copyFieldAt(byId('copy-new-secret'), newSecretValue, 'the secret'))

async function load() {
  await initPage()
  await loadWebhooks()
  document.body.setAttribute('data-ready', 'true')
}

load().catch(reportLoadError)
