import fs from 'node:fs/promises'
import path from 'node:path'
import contentDisposition from 'content-disposition'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runProgram } from '../helpers/program-runner.js'
import { curlAvailable, PYTHON, pythonClientsAvailable } from '../helpers/real-clients.js'
import { makeTempDir, startTestApp, type TestApp } from '../helpers/test-app.js'

/**
 * File names with a quote, as real clients send them: they follow the HTML standard's form
 * encoding and send `"` as `%22` (without escaping `%`). The service decodes it (docs/api.md,
 * "File names and content types"), and downloads give the exact name in `filename*` with a plain
 * `filename` fallback that carries no `%XX` a client could decode (RFC 6266).
 */
async function run(command: string, args: string[]): Promise<string> {
  const { stdout, stderr, failed } = await runProgram(command, args)
  if (failed) throw new Error(`${command}: ${stderr || 'failed'}`)
  return stdout
}

describe('file names from real clients', () => {
  let t: TestApp
  let apiKey: string
  let file: string
  beforeAll(async () => {
    t = await startTestApp()
    ;({ apiKey } = await t.createAccount('pro'))
    file = path.join(await makeTempDir('fileshare-names-'), 'content.txt')
    await fs.writeFile(file, 'named content')
  })
  afterAll(async () => {
    await t?.close()
    await fs.rm(path.dirname(file), { recursive: true, force: true })
  })

  const url = () => `${t.api}/files/upload`
  const uploads: Record<string, ((name: string) => Promise<string>) | false> = {
    curl:
      curlAvailable &&
      ((name) =>
        run('curl', [
          '-sS',
          '-H',
          `Authorization: Bearer ${apiKey}`,
          '-F',
          `file=@${file};filename="${name.replace(/["\\]/g, '\\$&')}"`,
          url(),
        ])),
    'python requests':
      pythonClientsAvailable &&
      ((name) =>
        run(PYTHON, [
          '-c',
          'import sys, requests; print(requests.post(sys.argv[1], headers={"Authorization": "Bearer " + sys.argv[2]}, files={"file": (sys.argv[3], b"named content")}).text)',
          url(),
          apiKey,
          name,
        ])),
    'fetch (FormData)': async (name) => {
      const form = new FormData()
      form.append('file', new Blob(['named content']), name)
      return (await fetch(url(), { method: 'POST', headers: { authorization: `Bearer ${apiKey}` }, body: form })).text()
    },
  }

  for (const [client, upload] of Object.entries(uploads)) {
    if (!upload) continue
    it(`${client}: a quote in the name is stored as a quote, and comes back exactly`, async () => {
      const body = JSON.parse(await upload('quote"d.txt')) as { filename: string; public_link: string }
      expect(body.filename).toBe('quote"d.txt')
      const download = await fetch(`${t.url}${new URL(body.public_link).pathname}`)
      const header = download.headers.get('content-disposition')!
      expect(header).toBe(`attachment; filename="quote_d.txt"; filename*=UTF-8''quote%22d.txt`)
      expect(contentDisposition.parse(header).parameters.filename).toBe('quote"d.txt')
    })
  }

  it.skipIf(!curlAvailable)('a percent sign stays in the name, and never reaches the plain filename fallback', async () => {
    const body = JSON.parse(await (uploads.curl as (name: string) => Promise<string>)('percent%41.txt')) as {
      filename: string
      public_link: string
    }
    expect(body.filename).toBe('percent%41.txt')
    const download = await fetch(`${t.url}${new URL(body.public_link).pathname}`)
    expect(download.headers.get('content-disposition')).toBe(`attachment; filename="percent_41.txt"; filename*=UTF-8''percent%2541.txt`)
  })
})
