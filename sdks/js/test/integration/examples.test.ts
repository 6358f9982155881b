// The examples run as users run them (`node examples/<name>.mjs`, configured by the environment),
// against the suite's server. They import '@fileshare/sdk', which resolves to this package's dist/
// (built by `pretest`) through package.json's "exports".
import { execFile } from 'node:child_process'
import { existsSync, readFileSync, readdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { server } from '../helpers/env.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const EXAMPLES = new URL('../../examples/', import.meta.url)

// What each example must print (the Python SDK's examples, one for one).
const EXPECTED: Record<string, RegExp[]> = {
  'quickstart.mjs': [
    /uploaded #\d+ hello\.txt \(40 bytes\)/,
    /public link: http/,
    /downloaded 40 bytes, SHA-256 [0-9a-f]{64}/,
    /plan pro/,
    /deleted #\d+/,
  ],
  'async-upload-many.mjs': [
    /#\d+ note-0\.txt: http/,
    /#\d+ note-2\.txt: http/,
    /\d+ files in the account/,
    /deleted 3 of 3 uploaded files/,
  ],
  'download-resume.mjs': [/: 3145728 bytes \(kept 1572864\), SHA-256 [0-9a-f]{64}/],
  'error-handling.mjs': [/not found: not_found \(request id \S+\)/, /uploaded #\d+ hello\.txt/, /deleted #\d+/],
  'resumable-upload.mjs': [/\[#{40}\] 100%/, /stored #\d+ \(20971520 bytes\), SHA-256 [0-9a-f]{64}/],
  'cleanup-old-files.mjs': [
    /deleted 0 files older than 30 days \(0 bytes\); kept \d+/,
    /now \d+ bytes used, \d+ reserved by uploads in progress, a quota of \d+ bytes/,
  ],
  'upload-once.mjs': [
    /#\d+ nightly-report\.txt \(\d+ bytes\), key upload-once-[0-9a-f]{64}/,
    /uploaded again with the same key: #\d+, the same file/,
    /other bytes with the same key: 422 idempotency_key_reused/,
  ],
  'audit-log.mjs': [
    /key fsk_\S+… "[^"]*" on the pro plan/,
    /scopes: files:read files:write files:delete links:read links:write stats:read webhooks:manage requests:manage audit:read/,
    /usable from: anywhere/,
    /uploaded, renamed and deleted #\d+/,
    /file\.deleted +file #\d+ +by key /,
    /#\d+: file\.deleted after file\.updated after file\.uploaded/,
    /[1-9]\d* events in the last 24 hours/,
  ],
  'share-links.mjs': [
    /uploaded #\d+, gone at \d{4}-\d\d-\d\dT/,
    /link #\d+ http\S+: 3 downloads, until \d{4}-/,
    /wrong password refused \(invalid_password\); nothing was counted/,
    /downloaded 17000 bytes through the link: 1 of 3 used/,
    /rotated: http\S+ is dead, http\S+ works \(still 1 download\)/,
    /#\d+ +active +0 downloads {2}default/,
    /#\d+ +revoked +0 downloads {2}team/,
  ],
  'upload-requests.mjs': [
    /send this link to the guest: http\S+\/r\/[\w-]{43}/,
    /open until \d{4}-\d\d-\d\d \d\d:\d\d UTC, 10 files at most/,
    /#\d+ "Documents for your application": active, 0 files, 0 bytes/,
    /#\d+ is now closed/,
  ],
}

describe('examples', () => {
  it('are the programs listed here, and README links each one', () => {
    expect(
      readdirSync(EXAMPLES)
        .filter((name) => name.endsWith('.mjs'))
        .sort(),
    ).toEqual(Object.keys(EXPECTED).sort())
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8')
    for (const name of Object.keys(EXPECTED)) expect(readme).toContain(`](examples/${name})`)
  })

  it.each(Object.keys(EXPECTED))(
    '%s runs against the server',
    async (name) => {
      expect(existsSync(new URL('../../dist/index.js', import.meta.url)), 'dist/ is built (npm run build)').toBe(true)
      const info = server()
      const key = info.keys.pro
      const { stdout, stderr } = await promisify(execFile)(process.execPath, [fileURLToPath(new URL(name, EXAMPLES))], {
        cwd: ROOT,
        env: { ...process.env, FILESHARE_BASE_URL: info.base_url, FILESHARE_API_KEY: key },
        timeout: 120_000,
      }).catch((error: { stdout?: string; stderr?: string; message: string }) => {
        throw new Error(`${name} failed: ${error.message}\n${error.stdout ?? ''}\n${error.stderr ?? ''}`)
      })
      const output = stdout + stderr
      for (const line of EXPECTED[name]!) expect(output, `${name} printed:\n${output}`).toMatch(line)
      expect(output).not.toContain(key)
    },
    120_000,
  )
})
