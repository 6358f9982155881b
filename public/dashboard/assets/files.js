import {
  api,
  ApiError,
  button,
  cell,
  confirmWith,
  copyText,
  csrfHeader,
  formatBytes,
  formatDate,
  formatNumber,
  initPage,
  reportLoadError,
  say,
} from './common.js'

const LIMIT = 20
/** Files above this size go through tus (resumable, in chunks); smaller ones in one request. */
const RESUMABLE_ABOVE = 8 * 1024 * 1024
/** One PATCH each: well under the 100 MB body cap common in proxies, and little to send again after a cut. */
const CHUNK_SIZE = 8 * 1024 * 1024
/** Waits before each new attempt after a dropped connection (reset whenever bytes get through again). */
const RETRY_DELAYS = [0, 1000, 2000, 5000, 10000, 20000, 30000, 60000]
const status = document.getElementById('status')
const body = document.getElementById('files-body')
const empty = document.getElementById('empty')
const pageInfo = document.getElementById('page-info')
const prev = document.getElementById('prev')
const next = document.getElementById('next')
const dropzone = document.getElementById('dropzone')
const input = document.getElementById('file-input')
const uploads = document.getElementById('uploads')
const limitsText = document.getElementById('upload-limits')
const confirmDialog = document.getElementById('confirm-delete')

let page = 1
let pages = 0
let maxFileSize = Infinity

function fileRow(file) {
  const row = document.createElement('tr')
  const name = cell(file.filename, 'Name', 'name')
  name.setAttribute('title', file.content_type)
  row.append(
    name,
    cell(formatBytes(file.size), 'Size', 'num'),
    cell(formatDate(file.upload_date), 'Uploaded (UTC)'),
    cell(formatNumber(file.download_count), 'Downloads', 'num'),
  )

  const linkCell = cell('', 'Public link', 'link')
  const link = document.createElement('a')
  link.href = file.public_link
  link.textContent = 'Download'
  link.rel = 'noopener noreferrer'
  link.setAttribute('aria-label', `Download ${file.filename}`)
  const copy = button('Copy link', async () => {
    try {
      await copyText(file.public_link)
      say(status, `Copied the public link of ${file.filename}.`)
    } catch (error) {
      say(status, `Could not copy: ${error.message} The link is ${file.public_link}`)
    }
  })
  copy.setAttribute('aria-label', `Copy the public link of ${file.filename}`)
  copy.dataset.link = file.public_link
  linkCell.append(link, ' ', copy)
  row.append(linkCell)

  const actions = cell('', '', 'actions')
  const remove = button('Delete', () => deleteFile(file), 'danger')
  remove.setAttribute('aria-label', `Delete ${file.filename}`)
  actions.append(remove)
  row.append(actions)
  return row
}

async function loadFiles() {
  const result = await api(`files?page=${page}&limit=${LIMIT}`)
  pages = result.pagination.pages
  if (page > 1 && result.files.length === 0 && pages > 0) {
    page = pages
    return loadFiles()
  }
  body.replaceChildren(...result.files.map(fileRow))
  empty.hidden = result.pagination.total > 0
  pageInfo.textContent = pages > 0 ? `Page ${page} of ${pages} (${formatNumber(result.pagination.total)} files)` : ''
  prev.disabled = page <= 1
  next.disabled = page >= pages
}

async function loadLimits() {
  const usage = await api('usage')
  maxFileSize = usage.limits.max_file_size
  const left = Math.max(0, usage.limits.daily_uploads - usage.stats.uploads_today)
  limitsText.textContent = `Up to ${formatBytes(maxFileSize)} per file; ${formatNumber(left)} of ${formatNumber(usage.limits.daily_uploads)} uploads left today.`
}

async function deleteFile(file) {
  const choice = await confirmWith(confirmDialog, document.getElementById('confirm-delete-name'), file.filename)
  if (choice !== 'delete') return
  try {
    await api(`files/${file.file_id}`, { method: 'DELETE' })
    say(status, `Deleted ${file.filename}.`)
    await Promise.all([loadFiles(), loadLimits()])
  } catch (error) {
    say(status, `Could not delete ${file.filename}: ${error.message}`)
  }
}

/** Sends one file with XMLHttpRequest, whose upload events drive a real progress bar. */
function sendFile(file, progress) {
  return new Promise((resolve, reject) => {
    const request = new XMLHttpRequest()
    request.open('POST', 'api/files/upload')
    request.setRequestHeader(...csrfHeader())
    request.setRequestHeader('accept', 'application/json')
    request.responseType = 'json'
    request.upload.addEventListener('progress', (event) => {
      if (!event.lengthComputable) return
      progress.max = event.total
      progress.value = event.loaded
    })
    request.addEventListener('load', () => {
      if (request.status === 201) return resolve(request.response)
      if (request.status === 401) location.assign('sign-in')
      const error = request.response?.error
      reject(new ApiError(request.status, error?.code ?? 'error', error?.message ?? `The server answered ${request.status}.`))
    })
    request.addEventListener('error', () => reject(new Error('The connection failed.')))
    request.addEventListener('abort', () => reject(new Error('The upload was stopped.')))
    const form = new FormData()
    form.append('file', file, file.name)
    request.send(form)
  })
}

/** The API's error from a tus request's answer, or a plain connection failure. */
function tusError(error) {
  const response = error.originalResponse
  const status = response?.getStatus() ?? 0
  if (status === 0) return new Error('The connection failed. Choose the same file again to continue where it stopped.')
  if (status === 401) location.assign('sign-in')
  let body
  try {
    body = JSON.parse(response.getBody())
  } catch {
    body = undefined
  }
  return new ApiError(status, body?.error?.code ?? 'error', body?.error?.message ?? `The server answered ${status}.`)
}

/**
 * Sends one large file with tus-js-client (assets/vendor/tus.min.js) in CHUNK_SIZE pieces. A dropped
 * connection is retried by itself (RETRY_DELAYS), from the offset the server confirms. The upload's
 * URL is kept in localStorage under the file's fingerprint (name, type, size, last modified), so
 * that after a reload, choosing the same file again continues where it stopped.
 */
function sendResumable(file, progress, state) {
  return new Promise((resolve, reject) => {
    const [csrfName, csrfValue] = csrfHeader()
    let retrying = false
    const upload = new window.tus.Upload(file, {
      endpoint: new URL('api/uploads', location.href).href,
      chunkSize: CHUNK_SIZE,
      retryDelays: RETRY_DELAYS,
      metadata: file.type ? { filename: file.name, filetype: file.type } : { filename: file.name },
      headers: { [csrfName]: csrfValue, accept: 'application/json' },
      storeFingerprintForResuming: true,
      removeFingerprintOnSuccess: true,
      // tus-js-client's own rule (a lost connection, a 5xx, 409 or 423, never another 4xx), said on the page.
      onShouldRetry(error) {
        const status = error.originalResponse?.getStatus() ?? 0
        const retry = (status < 400 || status >= 500 || status === 409 || status === 423) && navigator.onLine !== false
        if (retry) {
          retrying = true
          say(state, 'Connection lost; trying again…')
        }
        return retry
      },
      onProgress(sent, total) {
        progress.max = total
        progress.value = sent
        if (retrying) {
          retrying = false
          say(state, `Uploading ${formatBytes(file.size)}…`)
        }
      },
      onSuccess: resolve,
      onError: (error) => reject(tusError(error)),
    })
    upload
      .findPreviousUploads()
      .then((previous) => {
        // The newest upload of this file that this browser started and did not finish.
        const [latest] = previous.sort((a, b) => Date.parse(b.creationTime) - Date.parse(a.creationTime))
        if (latest) {
          upload.resumeFromPreviousUpload(latest)
          say(state, `Resuming the upload of ${formatBytes(file.size)}…`)
        }
        upload.start()
      })
      .catch(reject)
  })
}

/** Files being sent from this page, so that choosing one again does not start a second, competing upload. */
const sending = new Set()
const fileKey = (file) => [file.name, file.type, file.size, file.lastModified].join('/')

async function uploadAll(files) {
  for (const file of files) {
    const item = document.createElement('li')
    const label = document.createElement('span')
    label.className = 'upload-name'
    label.textContent = file.name
    const progress = document.createElement('progress')
    progress.max = 1
    progress.value = 0
    progress.setAttribute('aria-label', `Uploading ${file.name}`)
    const state = document.createElement('span')
    state.className = 'upload-state'
    state.setAttribute('role', 'status')
    item.append(label, progress, state)
    uploads.prepend(item)
    if (file.size > maxFileSize) {
      progress.remove()
      say(state, `Too large: your plan allows up to ${formatBytes(maxFileSize)} per file.`)
      item.classList.add('failed')
      continue
    }
    const key = fileKey(file)
    if (sending.has(key)) {
      progress.remove()
      say(state, 'Already uploading from this page.')
      item.classList.add('failed')
      continue
    }
    sending.add(key)
    say(state, `Uploading ${formatBytes(file.size)}…`)
    try {
      if (file.size > RESUMABLE_ABOVE && window.tus?.isSupported) await sendResumable(file, progress, state)
      else await sendFile(file, progress)
      progress.value = progress.max
      say(state, 'Uploaded.')
      item.classList.add('done')
      page = 1
      await Promise.all([loadFiles(), loadLimits()])
    } catch (error) {
      say(state, `Failed: ${error.message}`)
      item.classList.add('failed')
    } finally {
      sending.delete(key)
    }
  }
}

input.addEventListener('change', () => {
  const files = [...input.files]
  input.value = ''
  uploadAll(files)
})
for (const type of ['dragenter', 'dragover']) {
  dropzone.addEventListener(type, (event) => {
    event.preventDefault()
    dropzone.classList.add('over')
  })
}
dropzone.addEventListener('dragleave', () => dropzone.classList.remove('over'))
dropzone.addEventListener('drop', (event) => {
  event.preventDefault()
  dropzone.classList.remove('over')
  uploadAll([...event.dataTransfer.files])
})
prev.addEventListener('click', () => {
  page = Math.max(1, page - 1)
  loadFiles().catch(reportLoadError)
})
next.addEventListener('click', () => {
  page += 1
  loadFiles().catch(reportLoadError)
})

initPage()
  .then(() => Promise.all([loadFiles(), loadLimits()]))
  .then(() => document.body.setAttribute('data-ready', 'true'))
  .catch(reportLoadError)
