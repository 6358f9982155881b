import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../helpers/test-app.js'

/** The installed uqr's ES module, as the dashboard must serve it. */
const UQR_MODULE = createRequire(import.meta.url)
  .resolve('uqr')
  .replace(/index\.cjs$/, 'index.mjs')

/**
 * uqr's ES module for the QR codes of links (src/http/qr-code-assets.ts): served by the service
 * itself under the dashboard's assets, typed as JavaScript (a module script needs it, under the
 * dashboard's nosniff), and nothing else of the package.
 */
describe("the QR code library's browser module", () => {
  let t: TestApp

  beforeAll(async () => {
    t = await startTestApp()
  })
  afterAll(async () => {
    await t?.close()
  })

  it('is served as JavaScript, byte for byte the installed package, with the dashboard headers', async () => {
    const answer = await fetch(`${t.url}/dashboard/assets/vendor/uqr/index.mjs`)
    expect(answer.status).toBe(200)
    // A JavaScript type (the HTML standard takes either), which a module script needs under nosniff.
    expect(answer.headers.get('content-type')).toBe('application/javascript; charset=utf-8')
    expect(answer.headers.get('x-content-type-options')).toBe('nosniff')
    expect(answer.headers.get('content-security-policy')).toContain("script-src 'self'")
    expect(await answer.text()).toBe(await readFile(UQR_MODULE, 'utf8'))
  })

  it("serves no other file of the package's dist folder", async () => {
    for (const name of ['index.cjs', 'index.d.ts', 'index.d.mts', '../package.json', '']) {
      const answer = await fetch(`${t.url}/dashboard/assets/vendor/uqr/${name}`)
      expect(answer.status, name).toBe(404)
      await answer.arrayBuffer()
    }
  })
})
