// fshare and issue 29, on accounts of their own: `stats` shows the storage used, reserved and the
// quota; an upload over the quota exits 5 (LimitExceededError storage_quota_exceeded); `ls` says
// the --before-id of the next page, and `ls --before-id` pages by it.
import { writeFileSync } from 'node:fs'
import { afterAll, describe, expect, it } from 'vitest'
import { fshare, jsonLines, outputs } from '../helpers/cli.js'
import { fileshareCli, newAccount, randomBytes, server, tempDir } from '../helpers/env.js'

const tmp = tempDir()
afterAll(() => tmp.remove())

const as = (key: string) => ({ env: { FILESHARE_BASE_URL: server().base_url, FILESHARE_API_KEY: key }, cwd: tmp.dir })
const keys: string[] = []

describe.sequential('fshare and the storage quota', () => {
  it('stats: storage used and reserved, the quota and what is free of it; unlimited without one', async () => {
    const { id, key } = await newAccount('cli-quota')
    keys.push(key)
    await fileshareCli('account', 'set-limits', String(id), '--max-storage', '100000')
    writeFileSync(tmp.file('kept.bin'), randomBytes(60_000, 71))
    writeFileSync(tmp.file('over.bin'), randomBytes(60_000, 72))
    expect((await fshare(['upload', 'kept.bin'], as(key))).code).toBe(0)

    const [human, json] = await Promise.all([fshare(['stats'], as(key)), fshare(['stats', '--json'], as(key))])
    expect(human.code).toBe(0)
    expect(human.stdout).toMatch(/^storage +58\.6 KiB used, 0 B reserved by uploads in progress$/m)
    expect(human.stdout).toMatch(/^storage quota +97\.7 KiB \(39\.1 KiB free\)$/m)
    expect(JSON.parse(json.stdout)).toMatchObject({ stats: { total_size: 60_000, storage_reserved: 0 }, limits: { max_storage: 100_000 } })

    const over = await fshare(['upload', 'over.bin', '--json'], as(key))
    expect(over.code).toBe(5)
    expect(jsonLines(over.stdout)[0]).toMatchObject({
      ok: false,
      error: { type: 'LimitExceededError', status: 403, code: 'storage_quota_exceeded', exit_code: 5 },
    })

    await fileshareCli('account', 'set-limits', String(id), '--max-storage', 'unlimited')
    expect((await fshare(['stats'], as(key))).stdout).toMatch(/^storage quota +unlimited$/m)
  })

  it('ls: each page names the --before-id of the next; ls --before-id pages by it (page null)', async () => {
    const { key, client } = await newAccount('cli-ls')
    keys.push(key)
    const ids: number[] = []
    for (let i = 0; i < 5; i++) ids.push((await client.files.upload(new Uint8Array([i]), { filename: `f${i}.bin` })).file_id)
    const [newest, , middle] = [...ids].reverse()

    const first = await fshare(['ls', '--limit', '2'], as(key))
    expect(first.stdout).toMatch(new RegExp(`^page 1 of 3, 2 shown, 5 files in all; older: --before-id ${ids[3]}$`, 'm'))
    const [next, json, last] = await Promise.all([
      fshare(['ls', '--limit', '2', '--before-id', String(ids[3])], as(key)),
      fshare(['ls', '--limit', '2', '--before-id', String(ids[3]), '--json'], as(key)),
      fshare(['ls', '--before-id', String(ids[1])], as(key)),
    ])
    expect(next.stdout).toMatch(new RegExp(`^2 shown older than ${ids[3]}, 5 files in all; older: --before-id ${ids[1]}$`, 'm'))
    const page = JSON.parse(json.stdout) as { files: { file_id: number }[]; pagination: Record<string, unknown> }
    expect(page.files.map((f) => f.file_id)).toEqual([middle, ids[1]])
    expect(page.pagination).toEqual({ page: null, limit: 2, total: 5, pages: 3, next_before_id: ids[1] })
    expect(last.stdout).toMatch(new RegExp(`^1 shown older than ${ids[1]}, 5 files in all$`, 'm'))
    expect(first.stdout).toContain(`${newest}`)
  })

  it('no key in any output', () => {
    for (const key of keys) for (const output of outputs) expect(output).not.toContain(key)
  })
})
