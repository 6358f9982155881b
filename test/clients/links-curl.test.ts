import fs from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runProgram } from '../helpers/program-runner.js'
import { curlAvailable } from '../helpers/real-clients.js'
import { bearer, makeTempDir, startTestApp, unlimitedAccount, uploadFile, type TestApp } from '../helpers/test-app.js'

/**
 * The download of a link with a policy, as docs/api.md tells people to do it with curl: `-L -d
 * password=...` posts, follows the 303 to the grant URL with a GET and saves the file; `-L -d ''`
 * does the same for a link without a password; `-C -` resumes through the grant for free.
 */
describe.skipIf(!curlAvailable)('curl through a link with a policy', () => {
  let t: TestApp
  let dir: string
  beforeAll(async () => {
    t = await startTestApp()
    dir = await makeTempDir('fileshare-curl-links-')
  })
  afterAll(async () => {
    await t?.close()
    await fs.rm(dir, { recursive: true, force: true })
  })

  const content = 'a file shared through a limited, protected link\n'.repeat(100)

  async function link(fields: Record<string, unknown>) {
    const { apiKey } = await unlimitedAccount(t)
    const { body } = await uploadFile(t, apiKey, content, 'report.txt')
    const response = await fetch(`${t.api}/files/${body.file_id}/links`, {
      method: 'POST',
      headers: { ...bearer(apiKey), 'content-type': 'application/json' },
      body: JSON.stringify(fields),
    })
    expect(response.status).toBe(201)
    return { apiKey, link: ((await response.json()) as { link: { link_id: number; url: string } }).link }
  }

  /** curl, reaching the links' public host (files.example.test) at the test server, as DNS would. */
  const curl = async (...args: string[]) => {
    const { port } = new URL(t.url)
    const { stdout, stderr, failed } = await runProgram('curl', [
      '-sS',
      '--connect-to',
      `::127.0.0.1:${port}`,
      '-w',
      '%{http_code} %{num_redirects}',
      ...args,
    ])
    return { stdout, stderr, failed }
  }

  it('curl -L -d password=... saves the file, counting one download; a wrong password fails with 401', async () => {
    const { apiKey, link: created } = await link({ password: 'correct horse', max_downloads: 2 })
    const out = path.join(dir, 'protected.txt')
    const done = await curl('-L', '-d', 'password=correct horse', created.url, '-o', out)
    expect(done).toMatchObject({ failed: false, stdout: '200 1' })
    expect(await fs.readFile(out, 'utf8')).toBe(content)

    const wrong = await curl('-f', '-L', '-d', 'password=wrong horse', created.url, '-o', path.join(dir, 'wrong.txt'))
    expect(wrong.failed).toBe(true)
    expect(wrong.stdout).toBe('401 0')

    const details = await fetch(`${t.api}/links/${created.link_id}`, { headers: bearer(apiKey) })
    expect(await details.json()).toMatchObject({ link: { download_count: 1, status: 'active' } })
  })

  it("curl -L -d '' downloads through a limited link without a password; the last download exhausts it", async () => {
    const { link: created } = await link({ max_downloads: 1 })
    const out = path.join(dir, 'limited.txt')
    expect(await curl('-L', '-d', '', created.url, '-o', out)).toMatchObject({ failed: false, stdout: '200 1' })
    expect(await fs.readFile(out, 'utf8')).toBe(content)
    expect((await curl('-L', '-d', '', created.url, '-o', path.join(dir, 'again.txt'))).stdout).toBe('404 0')
  })

  it('curl -C - resumes a cut download through the grant URL, which counts nothing more', async () => {
    const { apiKey, link: created } = await link({ max_downloads: 1 })
    const posted = await fetch(`${t.url}${new URL(created.url).pathname}`, { method: 'POST', redirect: 'manual' })
    const grant = posted.headers.get('location')!
    const out = path.join(dir, 'resumed.txt')
    await fs.writeFile(out, content.slice(0, 1000))
    expect(await curl('-C', '-', grant, '-o', out)).toMatchObject({ failed: false, stdout: '206 0' })
    expect(await fs.readFile(out, 'utf8')).toBe(content)
    const details = await fetch(`${t.api}/links/${created.link_id}`, { headers: bearer(apiKey) })
    expect(await details.json()).toMatchObject({ link: { download_count: 1, status: 'exhausted' } })
  })
})
