// The guest page of an upload request (/r/<token>): a person without an account sends files to the
// link's holder. No session: the token (the page address's last segment) is the only credential,
// plus, for a protected link, a grant that its password gives. Files go up with tus-js-client
// (assets/vendor/tus.min.js, window.tus): in chunks, retried after a dropped connection, and
// resumable after a reload by choosing the same file again.
// What the holder wrote (label, message) goes into the page with textContent only, never as HTML.

/** Small enough that a cut costs little to send again, and that a reload mid-file keeps most of it. */
const CHUNK_SIZE = 5 * 1024 * 1024
/** Waits before each new attempt after a dropped connection (reset whenever bytes get through again). */
const RETRY_DELAYS = [0, 1000, 2000, 5000, 10000, 20000, 30000, 60000]
/** A grant is dropped this long before it expires, so that no upload starts with one about to die. */
const GRANT_MARGIN_MS = 60_000
/** Waits the page takes by itself after a 429 before it gives up on a file. */
const RATE_LIMIT_RETRIES = 3

const token = decodeURIComponent(location.pathname.split('/').filter(Boolean).pop() ?? '')
const data = JSON.parse(document.getElementById('upload-request-data').textContent)
const title = document.getElementById('title')
const passwordForm = document.getElementById('password-form')
const passwordInput = document.getElementById('password')
const passwordError = document.getElementById('password-error')
const passwordSubmit = document.getElementById('password-submit')
const requestBox = document.getElementById('request')
const message = document.getElementById('message')
const limits = document.getElementById('limits')
const dropzone = document.getElementById('dropzone')
const input = document.getElementById('file-input')
const closedNotice = document.getElementById('closed')
const uploadsTitle = document.getElementById('uploads-title')
const uploads = document.getElementById('uploads')
const status = document.getElementById('status')

/** A short, non-reversible tag of the token: storage keys name the link without holding it. */
function tag(text) {
  let h1 = 0xdeadbeef
  let h2 = 0x41c6ce57
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    h1 = Math.imul(h1 ^ code, 2654435761)
    h2 = Math.imul(h2 ^ code, 1597334677)
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909)
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909)
  return (h2 >>> 0).toString(36) + (h1 >>> 0).toString(36)
}
const linkTag = tag(token)
const GRANT_KEY = `fileshare-upload-grant:${linkTag}`

/** The API's times: UTC "YYYY-MM-DD HH:MM:SS". */
const parseUtc = (text) => Date.parse(`${text.replace(' ', 'T')}Z`)
const formatUtc = (text) => `${text.slice(0, 16)} UTC`

function formatBytes(bytes) {
  if (bytes < 1024) return `${bytes} B`
  const units = ['KiB', 'MiB', 'GiB', 'TiB']
  let value = bytes
  let unit = -1
  do {
    value /= 1024
    unit++
  } while (value >= 1024 && unit < units.length - 1)
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`
}
const formatNumber = (value) => new Intl.NumberFormat('en').format(value)

/** The request as the guest sees it (null until a protected link's password is given). */
let view = data.request
/** The grant a password gave: { grant, expires_at, request }, or null. */
let grant = null
/** Why nothing more can be sent ('' while files can be). */
let closedReason = ''

function loadGrant() {
  try {
    const stored = JSON.parse(sessionStorage.getItem(GRANT_KEY) ?? 'null')
    if (stored && typeof stored.grant === 'string' && parseUtc(stored.expires_at) - GRANT_MARGIN_MS > Date.now()) return stored
  } catch {
    // An unreadable entry is as good as none.
  }
  sessionStorage.removeItem(GRANT_KEY)
  return null
}

function saveGrant() {
  try {
    if (grant) sessionStorage.setItem(GRANT_KEY, JSON.stringify({ ...grant, request: view }))
    else sessionStorage.removeItem(GRANT_KEY)
  } catch {
    // Storage full or off: the password is asked again after a reload.
  }
}

function limitRow(term, value) {
  const dt = document.createElement('dt')
  dt.textContent = term
  const dd = document.createElement('dd')
  dd.textContent = value
  return [dt, dd]
}

/** Shows the request: its label, message and what is left. Text only. */
function render() {
  if (!view) return
  title.textContent = view.label
  document.title = `${view.label} · Fileshare`
  message.textContent = view.message ?? ''
  message.hidden = !view.message
  limits.replaceChildren(
    ...limitRow('Files left', view.files_left === null ? 'No limit' : formatNumber(view.files_left)),
    ...limitRow('Largest file', formatBytes(view.max_file_size)),
    ...limitRow('Total size left', view.bytes_left === null ? 'No limit' : formatBytes(view.bytes_left)),
    ...limitRow('Open until', formatUtc(view.expires_at)),
  )
  if (!closedReason) {
    if (view.files_left === 0) close('This link has received all the files it takes. Nothing more can be sent.')
    else if (view.bytes_left === 0 || view.max_file_size <= 0) close('This link has no room left for more files.')
  }
}

/** Turns sending off for good on this page, and says why. */
function close(reason) {
  closedReason = reason
  closedNotice.textContent = reason
  closedNotice.hidden = false
  input.disabled = true
  dropzone.classList.add('disabled')
}

function showRequest() {
  passwordForm.hidden = true
  requestBox.hidden = false
  render()
}

function askPassword(reason) {
  grant = null
  saveGrant()
  requestBox.hidden = true
  passwordForm.hidden = false
  passwordError.textContent = reason
  passwordInput.value = ''
  passwordInput.focus()
}

/** Posts to /r/<token>/grant; answers the JSON body and the status. */
async function postGrant(password) {
  const response = await fetch(`${encodeURIComponent(token)}/grant`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify(password === undefined ? {} : { password }),
    credentials: 'omit',
  })
  let body
  try {
    body = await response.json()
  } catch {
    body = undefined
  }
  return { status: response.status, body, retryAfter: Number(response.headers.get('retry-after')) }
}

passwordForm.addEventListener('submit', async (event) => {
  event.preventDefault()
  const password = passwordInput.value
  if (!password) {
    passwordError.textContent = 'Enter the password.'
    passwordInput.focus()
    return
  }
  passwordSubmit.disabled = true
  passwordError.textContent = ''
  try {
    const answer = await postGrant(password)
    if (answer.status === 200 && answer.body?.grant) {
      grant = { grant: answer.body.grant, expires_at: answer.body.expires_at }
      view = answer.body.request
      saveGrant()
      passwordInput.value = ''
      showRequest()
      status.textContent = 'Password accepted. You can send files now.'
      title.focus()
    } else if (answer.status === 401) {
      passwordError.textContent = 'That password is not right. Check it and try again.'
      passwordInput.select()
    } else if (answer.status === 429) {
      const wait = answer.retryAfter > 0 ? ` Try again in ${waitText(answer.retryAfter)}.` : ' Try again later.'
      passwordError.textContent = `Too many wrong passwords from this connection.${wait}`
    } else if (answer.status === 404) {
      passwordForm.hidden = true
      status.textContent = 'This link no longer accepts files.'
    } else {
      passwordError.textContent = answer.body?.error?.message ?? `Something went wrong (the server answered ${answer.status}). Try again.`
    }
  } catch {
    passwordError.textContent = 'The connection failed. Check it and try again.'
  } finally {
    passwordSubmit.disabled = false
  }
})

function waitText(seconds) {
  return seconds < 90 ? `${Math.ceil(seconds)} seconds` : `${Math.ceil(seconds / 60)} minutes`
}

/**
 * What is left: from the server when it can tell without the password, else counted here.
 * `sentBytes`: the size of a file that just arrived, or null when none did.
 */
async function refreshView(sentBytes) {
  if (!view) return
  if (sentBytes !== null) {
    const counted = {
      ...view,
      files_left: view.files_left === null ? null : Math.max(0, view.files_left - 1),
      bytes_left: view.bytes_left === null ? null : Math.max(0, view.bytes_left - sentBytes),
    }
    if (counted.bytes_left !== null) counted.max_file_size = Math.min(counted.max_file_size, counted.bytes_left)
    view = counted
  }
  let gone = false
  if (!data.password_protected) {
    try {
      const answer = await postGrant(undefined)
      if (answer.status === 200 && answer.body?.request) view = answer.body.request
      gone = answer.status === 404
    } catch {
      // The count made here stands.
    }
  }
  saveGrant()
  render()
  // Full (render said so), expired or closed: the link takes nothing more.
  if (gone && !closedReason) close('This link no longer accepts files.')
}

/** Why a tus request failed: { status, code, text, retryAfter }. */
function failureOf(error) {
  const response = error.originalResponse
  const code = response?.getStatus() ?? 0
  let body
  try {
    body = JSON.parse(response?.getBody() ?? '')
  } catch {
    body = undefined
  }
  return {
    status: code,
    code: body?.error?.code ?? '',
    text: body?.error?.message ?? '',
    retryAfter: Number(response?.getHeader('Retry-After') ?? 0),
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** The storage key of a file's unfinished upload: this link's, so that another link's page never picks it up. */
const fingerprint = (file) => Promise.resolve(['fileshare-guest', linkTag, file.name, file.type, file.size, file.lastModified].join('/'))

/** Sends one file; resolves when it is stored, rejects with a failureOf() record. */
function send(file, progress, state) {
  return new Promise((resolve, reject) => {
    let retrying = false
    let rateLimited = 0
    const headers = { authorization: `UploadRequest ${token}`, accept: 'application/json' }
    if (grant) headers['fileshare-upload-grant'] = grant.grant
    const upload = new window.tus.Upload(file, {
      endpoint: new URL(data.uploads_url, location.href).href,
      chunkSize: CHUNK_SIZE,
      retryDelays: RETRY_DELAYS,
      uploadLengthDeferred: false,
      metadata: file.type ? { filename: file.name, filetype: file.type } : { filename: file.name },
      headers,
      fingerprint,
      storeFingerprintForResuming: true,
      removeFingerprintOnSuccess: true,
      // tus-js-client's own rule (a lost connection, a 5xx, 409 or 423, never another 4xx), said on the page.
      onShouldRetry(error) {
        const code = error.originalResponse?.getStatus() ?? 0
        const retry = (code < 400 || code >= 500 || code === 409 || code === 423) && navigator.onLine !== false
        if (retry) {
          retrying = true
          state.textContent = 'Connection lost; trying again…'
        }
        return retry
      },
      onProgress(sent, total) {
        progress.max = total || 1
        progress.value = sent
        if (retrying) {
          retrying = false
          state.textContent = `Sending ${formatBytes(file.size)}…`
        }
      },
      onSuccess: () => resolve(),
      onError: async (error) => {
        const failure = failureOf(error)
        // Too many requests from this address: wait as asked, then go on from where the upload stands.
        if (failure.status === 429 && rateLimited < RATE_LIMIT_RETRIES && failure.retryAfter > 0 && failure.retryAfter <= 120) {
          rateLimited++
          state.textContent = `Too many requests from this connection; continuing in ${waitText(failure.retryAfter)}…`
          await sleep(failure.retryAfter * 1000)
          state.textContent = `Sending ${formatBytes(file.size)}…`
          upload.start()
          return
        }
        reject(failure)
      },
    })
    upload
      .findPreviousUploads()
      .then((previous) => {
        // The newest upload of this file that this browser started through this link and did not finish.
        const [latest] = previous.sort((a, b) => Date.parse(b.creationTime) - Date.parse(a.creationTime))
        if (latest) {
          upload.resumeFromPreviousUpload(latest)
          state.textContent = `Continuing where it stopped (${formatBytes(file.size)})…`
        }
        upload.start()
      })
      .catch((error) => reject({ status: 0, code: '', text: String(error?.message ?? error), retryAfter: 0 }))
  })
}

/** What a failure means to the guest; may turn sending off or ask for the password again. */
function explain(failure) {
  if (failure.status === 0) return 'The connection failed. Choose the same file again to continue where it stopped.'
  if (failure.status === 401 && failure.code === 'invalid_password') {
    askPassword('Your access has expired. Enter the password again, then choose the same file to continue where it stopped.')
    return 'Stopped: the password is needed again. Choose the same file after entering it to continue where it stopped.'
  }
  if (failure.status === 401) {
    close('This link no longer accepts files.')
    return 'Not sent: this link no longer accepts files.'
  }
  if (failure.status === 403 && failure.code === 'upload_request_full') return 'Not sent: this link has no room left for this file.'
  if (failure.status === 413) return `Not sent: too large. This link takes files up to ${formatBytes(view?.max_file_size ?? 0)}.`
  if (failure.status === 429) {
    const wait = failure.retryAfter > 0 ? ` in ${waitText(failure.retryAfter)}` : ' later'
    return `Not sent: too many requests from this connection. Choose the file again${wait} to continue.`
  }
  return `Not sent: ${failure.text || `the server answered ${failure.status}.`}`
}

/** Files being sent from this page, so that choosing one again does not start a second, competing upload. */
const sending = new Set()
const fileKey = (file) => [file.name, file.type, file.size, file.lastModified].join('/')
/** Files picked but not yet started: counted against what the link has left. */
let queued = 0

function uploadRow(file) {
  const item = document.createElement('li')
  const name = document.createElement('span')
  name.className = 'upload-name'
  name.textContent = file.name
  const progress = document.createElement('progress')
  progress.max = 1
  progress.value = 0
  progress.setAttribute('aria-label', `Sending ${file.name}`)
  const state = document.createElement('span')
  state.className = 'upload-state'
  state.setAttribute('role', 'status')
  item.append(name, progress, state)
  uploadsTitle.hidden = false
  uploads.append(item)
  return { item, progress, state }
}

function finish(row, file, ok, text) {
  row.state.textContent = text
  row.item.classList.add(ok ? 'done' : 'failed')
  row.progress.setAttribute('aria-label', ok ? `Sent ${file.name}` : `Sending ${file.name} failed`)
  if (ok) row.progress.value = row.progress.max
}

/** Why this file cannot go (checked before anything is sent), or ''. */
function refusal(file) {
  if (closedReason) return `Not sent: ${closedReason.charAt(0).toLowerCase()}${closedReason.slice(1)}`
  if (file.size > view.max_file_size)
    return `Not sent: too large (${formatBytes(file.size)}). This link takes files up to ${formatBytes(view.max_file_size)}.`
  if (view.files_left !== null && view.files_left <= 0) return 'Not sent: this link takes no more files.'
  if (view.bytes_left !== null && file.size > view.bytes_left)
    return `Not sent: only ${formatBytes(view.bytes_left)} of room is left on this link.`
  return ''
}

const grantExpired = () => !grant || parseUtc(grant.expires_at) - GRANT_MARGIN_MS <= Date.now()

async function sendAll(files) {
  if (!view || files.length === 0) return
  if (data.password_protected && grantExpired()) {
    askPassword('Your access has expired. Enter the password again, then choose your files.')
    return
  }
  if (!window.tus?.isSupported) {
    status.textContent = 'This browser cannot send files from this page. Try a current browser.'
    return
  }
  const rows = files.map((file) => ({ file, row: uploadRow(file) }))
  queued += rows.length
  status.textContent = `${rows.length} file${rows.length === 1 ? '' : 's'} chosen.`
  let sent = 0
  for (const { file, row } of rows) {
    queued--
    // Checked when its turn comes: the files before it took their share of the room.
    const refused = refusal(file)
    if (refused) {
      finish(row, file, false, refused)
      continue
    }
    const key = fileKey(file)
    if (sending.has(key)) {
      finish(row, file, false, 'Already being sent from this page.')
      continue
    }
    sending.add(key)
    row.state.textContent = `Sending ${formatBytes(file.size)}…`
    try {
      await send(file, row.progress, row.state)
      finish(row, file, true, 'Sent.')
      sent++
      await refreshView(file.size)
    } catch (failure) {
      finish(row, file, false, explain(failure))
      if (failure.status === 403 && failure.code === 'upload_request_full') await refreshView(null)
    } finally {
      sending.delete(key)
    }
  }
  if (queued === 0) status.textContent = `${sent} of ${rows.length} file${rows.length === 1 ? '' : 's'} sent.`
}

input.addEventListener('change', () => {
  const files = [...input.files]
  input.value = ''
  sendAll(files)
})
for (const type of ['dragenter', 'dragover']) {
  dropzone.addEventListener(type, (event) => {
    event.preventDefault()
    if (!closedReason) dropzone.classList.add('over')
  })
}
dropzone.addEventListener('dragleave', () => dropzone.classList.remove('over'))
dropzone.addEventListener('drop', (event) => {
  event.preventDefault()
  dropzone.classList.remove('over')
  if (!closedReason) sendAll([...event.dataTransfer.files])
})

if (data.password_protected) {
  grant = loadGrant()
  if (grant?.request) {
    view = grant.request
    showRequest()
  } else {
    askPassword('')
  }
} else {
  showRequest()
}
document.body.setAttribute('data-ready', 'true')
