import { initPage, reportLoadError, say } from './common.js'

// SwaggerUIBundle comes from assets/swagger-ui/swagger-ui-bundle.js, served by this service;
// reference.css makes its page meet WCAG AA contrast.

/** What an API key looks like (`fsk_` and 43 base64url characters); anything else is refused here. */
const KEY_PATTERN = /^fsk_[A-Za-z0-9_-]{43}$/

/**
 * Swagger UI's markup as it comes fails a few accessibility checks: unlabelled <select>s (the server, enum parameters),
 * an <h1> for the document's title below the page's own <h1> followed by <h3> tag headings, icon
 * buttons without a name, response tables that are unnamed regions, and in the Authorize dialog an
 * <h6> under an <h4>, Logout and Authorize buttons whose names do not say so, an <h2> for the webhooks, and examples that scroll
 * in a box the keyboard cannot reach. Fixed on every render
 * (React may put elements back), with attributes only: its state stays React's.
 */
function fixMarkup(root) {
  const label = (selector, name) => {
    for (const element of root.querySelectorAll(`${selector}:not([aria-label])`)) element.setAttribute('aria-label', name)
  }
  label('select#servers', 'Server')
  // A parameter with a list of values (GET /files's sort and order) is a <select> with no label of its own.
  for (const select of root.querySelectorAll('tr[data-param-name] select:not([aria-label])')) {
    select.setAttribute('aria-label', `Parameter ${select.closest('tr').dataset.paramName}`)
  }
  label('.copy-to-clipboard > button', 'Copy to clipboard')
  label('button.close-modal', 'Close the dialog')
  for (const button of root.querySelectorAll('.auth-container .btn.modal-btn[aria-label="Remove authorization"]')) {
    button.setAttribute('aria-label', `${button.textContent.trim()}: remove the authorization`)
  }
  // The same for a scheme not authorized yet (the upload request's, next to the key's): its button says Authorize.
  for (const button of root.querySelectorAll('.auth-container .btn.modal-btn[aria-label="Apply credentials"]')) {
    button.setAttribute('aria-label', `${button.textContent.trim()}: apply the credentials`)
  }
  // A long example (the /stats answer, since issue 29's fields) scrolls in its box: the keyboard must reach it.
  for (const example of root.querySelectorAll('.highlight-code > .microlight:not([tabindex])')) example.setAttribute('tabindex', '0')
  for (const title of root.querySelectorAll('.info h1.title:not([aria-level])')) title.setAttribute('aria-level', '2')
  for (const heading of root.querySelectorAll('.auth-container h6:not([aria-level])')) heading.setAttribute('aria-level', '5')
  // The document's webhooks (OpenAPI 3.1) come under an <h2> between the <h3> tags and the <h4> of
  // the schemas: at the tags' level, the outline stays in order.
  for (const heading of root.querySelectorAll('.webhooks > h2:not([aria-level])')) heading.setAttribute('aria-level', '3')
  for (const table of root.querySelectorAll('table.responses-table[role="region"]:not([aria-label])')) {
    const operation = table.closest('.opblock')
    const method = operation?.querySelector('.opblock-summary-method')?.textContent ?? ''
    const path = operation?.querySelector('.opblock-summary-path')?.textContent ?? ''
    table.setAttribute('aria-label', `Responses of ${method} ${path}`.trim())
  }
}

function watchMarkup(root) {
  new MutationObserver(() => fixMarkup(root)).observe(root, { childList: true, subtree: true })
}

/** The key form: hands a pasted key to Swagger UI's bearer authorization, in memory only. */
function wireKeyForm(ui) {
  const form = document.getElementById('key-form')
  const field = document.getElementById('try-key')
  const error = document.getElementById('key-error')
  const forget = document.getElementById('forget-key')
  const status = document.getElementById('status')
  form.addEventListener('submit', (event) => {
    event.preventDefault()
    const key = field.value.trim()
    if (!KEY_PATTERN.test(key)) {
      say(error, 'That is not an API key: a key starts with fsk_ and has 47 characters. Create one in Account settings, API.')
      field.focus()
      return
    }
    say(error, '')
    ui.preauthorizeApiKey('bearerAuth', key)
    field.value = ''
    forget.hidden = false
    say(status, `Try it out now sends the key ${key.slice(0, 8)}… as Authorization: Bearer.`)
  })
  forget.addEventListener('click', () => {
    ui.authActions.logout(['bearerAuth'])
    forget.hidden = true
    say(status, 'The key is forgotten: Try it out sends no key.')
    field.focus()
  })
}

initPage()
  .then(() => {
    const domNode = document.getElementById('swagger-ui')
    watchMarkup(domNode)
    const ui = window.SwaggerUIBundle({
      url: '../api/v1/openapi.json',
      domNode,
      // No request to the public validator service: the dashboard makes no outside requests.
      validatorUrl: null,
      deepLinking: false,
      tryItOutEnabled: false,
      // An authorization lives in this tab's memory only, never in localStorage.
      persistAuthorization: false,
      // Dashboard cookies are for the dashboard (Path=/dashboard); the API takes keys only.
      withCredentials: false,
      onComplete: () => {
        fixMarkup(domNode)
        document.body.setAttribute('data-ready', 'true')
      },
    })
    wireKeyForm(ui)
  })
  .catch(reportLoadError)
