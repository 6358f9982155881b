import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import type { AddressInfo } from 'node:net'
import { buildApp, type App } from '../../src/app.js'
import { loadConfig, type Config } from '../../src/config.js'

export interface TestApp {
  app: App
  config: Config
  /** http://127.0.0.1:<port> */
  url: string
  api: string
  dataDir: string
  /** Creates an account on `plan` and returns its id and a fresh API key. */
  createAccount(plan?: string, email?: string): Promise<{ accountId: number; apiKey: string }>
  close(): Promise<void>
}

let accountCounter = 0

export async function makeTempDir(prefix = 'fileshare-test-'): Promise<string> {
  return fs.mkdtemp(path.join(os.tmpdir(), prefix))
}

/**
 * Builds the real app on a fresh data folder and listens on a random loopback port, so that tests
 * speak real HTTP (streams, concurrency). `env` adds or overrides FILESHARE_* variables.
 */
export async function startTestApp(env: Record<string, string> = {}): Promise<TestApp> {
  const dataDir = await makeTempDir()
  const config = loadConfig({
    FILESHARE_DATA_DIR: dataDir,
    FILESHARE_LOG_LEVEL: 'silent',
    FILESHARE_PUBLIC_URL: 'http://files.example.test',
    FILESHARE_CACHE_TTL_MS: '0',
    ...env,
  })
  const app = await buildApp(config)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as AddressInfo
  const url = `http://127.0.0.1:${port}`
  return {
    app,
    config,
    url,
    api: `${url}/api/v1`,
    dataDir,
    async createAccount(plan = 'pro', email = `user${++accountCounter}-${Date.now()}@example.test`) {
      const { account, apiKey } = await app.services.accounts.create(email, plan)
      return { accountId: account.account_id, apiKey }
    },
    async close() {
      await app.close()
      await fs.rm(dataDir, { recursive: true, force: true })
    },
  }
}

export function bearer(apiKey: string): Record<string, string> {
  return { authorization: `Bearer ${apiKey}` }
}

/** A multipart body with one file part named `field` (default `file`). */
export function fileForm(content: string | Uint8Array, filename = 'hello.txt', field = 'file'): FormData {
  const form = new FormData()
  form.append(field, new Blob([content]), filename)
  return form
}

export async function uploadFile(t: TestApp, apiKey: string, content: string | Uint8Array = 'hello', filename = 'hello.txt') {
  const response = await fetch(`${t.api}/files/upload`, { method: 'POST', headers: bearer(apiKey), body: fileForm(content, filename) })
  return { response, body: (await response.json()) as Record<string, unknown> & { file_id: number; public_link: string } }
}
