import escapeHtml from 'escape-html'
import prettyBytes from 'pretty-bytes'
import type { DownloadOffer } from '../services/downloads.js'
import { page } from './html-page.js'
import { formatUtcTime } from '../lib/utc-time.js'

/** Why the page is shown again after its form was sent. */
export type LandingProblem = 'password_required' | 'wrong_password' | 'rate_limited'

const PROBLEMS: Record<LandingProblem, string> = {
  password_required: 'Enter the password to download this file.',
  wrong_password: 'That password is wrong. Check it and try again.',
  rate_limited: 'Too many wrong passwords from your address. Wait a while, then try again.',
}

/**
 * The landing page of a link with a download limit or a password (../shared/spec/links.md): what
 * the file is, and a form that POSTs back to the link, which counts one download and redirects to
 * the file. Works without JavaScript; a link preview or prefetch that only GETs it uses up nothing.
 */
export function landingPage(offer: DownloadOffer, problem?: LandingProblem): string {
  const details = [
    `<dt>Size</dt><dd>${escapeHtml(prettyBytes(offer.size))} (${offer.size.toLocaleString('en-US')} bytes)</dd>`,
    offer.downloadsLeft === null ? '' : `<dt>Downloads left</dt><dd>${offer.downloadsLeft}</dd>`,
    offer.expiresAt === null ? '' : `<dt>Available until</dt><dd>${formatUtcTime(offer.expiresAt)} UTC</dd>`,
  ].join('')
  const message = problem ? `      <p class="error" id="problem" role="alert">${PROBLEMS[problem]}</p>\n` : ''
  const described = problem ? ' aria-describedby="problem"' : ''
  const password = offer.passwordRequired
    ? `        <label for="password">Password</label>
        <input id="password" name="password" type="password" required maxlength="1024" autocomplete="off"${described}${problem ? ' aria-invalid="true" autofocus' : ''}>
`
    : ''
  return page(
    offer.filename,
    `      <dl>${details}</dl>
${message}      <form method="post">
${password}        <button type="submit">Download</button>
      </form>`,
  )
}
