import { createHash } from 'node:crypto'
import escapeHtml from 'escape-html'

/**
 * The small server-rendered pages of public links: the dead link's 404 (not-found-page.ts) and the
 * landing page of a link with a policy (download-page.ts). No script at all; one inline style,
 * allowed by its hash.
 */
const STYLE = `
body{margin:0;font:16px/1.5 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:#1b1f24;background:#f3f5f8}
header{background:#10213f;color:#fff;padding:.75rem 1.25rem;font-weight:700;font-size:1.15rem}
main{max-width:34rem;margin:2rem auto;padding:1.5rem 1.25rem;background:#fff;border:1px solid #c9ced6;border-radius:8px}
@media (max-width:40rem){main{margin:1rem .75rem}}
h1{font-size:1.6rem;margin:0 0 1rem;overflow-wrap:anywhere}
p{margin:0 0 .75rem}
a{color:#1f4fbf}
a:focus-visible,input:focus-visible,button:focus-visible{outline:3px solid #f2a900;outline-offset:2px}
dl{display:grid;grid-template-columns:auto 1fr;gap:.25rem 1rem;margin:0 0 1.25rem}
dt{font-weight:600}
dd{margin:0}
label{display:block;font-weight:600;margin:0 0 .25rem}
input{box-sizing:border-box;width:100%;font:inherit;padding:.6rem .7rem;border:1px solid #6b7380;border-radius:6px;margin:0 0 1rem}
button{font:inherit;font-weight:600;min-height:2.75rem;padding:.6rem 1.4rem;border:0;border-radius:6px;background:#1f4fbf;color:#fff;cursor:pointer}
.error{color:#a4001d;font-weight:600}
`
const STYLE_HASH = createHash('sha256').update(STYLE).digest('base64')

function headers(formAction: string) {
  return {
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Security-Policy':
      `default-src 'none'; style-src 'sha256-${STYLE_HASH}'; img-src data:; ` +
      `base-uri 'none'; form-action ${formAction}; frame-ancestors 'none'`,
    'X-Frame-Options': 'DENY',
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    'Cross-Origin-Resource-Policy': 'same-origin',
    'Cache-Control': 'no-store',
  }
}

/** Headers of a page without a form. */
export const PAGE_HEADERS = Object.freeze(headers("'none'"))
/** Headers of a page whose form posts back to its own origin. */
export const FORM_PAGE_HEADERS = Object.freeze(headers("'self'"))

/** A whole page; `title` is escaped here, `body` is HTML the caller escaped. */
export function page(title: string, body: string): string {
  const text = escapeHtml(title)
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <meta name="robots" content="noindex">
    <title>${text} · Fileshare</title>
    <link rel="icon" href="data:,">
    <style>${STYLE}</style>
  </head>
  <body>
    <header>Fileshare</header>
    <main>
      <h1>${text}</h1>
${body}
    </main>
  </body>
</html>
`
}
