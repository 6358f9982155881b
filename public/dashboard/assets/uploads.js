import { api, ApiError, button, csrfHeader, formatBytes, say } from './common.js'

/** Files above this size go through tus (resumable, in chunks); smaller ones in one request. */
const RESUMABLE_ABOVE = 8 * 1024 * 1024
/** One PATCH each: well under the 100 MB body cap common in proxies, and little to send again after a cut. */
const CHUNK_SIZE = 8 * 1024 * 1024
/** Waits before each new attempt after a dropped connection (reset whenever bytes get through again). */
const RETRY_DELAYS = [0, 1000, 2000, 5000, 10000, 20000, 30000, 60000]
const TUS_VERSION = { 'tus-resumable': '1.0.0' }

const endpoint = () => new URL('api/uploads', location.href).href
const percent = (sent, total) => (total > 0 ? Math.floor((sent / total) * 100) : 0)
const fileKey = (file) => [file.name, file.type, file.size, file.lastModified].join('/')

/**
 * tus-js-client's own store of unfinished uploads (localStorage, `tus::<fingerprint>::<id>`, what
 * resumes an upload when its file is chosen again), with what the page needs to list them after a
 * reload added to each entry: the file's name, type, size and date, the expiry chosen, and the
 * account (`account`, a promise of its id), so that another holder signed in on the same browser
 * is not shown them. One store, not a second one that could disagree with it.
 */
function storeWith(file, lifetime, account) {
  const store = window.tus.defaultOptions.urlStorage
  const about = { name: file.name, type: file.type, size: file.size, lastModified: file.lastModified }
  return {
    findAllUploads: () => store.findAllUploads(),
    findUploadsByFingerprint: (fingerprint) => store.findUploadsByFingerprint(fingerprint),
    removeUpload: (key) => store.removeUpload(key),
    addUpload: async (fingerprint, upload) => store.addUpload(fingerprint, { ...upload, file: about, lifetime, account: await account }),
  }
}

/** The unfinished uploads this browser started on this service (newest first, one per upload URL). */
async function storedUploads() {
  const prefix = `${endpoint()}/`
  const entries = (await window.tus.defaultOptions.urlStorage.findAllUploads())
    .filter((entry) => typeof entry.uploadUrl === 'string' && entry.uploadUrl.startsWith(prefix))
    .sort((a, b) => Date.parse(b.creationTime) - Date.parse(a.creationTime))
  const byUrl = new Map()
  for (const entry of entries) {
    const same = byUrl.get(entry.uploadUrl)
    if (same) same.keys.push(entry.urlStorageKey)
    else byUrl.set(entry.uploadUrl, { ...entry, keys: [entry.urlStorageKey] })
  }
  return [...byUrl.values()]
}

/** Drops every stored entry of an upload URL (cancelled, expired, or finished elsewhere). */
async function forgetUpload(uploadUrl) {
  const store = window.tus.defaultOptions.urlStorage
  for (const entry of await store.findAllUploads()) if (entry.uploadUrl === uploadUrl) await store.removeUpload(entry.urlStorageKey)
}

/** A stored upload's file as the list names it (entries from before the page kept `file` have tus's metadata). */
const storedFile = (entry) => entry.file ?? { name: entry.metadata?.filename ?? 'file', size: entry.size }

/** Why `file` is not the stored upload's file, or '' when it is (same name, size and date). */
function difference(entry, file) {
  const wanted = storedFile(entry)
  if (file.name !== wanted.name) return 'its name differs'
  if (file.size !== wanted.size) return 'its size differs'
  if (wanted.lastModified !== undefined && file.lastModified !== wanted.lastModified) return 'it was modified since'
  return ''
}

/** Sends one file with XMLHttpRequest, whose upload events drive a real progress bar; `lifetime`: seconds, or ''. */
function sendFile(file, row, lifetime) {
  return new Promise((resolve, reject) => {
    const request = new XMLHttpRequest()
    request.open('POST', 'api/files/upload')
    request.setRequestHeader(...csrfHeader())
    request.setRequestHeader('accept', 'application/json')
    if (lifetime) request.setRequestHeader('fileshare-expires-in', lifetime)
    request.responseType = 'json'
    request.upload.addEventListener('progress', (event) => {
      if (!event.lengthComputable) return
      row.progress.max = event.total
      row.progress.value = event.loaded
    })
    request.addEventListener('load', () => {
      if (request.status === 201) return resolve(request.response)
      if (request.status === 401) location.assign('sign-in')
      const error = request.response?.error
      reject(new ApiError(request.status, error?.code ?? 'error', error?.message ?? `The server answered ${request.status}.`))
    })
    request.addEventListener('error', () => reject(new Error('The connection failed.')))
    request.addEventListener('abort', () => reject(new Error('The upload was stopped.')))
    row.abort = () => request.abort()
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

/** The finished upload's file record: in the upload's answer, or (tus) by the id its last chunk answered with. */
async function uploadedFile(answer) {
  if (answer && typeof answer === 'object' && answer.public_link) return answer
  if (!answer) return undefined
  const { file } = await api(`files/${encodeURIComponent(answer)}`)
  return file
}

/** How many rows this page made: each row's status gets an id of its own, which its buttons point to. */
let rowsMade = 0

/** One row of the list of uploads: the file's name, a progress bar, what the upload is at, and its buttons. */
function uploadRow(name) {
  const item = document.createElement('li')
  item.dataset.name = name
  const label = document.createElement('span')
  label.className = 'upload-name'
  label.textContent = name
  const progress = document.createElement('progress')
  progress.max = 1
  progress.value = 0
  progress.setAttribute('aria-label', `Uploading ${name}`)
  const state = document.createElement('span')
  state.className = 'upload-state'
  state.setAttribute('role', 'status')
  rowsMade += 1
  state.id = `upload-state-${rowsMade}`
  const controls = document.createElement('span')
  controls.className = 'upload-controls'
  item.append(label, progress, state, controls)
  return { item, progress, state, controls, name }
}

/** A row's button; its name says which file it acts on ("Pause upload of video.mp4"), starting with what it shows. */
function control(row, text, onClick, className = 'secondary small') {
  const element = button(text, onClick, className)
  relabel(element, text, row.name)
  // The row's status tells what the button would act on ("Paused at 37% — choose the file again to resume.").
  element.setAttribute('aria-describedby', row.state.id)
  return element
}
function relabel(element, text, name) {
  element.textContent = text
  element.setAttribute('aria-label', `${text} upload of ${name}`)
}

/** Buttons waiting for the server: marked so (aria-disabled; `disabled` would drop their focus to the page's body) and inert. */
function setBusy(buttons, busy) {
  for (const element of buttons) element.setAttribute('aria-disabled', String(busy))
}
const isBusy = (element) => element.getAttribute('aria-disabled') === 'true'

/**
 * A row's buttons change: focus on one of the old ones goes to the new one of the same text, else
 * to the first new one, else to the row's link or the list itself (never to the page's body).
 */
function setControls(row, buttons, list) {
  const focused = row.controls.contains(document.activeElement) ? document.activeElement.textContent : null
  row.controls.replaceChildren(...buttons)
  if (focused === null) return
  const next = buttons.find((candidate) => candidate.textContent === focused) ?? buttons[0]
  ;(next ?? row.item.querySelector('a, button') ?? list).focus()
}

/**
 * The Files page's list of uploads and what sends them. The page gives its elements and what the
 * uploads need of it: `status` (the page's status line), `panel` and `list` (the uploads' box and
 * its `<ul>`), `expires` (the expiry chosen for a batch), `limits()` (`{maxFileSize, uploadsOff}`
 * as the account's usage last said), `failureText(error)`, `copyButton(file)`, `afterUpload()`
 * (reloads the list and the limits), `onUploaded(upload, file)` (a finished row, `{item, state,
 * progress}`, and its file) and `onCleared()` (rows were removed).
 *
 * A tus upload's row can be paused (the server keeps what it has), resumed (from the offset the
 * server confirms) and cancelled (tus termination: the server drops it); a one-request upload's
 * only cancelled. The unfinished tus uploads are listed again after a reload (restoreUploads).
 */
export function createUploads({ status, panel, list, expires, limits, failureText, copyButton, afterUpload, onUploaded, onCleared }) {
  /** Files being sent (or paused) from this page, so that choosing one again does not start a second, competing upload. */
  const sending = new Set()
  /** Rows of uploads listed from an earlier visit, by upload URL, each with its stored entry. */
  const restored = new Map()
  /** Where the outcome of a removed row is said (the row, and its own status, are gone). */
  const said = document.getElementById('uploads-said')
  const fileInput = document.getElementById('file-input')
  /** The signed-in account's id (null if the session could not be read: its uploads are then listed for nobody). */
  const account = api('session').then(
    (session) => session.account.account_id,
    () => null,
  )

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

  /** Empties the list of uploads of every finished row (those still being sent, or paused, stay); expired ones are forgotten. */
  function clearFinished() {
    for (const item of list.querySelectorAll('li.done, li.failed')) {
      if (item.classList.contains('expired')) forgetRestored(item.dataset.uploadUrl).catch(() => undefined)
      item.remove()
    }
    onCleared()
    panel.hidden = list.children.length === 0
  }

  /** Takes a row out of the list, says why next to the list, and keeps focus near where it was. */
  function removeRow(row, message) {
    const rows = [...list.children]
    const index = rows.indexOf(row.item)
    const hadFocus = row.item.contains(document.activeElement)
    row.item.remove()
    panel.hidden = list.children.length === 0
    say(said, message)
    if (!hadFocus) return
    const next = list.children[index] ?? list.children[index - 1]
    ;(next?.querySelector('button, a') ?? (panel.hidden ? fileInput : list)).focus()
  }

  function failed(row, message) {
    setControls(row, [], list)
    say(row.state, message)
    row.item.classList.add('failed')
    row.progress.setAttribute('aria-label', `Upload of ${row.name} failed`)
  }

  async function finish(row, answer) {
    row.progress.value = row.progress.max
    row.progress.setAttribute('aria-label', `Uploaded ${row.name}`)
    say(row.state, 'Uploaded.')
    row.item.classList.add('done')
    setControls(row, [], list)
    await afterUpload()
    const uploaded = await uploadedFile(answer).catch(() => undefined)
    if (uploaded) {
      if (uploaded.scan?.status !== 'infected') showLink(row.item, uploaded)
      onUploaded(row, uploaded)
    }
  }

  /** Ends a row's upload: done, failed, or (removed) cancelled; the file can be chosen again. */
  async function settle(row, key, outcome) {
    try {
      await outcome()
    } catch (error) {
      failed(row, `Failed: ${await failureText(error)}`)
    } finally {
      sending.delete(key)
    }
  }

  /** Sends a small file in one request; its row offers Cancel only (one request cannot be paused). */
  function sendSmall(row, file, lifetime, key) {
    let cancelled = false
    const cancel = control(row, 'Cancel', () => {
      cancelled = true
      row.abort?.()
    })
    setControls(row, [cancel], list)
    return settle(row, key, async () => {
      let answer
      try {
        answer = await sendFile(file, row, lifetime)
      } catch (error) {
        if (!cancelled) throw error
        removeRow(row, `Cancelled the upload of ${file.name}.`)
        return
      }
      await finish(row, answer)
    })
  }

  /**
   * Sends one large file with tus-js-client (assets/vendor/tus.min.js) in CHUNK_SIZE pieces. A dropped
   * connection is retried by itself (RETRY_DELAYS), from the offset the server confirms. The upload's
   * URL is kept in localStorage under the file's fingerprint (name, type, size, last modified), so
   * that after a reload, choosing the same file again continues where it stopped. `previous`: the
   * stored upload to continue (a restored row), else the newest one of this file, if any.
   *
   * Resolves once the row no longer holds up the batch: finished, failed, cancelled or paused (a
   * paused upload goes on when resumed, and its row then finishes by itself).
   */
  function sendResumable(row, file, lifetime, key, previous) {
    return new Promise((release) => {
      const [csrfName, csrfValue] = csrfHeader()
      let retrying = false
      let paused = false
      let done
      const ended = new Promise((resolve) => {
        done = resolve
      })
      const upload = new window.tus.Upload(file, {
        endpoint: endpoint(),
        chunkSize: CHUNK_SIZE,
        retryDelays: RETRY_DELAYS,
        metadata: file.type ? { filename: file.name, filetype: file.type } : { filename: file.name },
        // The expiry counts at the upload's creation (the server reads the header there only).
        headers: { [csrfName]: csrfValue, accept: 'application/json', ...(lifetime ? { 'fileshare-expires-in': lifetime } : {}) },
        urlStorage: storeWith(file, lifetime, account),
        storeFingerprintForResuming: true,
        removeFingerprintOnSuccess: true,
        // tus-js-client's own rule (a lost connection, a 5xx, 409 or 423, never another 4xx), said on the page.
        onShouldRetry(error) {
          const status = error.originalResponse?.getStatus() ?? 0
          const retry = (status < 400 || status >= 500 || status === 409 || status === 423) && navigator.onLine !== false
          if (retry) {
            retrying = true
            say(row.state, 'Connection lost; trying again…')
          }
          return retry
        },
        onProgress(sent, total) {
          row.progress.max = total
          row.progress.value = sent
          if (retrying) {
            retrying = false
            say(row.state, `Uploading ${formatBytes(file.size)}…`)
          }
        },
        // The chunk that completes the upload answers with the new file's id (Fileshare-File-Id).
        onSuccess: (payload) => done(() => finish(row, payload?.lastResponse?.getHeader('Fileshare-File-Id'))),
        onError: (error) =>
          done(() => {
            throw tusError(error)
          }),
      })

      // Pause and Resume are one button whose words change: focus stays on it.
      const pause = control(row, 'Pause', () => {
        if (isBusy(pause)) return
        paused = !paused
        if (paused) {
          upload.abort()
          relabel(pause, 'Resume', file.name)
          row.progress.setAttribute('aria-label', `Upload of ${file.name}, paused`)
          say(row.state, `Paused at ${percent(row.progress.value, row.progress.max)}%.`)
          release()
        } else {
          relabel(pause, 'Pause', file.name)
          row.progress.setAttribute('aria-label', `Uploading ${file.name}`)
          say(row.state, `Resuming the upload of ${formatBytes(file.size)}…`)
          // start() asks the server for its offset (HEAD) and goes on from there.
          upload.start()
        }
      })
      const cancel = control(row, 'Cancel', async () => {
        if (isBusy(cancel)) return
        setBusy([pause, cancel], true)
        say(row.state, 'Cancelling…')
        try {
          // Stops sending, and (tus termination) has the server drop the upload and its bytes, and the fingerprint go.
          await upload.abort(true)
        } catch (error) {
          if (error.originalResponse?.getStatus() !== 404) {
            setBusy([pause, cancel], false)
            // abort() stopped the sending before the server refused: the upload stands paused.
            if (!paused) relabel(pause, 'Resume', file.name)
            paused = true
            release()
            say(row.state, `Could not cancel: ${tusError(error).message}`)
            return
          }
        }
        if (upload.url) await forgetUpload(upload.url)
        done(() => removeRow(row, `Cancelled the upload of ${file.name}; the server dropped what it had received.`))
      })
      setControls(row, [pause, cancel], list)

      settle(row, key, async () => (await ended)()).then(() => release())
      ;(previous ? Promise.resolve([previous]) : upload.findPreviousUploads())
        .then((found) => {
          // The newest upload of this file that this browser started and did not finish.
          const [latest] = found.sort((a, b) => Date.parse(b.creationTime) - Date.parse(a.creationTime))
          if (latest) {
            upload.resumeFromPreviousUpload(latest)
            if (!paused) say(row.state, `Resuming the upload of ${formatBytes(file.size)}…`)
          }
          // Paused or cancelled while the stored uploads were being read: Resume starts it later, or nothing does.
          if (!paused && !isBusy(cancel)) upload.start()
        })
        .catch((error) => done(() => Promise.reject(error)))
    })
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
    say(said, '')
    for (const file of files) {
      const row = uploadRow(file.name)
      list.prepend(row.item)
      if (file.size > maxFileSize) {
        failed(row, `Too large: your plan allows up to ${formatBytes(maxFileSize)} per file.`)
        continue
      }
      const key = fileKey(file)
      if (sending.has(key)) {
        failed(row, 'Already uploading from this page.')
        continue
      }
      sending.add(key)
      // The same file, listed from an earlier visit: its new row continues it (tus finds it by its fingerprint).
      for (const [uploadUrl, earlier] of restored) {
        if (difference(earlier.entry, file) !== '') continue
        earlier.row.item.remove()
        restored.delete(uploadUrl)
      }
      say(row.state, `Uploading ${formatBytes(file.size)}…`)
      await (file.size > RESUMABLE_ABOVE && window.tus?.isSupported
        ? sendResumable(row, file, lifetime, key)
        : sendSmall(row, file, lifetime, key))
    }
  }

  // ---- Uploads from an earlier visit: listed again, resumable with their file, cancellable, or forgotten ----

  async function forgetRestored(uploadUrl) {
    restored.delete(uploadUrl)
    await forgetUpload(uploadUrl)
  }

  /** Resume on a restored row: the browser may read a file only once it is chosen again, so a picker opens. */
  function chooseAgain(row, entry) {
    const picker = document.createElement('input')
    picker.type = 'file'
    picker.addEventListener('change', () => {
      const [file] = picker.files
      if (!file) return
      const wanted = storedFile(entry)
      const why = difference(entry, file)
      if (why) {
        say(row.state, `${file.name} is a different file (${why}): choose ${wanted.name} (${formatBytes(wanted.size)}) to resume.`)
        return
      }
      const key = fileKey(file)
      if (sending.has(key)) {
        say(row.state, 'Already uploading from this page.')
        return
      }
      sending.add(key)
      restored.delete(entry.uploadUrl)
      row.item.classList.remove('restored', 'failed')
      row.progress.setAttribute('aria-label', `Uploading ${file.name}`)
      say(row.state, `Resuming the upload of ${formatBytes(file.size)}…`)
      sendResumable(row, file, entry.lifetime ?? '', key, entry)
    })
    picker.click()
  }

  /** Cancel on a restored row: tus termination (the server drops the upload), then the stored entry goes. */
  async function cancelRestored(row, entry, cancel) {
    if (isBusy(cancel)) return
    setBusy([cancel], true)
    say(row.state, 'Cancelling…')
    const answer = await fetch(entry.uploadUrl, {
      method: 'DELETE',
      headers: { ...TUS_VERSION, [csrfHeader()[0]]: csrfHeader()[1] },
    }).catch(() => undefined)
    if (answer?.status === 401) location.assign('sign-in')
    // 404: the server has no such upload any more; either way there is nothing left to keep.
    if (answer?.status !== 204 && answer?.status !== 404) {
      setBusy([cancel], false)
      say(row.state, `Could not cancel: ${answer ? `the server answered ${answer.status}` : 'the connection failed'}. Try again.`)
      return
    }
    await forgetRestored(entry.uploadUrl)
    removeRow(row, `Cancelled the upload of ${row.name}; the server dropped what it had received.`)
  }

  /** A restored row as the server's HEAD answers: paused at its offset, expired (404, 410), or gone (finished elsewhere). */
  async function askServer(row, entry) {
    const answer = await fetch(entry.uploadUrl, { method: 'HEAD', headers: TUS_VERSION, cache: 'no-store' }).catch(() => undefined)
    if (!row.item.isConnected) return
    if (answer?.status === 404 || answer?.status === 410) {
      row.item.classList.add('failed', 'expired')
      row.progress.setAttribute('aria-label', `Upload of ${row.name} expired`)
      say(row.state, 'Expired: the server no longer keeps this unfinished upload. Choose the file again to start over.')
      const forget = control(row, 'Forget', async () => {
        await forgetRestored(entry.uploadUrl)
        removeRow(row, `Forgot the expired upload of ${row.name}.`)
      })
      setControls(row, [forget], list)
      return
    }
    const offset = Number(answer?.headers.get('upload-offset'))
    const length = Number(answer?.headers.get('upload-length') ?? entry.size)
    if (answer?.ok && offset >= length) {
      // Completed meanwhile (in another tab, or its last answer got lost): nothing left to resume.
      await forgetRestored(entry.uploadUrl)
      row.item.remove()
      panel.hidden = list.children.length === 0
      return
    }
    if (answer?.ok) {
      row.progress.max = length
      row.progress.value = offset
      say(row.state, `Paused at ${percent(offset, length)}% — choose the file again to resume.`)
    } else say(row.state, 'Paused — choose the file again to resume (the server could not be asked how far it got).')
  }

  /** Lists the unfinished tus uploads this browser keeps, from an earlier visit of the page. */
  async function restoreUploads() {
    if (!window.tus?.isSupported) return
    const signedIn = await account
    if (signedIn === null) return
    for (const entry of await storedUploads()) {
      const wanted = storedFile(entry)
      // Another holder's (this browser is shared): not listed, and kept for when they are back.
      if (entry.account !== undefined && entry.account !== signedIn) continue
      if (entry.file && sending.has(fileKey(entry.file))) continue
      const row = uploadRow(wanted.name)
      row.item.classList.add('restored')
      row.item.dataset.uploadUrl = entry.uploadUrl
      row.progress.setAttribute('aria-label', `Upload of ${wanted.name}, paused`)
      say(row.state, 'Paused; asking the server how far it got…')
      const resume = control(row, 'Resume', () => chooseAgain(row, entry))
      const cancel = control(row, 'Cancel', () => cancelRestored(row, entry, cancel))
      setControls(row, [resume, cancel], list)
      restored.set(entry.uploadUrl, { row, entry })
      list.append(row.item)
      panel.hidden = false
      askServer(row, entry)
    }
  }

  restoreUploads().catch(() => undefined)

  return { uploadAll, clearFinished }
}
