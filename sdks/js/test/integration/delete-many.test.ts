// files.deleteMany() against the real server: deleted and not found in the order given, another
// account's file, the idempotency key's replay, the scope, and ids refused before any request.
import { afterAll, describe, expect, it } from 'vitest'
import { ConfigurationError, MAX_BULK_DELETE, NotFoundError, PermissionDeniedError } from '../../src/index.js'
import { client, newAccount, tempDir } from '../helpers/env.js'

const tmp = tempDir()
afterAll(() => tmp.remove())

const fs = client('pro')
const upload = async (name: string) => (await fs.files.upload(new TextEncoder().encode(name), { filename: name })).file_id

describe('files.deleteMany', () => {
  it("deletes the files, names those that are none of the account's, each in the order given", async () => {
    const other = await newAccount('delete-many-other')
    const theirs = (await other.client.files.upload(new TextEncoder().encode('theirs'), { filename: 'theirs.txt' })).file_id
    const [a, b] = [await upload('a.txt'), await upload('b.txt')]
    expect(await fs.files.deleteMany([b, 999_999_999, a, theirs])).toEqual({ deleted: [b, a], not_found: [999_999_999, theirs] })
    await expect(fs.files.get(a)).rejects.toBeInstanceOf(NotFoundError)
    expect((await other.client.files.get(theirs)).file_id).toBe(theirs)
  })

  it('the same idempotencyKey replays the first answer', async () => {
    const [a, b] = [await upload('c.txt'), await upload('d.txt')]
    const idempotencyKey = `delete-many-${a}`
    const first = await fs.files.deleteMany([a, String(b)], { idempotencyKey })
    const { data, response } = await fs.files.deleteMany([a, b], { idempotencyKey }).withResponse()
    expect(first).toEqual({ deleted: [a, b], not_found: [] })
    expect(data).toEqual(first)
    expect(response.headers.get('idempotent-replayed')).toBe('true')
  })

  it('needs files:delete', async () => {
    const id = await upload('e.txt')
    const error = await client('read_only')
      .files.deleteMany([id])
      .catch((e: unknown) => e)
    expect(error).toBeInstanceOf(PermissionDeniedError)
    expect((error as PermissionDeniedError).code).toBe('insufficient_scope')
    expect((await fs.files.get(id)).file_id).toBe(id)
  })

  it('refuses no ids, too many and non-ids before any request', async () => {
    await expect(fs.files.deleteMany([])).rejects.toBeInstanceOf(ConfigurationError)
    await expect(fs.files.deleteMany([0])).rejects.toBeInstanceOf(ConfigurationError)
    await expect(fs.files.deleteMany(Array.from({ length: MAX_BULK_DELETE + 1 }, (_, i) => i + 1))).rejects.toBeInstanceOf(
      ConfigurationError,
    )
  })
})
