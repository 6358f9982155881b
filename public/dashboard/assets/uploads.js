import { api, ApiError, csrfHeader, formatBytes, say } from './common.js'

/** Files above this size go through tus (resumable, in chunks); smaller ones in one request. */
const RESUMABLE_ABOVE = 8 * 1024 * 1024
/** One PATCH each: well under the 100 MB body cap common in proxies, and little to send again after a cut. */
const CHUNK_SIZE = 8 * 1024 * 1024
/** Waits before each new attempt after a dropped connection (reset whenever bytes get through again). */
const RETRY_DELAYS = [0, 1000, 2000, 5000, 10000, 20000, 30000, 60000]

/** Sends one file with XMLHttpRequest, whose upload events drive a real progress bar; `lifetime`: seconds, or ''. */
function sendFile(file, progress, lifetime) {
  return new Promise((resolve, reject) => {
    const request = new XMLHttpRequest()
    request.open('POST', 'api/files/upload')
    request.setRequestHeader(...csrfHeader())
    request.setRequestHeader('accept', 'application/json')
    if (lifetime) request.setRequestHeader('fileshare-expires-in', lifetime)
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
function sendResumable(file, progress, state, lifetime) {
  return new Promise((resolve, reject) => {
    const [csrfName, csrfValue] = csrfHeader()
    let retrying = false
    const upload = new window.tus.Upload(file, {
      endpoint: new URL('api/uploads', location.href).href,
      chunkSize: CHUNK_SIZE,
      retryDelays: RETRY_DELAYS,
      metadata: file.type ? { filename: file.name, filetype: file.type } : { filename: file.name },
      // The expiry counts at the upload's creation (the server reads the header there only).
      headers: { [csrfName]: csrfValue, accept: 'application/json', ...(lifetime ? { 'fileshare-expires-in': lifetime } : {}) },
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
      // The chunk that completes the upload answers with the new file's id (Fileshare-File-Id).
      onSuccess: (payload) => resolve(payload?.lastResponse?.getHeader('Fileshare-File-Id')),
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

const fileKey = (file) => [file.name, file.type, file.size, file.lastModified].join('/')

/** The finished upload's file record: in the upload's answer, or (tus) by the id its last chunk answered with. */
async function uploadedFile(answer) {
  if (answer && typeof answer === 'object' && answer.public_link) return answer
  if (!answer) return undefined
  const { file } = await api(`files/${encodeURIComponent(answer)}`)
  return file
}

function failed(item, progress, message, state) {
  say(state, message)
  item.classList.add('failed')
  progress.setAttribute('aria-label', `Upload of ${item.dataset.name} failed`)
}

/**
 * The Files page's list of uploads and what sends them. The page gives its elements and what the
 * uploads need of it: `status` (the page's status line), `panel` and `list` (the uploads' box and
 * its `<ul>`), `expires` (the expiry chosen for a batch), `limits()` (`{maxFileSize, uploadsOff}`
 * as the account's usage last said), `failureText(error)`, `copyButton(file)`, `afterUpload()`
 * (reloads the list and the limits), `onUploaded(upload, file)` (a finished row, `{item, state,
 * progress}`, and its file) and `onCleared()` (rows were removed).
 */
export function createUploads({ status, panel, list, expires, limits, failureText, copyButton, afterUpload, onUploaded, onCleared }) {
  /** Files being sent from this page, so that choosing one again does not start a second, competing upload. */
  const sending = new Set()

  /** A finished row's public link, with a button that copies it. */
  function showLink(item, file) {
    const box = document.createElement('span')
    box.className = 'upload-link'
    const link = document.createElement('a')
    link.href = file.public_link
    link.textContent = file.public_link
    link.rel = 'noopener noreferrer'
    box.append(link, copyButton(file))
    item.append(box)
  }

  /** Empties the list of uploads of every finished row (those still being sent stay). */
  function clearFinished() {
    for (const item of list.querySelectorAll('li.done, li.failed')) item.remove()
    onCleared()
    panel.hidden = list.children.length === 0
  }

  async function uploadAll(files) {
    const { maxFileSize, uploadsOff } = limits()
    if (uploadsOff) {
      say(status, uploadsOff)
      return
    }
    if (files.length === 0) return
    // The whole batch gets the expiry chosen when it started.
    const lifetime = expires.value
    // A new batch starts a new list: the rows of earlier batches go.
    clearFinished()
    panel.hidden = false
    for (const file of files) {
      const item = document.createElement('li')
      item.dataset.name = file.name
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
      list.prepend(item)
      if (file.size > maxFileSize) {
        failed(item, progress, `Too large: your plan allows up to ${formatBytes(maxFileSize)} per file.`, state)
        continue
      }
      const key = fileKey(file)
      if (sending.has(key)) {
        failed(item, progress, 'Already uploading from this page.', state)
        continue
      }
      sending.add(key)
      say(state, `Uploading ${formatBytes(file.size)}…`)
      try {
        const answer =
          file.size > RESUMABLE_ABOVE && window.tus?.isSupported
            ? await sendResumable(file, progress, state, lifetime)
            : await sendFile(file, progress, lifetime)
        progress.value = progress.max
        progress.setAttribute('aria-label', `Uploaded ${file.name}`)
        say(state, 'Uploaded.')
        item.classList.add('done')
        await afterUpload()
        const uploaded = await uploadedFile(answer).catch(() => undefined)
        if (uploaded) {
          if (uploaded.scan?.status !== 'infected') showLink(item, uploaded)
          onUploaded({ item, state, progress }, uploaded)
        }
      } catch (error) {
        failed(item, progress, `Failed: ${await failureText(error)}`, state)
      } finally {
        sending.delete(key)
      }
    }
  }

  return { uploadAll, clearFinished }
}
