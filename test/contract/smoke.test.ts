import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { bearer, startTestApp, uploadFile, type TestApp } from '../helpers/test-app.js'

describe('smoke', () => {
  let t: TestApp
  beforeEach(async () => {
    t = await startTestApp()
  })
  afterEach(async () => {
    await t.close()
  })

  it('uploads, lists and downloads a file', async () => {
    const { apiKey } = await t.createAccount()
    const { response, body } = await uploadFile(t, apiKey, 'hello world')
    expect(response.status).toBe(201)
    expect(body).toMatchObject({ success: true, size: 11, filename: 'hello.txt' })
    const list = await fetch(`${t.api}/files`, { headers: bearer(apiKey) })
    expect(await list.json()).toMatchObject({ success: true, pagination: { total: 1, pages: 1 } })
    const link = new URL(body.public_link)
    const download = await fetch(`${t.url}${link.pathname}`)
    expect(await download.text()).toBe('hello world')
  })
})
