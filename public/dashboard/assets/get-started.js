import { copyAt, initPage, reportLoadError } from './common.js'

/** The API base URL: the session's (the server's public URL + /api/v1), else this page's origin + /api/v1. */
function baseUrlOf(session) {
  if (typeof session.api_base_url === 'string' && session.api_base_url) return session.api_base_url
  return new URL('../api/v1', location.href).href
}

async function load() {
  const session = await initPage()
  const baseUrl = baseUrlOf(session)
  document.getElementById('base-url').textContent = baseUrl
  for (const slot of document.querySelectorAll('.base-url-slot')) slot.textContent = baseUrl
  if (!session.account.api_access) {
    const notice = document.getElementById('api-access')
    notice.textContent = `Your plan, ${session.account.plan}, does not include API access: every call answers 403 plan_not_supported. Account settings, API, lists the plans that do.`
    notice.hidden = false
  }
  // Each copy button answers at itself: the status line under the h1 is out of view by the later snippets.
  for (const copy of document.querySelectorAll('button[data-copy]')) {
    const what = copy.querySelector('.visually-hidden').textContent.trim()
    copy.addEventListener('click', () => copyAt(copy, document.getElementById(copy.dataset.copy).textContent, what))
  }
  document.body.setAttribute('data-ready', 'true')
}

load().catch(reportLoadError)
