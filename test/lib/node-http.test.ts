import { execFileSync } from 'node:child_process'
import { createRequire } from 'node:module'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { ROOT } from '../helpers/server-process.js'

/** Runs `script` (an ES module body) in a fresh node process with tsx, and returns what it printed. */
function inFreshProcess(script: string): string {
  return execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8' }).trim()
}

const undiciLoaded = "process.moduleLoadList.some((name) => name.includes('undici'))"
const helper = JSON.stringify(path.join(ROOT, 'src/lib/node-http.ts'))

describe('node:http without its ES module facade (src/lib/node-http.ts)', () => {
  it('gives node:http without loading undici', () => {
    const printed = inFreshProcess(
      `const { http } = await import(${helper}); console.log(typeof http.createServer, http.STATUS_CODES[404], ${undiciLoaded})`,
    )
    expect(printed).toBe('function Not Found false')
  })

  // Why the helper exists: on a Node.js whose node:http has lazy WebSocket getters (22 and later),
  // an ES module import of node:http loads undici. Where it has none, there is nothing to avoid.
  it.runIf('WebSocket' in createRequire(import.meta.url)('node:http'))('is needed: an ES module import of node:http loads undici', () => {
    expect(inFreshProcess(`await import('node:http'); console.log(${undiciLoaded})`)).toBe('true')
  })

  // The whole service, embedded: one ES module import of node:http anywhere in src/ would load it again.
  it('leaves undici unloaded when the app is built and answers', () => {
    const app = JSON.stringify(path.join(ROOT, 'src/app.ts'))
    const config = JSON.stringify(path.join(ROOT, 'src/config.ts'))
    const printed = inFreshProcess(
      `const { buildApp } = await import(${app}); const { loadConfig } = await import(${config});` +
        ` const dir = (await import('node:fs')).mkdtempSync((await import('node:os')).tmpdir() + '/fileshare-undici-');` +
        ` const app = await buildApp(loadConfig({ FILESHARE_DATA_DIR: dir, FILESHARE_LOG_LEVEL: 'silent' }));` +
        ` const answer = await app.inject({ method: 'GET', url: '/healthz' }); await app.close();` +
        ` console.log(answer.statusCode, ${undiciLoaded})`,
    )
    expect(printed).toBe('200 false')
  })
})
