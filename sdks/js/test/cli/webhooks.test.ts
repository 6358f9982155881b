// fshare webhook create|list|test|deliveries|retry|disable|enable|rotate-secret|delete, run as a
// process against the launcher's server (which allows http and 127.0.0.1 endpoints for tests), with
// a receiver in this process: the secret shown once and verifying the messages, --json shapes,
// exit codes, and the API key in no output.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { WEBHOOK_DELIVERY_FIELDS, WEBHOOK_FIELDS, Webhooks } from '../../src/index.js'
import { fshare, jsonLines, outputs } from '../helpers/cli.js'
import { client, server } from '../helpers/env.js'
import { startWebhookReceiver, type Received } from '../helpers/webhook-receiver.js'

let receiverUrl: string
let received: Received[]
let closeReceiver: () => Promise<void>
const made: number[] = []

beforeAll(async () => {
  const receiver = await startWebhookReceiver()
  receiverUrl = receiver.url
  received = receiver.received
  closeReceiver = receiver.close
})

afterAll(async () => {
  const fileshare = client('pro')
  for (const id of made) await fileshare.webhooks.delete(id).catch(() => undefined)
  await closeReceiver?.()
})

/** The messages at `path` whose `webhook-id` is `id`, once there are `count` of them. */
async function messages(path: string, id: string, count = 1, timeoutMs = 30_000): Promise<Received[]> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const found = received.filter((m) => m.path === path && m.headers['webhook-id'] === id)
    if (found.length >= count) return found
    if (Date.now() > deadline) throw new Error(`${found.length} of ${count} messages ${id} at ${path} within ${timeoutMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/** The deliveries of an endpoint (--json), once `done` holds for them. */
async function deliveriesWhen(id: number, done: (list: Record<string, any>[]) => boolean): Promise<Record<string, any>[]> {
  const deadline = Date.now() + 30_000
  for (;;) {
    const run = await fshare(['webhook', 'deliveries', String(id), '--json'])
    expect(run.code).toBe(0)
    const list = (JSON.parse(run.stdout) as { deliveries: Record<string, any>[] }).deliveries
    if (done(list) || Date.now() > deadline) return list
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

const readOnly = { env: { FILESHARE_API_KEY: '' } }
beforeAll(() => {
  readOnly.env.FILESHARE_API_KEY = server().keys.read_only
})

describe.sequential('fshare webhook', () => {
  let id: number
  let secret: string

  it('create prints the endpoint and its secret, marked as shown only now', async () => {
    const run = await fshare([
      'webhook',
      'create',
      `${receiverUrl}/cli`,
      '--events',
      'webhook.test, file.uploaded',
      '--description',
      'sdk-js cli',
    ])
    expect(run.code).toBe(0)
    expect(run.stdout).toMatch(/^webhook +(\d+)\nurl +http:\/\/127\.0\.0\.1:\d+\/cli\nevents +file\.uploaded,webhook\.test\n/)
    expect(run.stdout).toMatch(
      /^description +sdk-js cli\nstatus +enabled\ncreated +\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\nsecret +whsec_\S+\n$/m,
    )
    expect(run.stderr).toMatch(/the secret above is shown only now/)
    expect(run.stderr).toContain(`'fshare webhook rotate-secret `)
    id = Number(/^webhook +(\d+)$/m.exec(run.stdout)![1])
    made.push(id)
    secret = /^secret +(\S+)$/m.exec(run.stdout)![1]!
  })

  it("create --json: one object, the API's endpoint with its secret; nothing on stderr", async () => {
    const run = await fshare(['webhook', 'create', `${receiverUrl}/all`, '--events', '*', '--json'])
    expect(run).toMatchObject({ code: 0, stderr: '' })
    const webhook = JSON.parse(run.stdout) as Record<string, any>
    made.push(webhook.webhook_id as number)
    expect(Object.keys(webhook).sort()).toEqual([...WEBHOOK_FIELDS, 'secret'].sort())
    expect(webhook).toMatchObject({ url: `${receiverUrl}/all`, events: ['*'], description: null, enabled: true, disabled_reason: null })
    expect(webhook.secret).toMatch(/^whsec_/)
  })

  it('list shows the endpoints without secrets; --json is {"webhooks":[…]}', async () => {
    const [human, json] = await Promise.all([fshare(['webhook', 'list']), fshare(['webhook', 'list', '--json'])])
    expect(human).toMatchObject({ code: 0, stderr: '' })
    expect(human.stdout).toMatch(/^ *ID {2}STATUS +EVENTS +CREATED \(UTC\) +DESCRIPTION +URL$/m)
    expect(human.stdout).toMatch(
      new RegExp(`^ *${id} {2}enabled +file\\.uploaded,webhook\\.test +\\S+ \\S+ +sdk-js cli +${receiverUrl}/cli$`, 'm'),
    )
    expect(human.stdout).toMatch(/^\d+ endpoints?\n$/m)
    expect(human.stdout).not.toContain('whsec_')
    const { webhooks } = JSON.parse(json.stdout) as { webhooks: Record<string, any>[] }
    const ours = webhooks.find((w) => w.webhook_id === id)!
    expect(Object.keys(ours).sort()).toEqual([...WEBHOOK_FIELDS].sort())
  })

  let messageId: string

  it('test sends a webhook.test message that verifies with the secret create printed', async () => {
    const run = await fshare(['webhook', 'test', String(id)])
    expect(run).toMatchObject({ code: 0, stderr: '' })
    messageId = /^sent a webhook\.test message to webhook \d+: message id (\S+)\n$/.exec(run.stdout)![1]!
    const [message] = await messages('/cli', messageId)
    const event = Webhooks.verify(message!.body, message!.headers, secret)
    expect(event).toMatchObject({ type: 'webhook.test', data: { webhook_id: id } })
    const json = await fshare(['webhook', 'test', String(id), '--json'])
    expect(JSON.parse(json.stdout)).toEqual({ webhook_id: id, message_id: expect.stringMatching(/\S/) })
  })

  let deliveryId: number

  it('deliveries lists them, newest first, as a table or one object', async () => {
    const list = await deliveriesWhen(id, (l) => l.some((d) => d.message_id === messageId && d.state === 'succeeded'))
    const ours = list.find((d) => d.message_id === messageId)!
    expect(Object.keys(ours).sort()).toEqual([...WEBHOOK_DELIVERY_FIELDS].sort())
    expect(ours).toMatchObject({ event_type: 'webhook.test', state: 'succeeded', last_status: 204 })
    deliveryId = ours.delivery_id as number
    const human = await fshare(['webhook', 'deliveries', String(id), '--limit', '1'])
    expect(human).toMatchObject({ code: 0, stderr: '' })
    const lines = human.stdout.trimEnd().split('\n')
    expect(lines[0]).toMatch(/^ *ID {2}EVENT +STATE +ATTEMPTS +LAST +NEXT ATTEMPT \(UTC\) +CREATED \(UTC\) +MESSAGE ID$/)
    expect(lines[1]).toMatch(/^ *\d+ {2}webhook\.test +succeeded +1 {2}204 +- +\S+ \S+ {2}\S+$/)
    expect(lines[2]).toMatch(/^1 delivery; older: --before-id \d+$/)
  })

  it('retry sends the same message again', async () => {
    const run = await fshare(['webhook', 'retry', String(id), String(deliveryId)])
    expect(run).toMatchObject({ code: 0, stderr: '' })
    expect(run.stdout).toBe(`queued delivery ${deliveryId} of webhook ${id} again\n`)
    const again = await messages('/cli', messageId, 2)
    expect(again).toHaveLength(2)
    const json = await fshare(['webhook', 'retry', String(id), String(deliveryId), '--json'])
    expect(JSON.parse(json.stdout)).toEqual({ webhook_id: id, delivery_id: deliveryId })
  })

  it('disable and enable turn it off and on, printing the endpoint', async () => {
    const off = await fshare(['webhook', 'disable', String(id)])
    expect(off).toMatchObject({ code: 0, stderr: '' })
    expect(off.stdout).toMatch(/^status +disabled \(owner\)$/m)
    expect(off.stdout).not.toMatch(/^secret/m)
    const on = await fshare(['webhook', 'enable', String(id), '--json'])
    expect(on).toMatchObject({ code: 0, stderr: '' })
    expect(JSON.parse(on.stdout)).toMatchObject({ webhook_id: id, enabled: true, disabled_reason: null })
  })

  it('rotate-secret prints a new secret, marked, and says the old one signs for 24 hours', async () => {
    const run = await fshare(['webhook', 'rotate-secret', String(id)])
    expect(run.code).toBe(0)
    const rotated = /^secret +(\S+)$/m.exec(run.stdout)![1]!
    expect(rotated).toMatch(/^whsec_/)
    expect(rotated).not.toBe(secret)
    expect(run.stderr).toMatch(/shown only now[^]*for 24 hours the old secret signs every message too/)
    const test = JSON.parse((await fshare(['webhook', 'test', String(id), '--json'])).stdout) as { message_id: string }
    const [message] = await messages('/cli', test.message_id)
    expect(Webhooks.verify(message!.body, message!.headers, rotated)).toMatchObject({ type: 'webhook.test' })
    expect(Webhooks.verify(message!.body, message!.headers, secret)).toMatchObject({ type: 'webhook.test' })
  })

  it('delete removes it (exit 6 the second time, a line per ID with --json)', async () => {
    const run = await fshare(['webhook', 'delete', String(id)])
    expect(run).toMatchObject({ code: 0, stdout: `deleted webhook ${id}\n`, stderr: '' })
    const again = await fshare(['webhook', 'delete', String(id), '--json'])
    expect(again.code).toBe(6)
    expect(jsonLines(again.stdout)).toEqual([
      { ok: false, webhook_id: id, error: expect.objectContaining({ type: 'NotFoundError', exit_code: 6, status: 404 }) },
    ])
    expect(again.stderr).toMatch(new RegExp(`^fshare: webhook delete ${id}: NotFoundError: 404 `))
  })
})

describe('fshare webhook refusals', () => {
  it.each([
    ['not a URL', 'not a url'],
    ['a URL with credentials', 'https://user:secret@example.com/hook'],
    ['an ftp URL', 'ftp://example.com/hook'],
  ])('create with %s: exit 7, BadRequestError', async (_what, url) => {
    const [human, json] = await Promise.all([
      fshare(['webhook', 'create', url, '--events', '*']),
      fshare(['webhook', 'create', url, '--events', '*', '--json']),
    ])
    expect(human).toMatchObject({ code: 7, stdout: '' })
    expect(human.stderr).toMatch(/^fshare: BadRequestError: 400 (invalid_parameter|webhook_url_not_allowed): /)
    expect(json.code).toBe(7)
    expect(JSON.parse(json.stdout)).toMatchObject({ error: { type: 'BadRequestError', exit_code: 7, status: 400 } })
  })

  it('an event type the server does not know: exit 7', async () => {
    const run = await fshare(['webhook', 'create', `${receiverUrl}/x`, '--events', 'file.frobbed'])
    expect(run).toMatchObject({ code: 7, stdout: '' })
    expect(run.stderr).toMatch(/BadRequestError: 400 invalid_parameter: .*events/)
  })

  it('a key without webhooks:manage is exit 4', async () => {
    const [list, create] = await Promise.all([
      fshare(['webhook', 'list'], readOnly),
      fshare(['webhook', 'create', `${receiverUrl}/x`, '--events', '*', '--json'], readOnly),
    ])
    expect(list).toMatchObject({ code: 4, stdout: '' })
    expect(list.stderr).toMatch(/^fshare: PermissionDeniedError: 403 insufficient_scope: .*webhooks:manage/)
    expect(JSON.parse(create.stdout)).toMatchObject({ error: { code: 'insufficient_scope', exit_code: 4 } })
  })

  it.each([
    [['webhook', 'create', 'https://example.com/hook'], /webhook create needs --events/],
    [['webhook', 'create', 'https://example.com/hook', '--events', 'a,,b'], /--events is a list of event types/],
    [['webhook', 'create', '--events', '*'], /webhook create needs exactly one URL/],
    [['webhook', 'test'], /webhook test needs exactly one ID/],
    [['webhook', 'delete'], /webhook delete needs at least one ID/],
    [['webhook', 'enable', 'x'], /a webhook ID is a positive integer/],
    [['webhook', 'retry', '5'], /webhook retry needs exactly one ID and one DELIVERY_ID/],
    [['webhook', 'retry', '5', '0'], /a delivery ID is a positive integer/],
    [['webhook', 'deliveries', '5', '--limit', '101'], /--limit must be an integer from 1 to 100/],
    [['webhook', 'frob'], /unknown command "webhook frob"\nRun 'fshare webhook --help'/],
  ])('usage error for %j: exit 2, nothing on stdout', async (args, message) => {
    const run = await fshare(args)
    expect(run).toMatchObject({ code: 2, stdout: '' })
    expect(run.stderr).toMatch(message)
  })

  it('webhook --help lists the commands of the group; the main help lists key, audit and webhook', async () => {
    const [group, main] = await Promise.all([fshare(['webhook', '--help']), fshare(['--help'])])
    expect(group).toMatchObject({ code: 0, stderr: '' })
    for (const command of ['create', 'list', 'delete', 'test', 'deliveries', 'retry', 'enable', 'disable', 'rotate-secret']) {
      expect(group.stdout).toContain(`  webhook ${command} `)
      expect(main.stdout).toContain(`  webhook ${command} `)
    }
    expect(main.stdout).toMatch(/^ {2}key +show the API key in use/m)
    expect(main.stdout).toMatch(/^ {2}audit \[--action A\]/m)
  })

  it('never prints the API key', () => {
    for (const output of outputs) for (const key of Object.values(server().keys)) expect(output).not.toContain(key)
  })
})
