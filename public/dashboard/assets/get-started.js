import { copyText, initPage, reportLoadError, say } from './common.js'

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
  const status = document.getElementById('status')
  for (const copy of document.querySelectorAll('button[data-copy]')) {
    copy.addEventListener('click', async () => {
      const source = document.getElementById(copy.dataset.copy)
      try {
        await copyText(source.textContent)
        say(status, `Copied ${copy.querySelector('.visually-hidden').textContent.trim()}.`)
      } catch (error) {
        say(status, `Could not copy (${error.message}); select the text and copy it with your keyboard.`)
      }
    })
  }
  document.body.setAttribute('data-ready', 'true')
}

load().catch(reportLoadError)
