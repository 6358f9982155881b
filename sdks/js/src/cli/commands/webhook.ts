// fshare webhook create|list|delete|test|deliveries|retry|enable|disable|rotate-secret: the
// account's webhook endpoints and their deliveries (scope webhooks:manage).
import { deliveryIdArgument, integerOption, webhookIdArgument } from '../args.js'
import type { Command } from '../command.js'
import type { Context } from '../context.js'
import { EXIT_OK, UsageError } from '../exit-codes.js'
import { keyValues, printable, table } from '../output.js'
import type { Webhook, WebhookDelivery, WebhookWithSecret } from '../../types.js'
import { forEachId } from './each-id.js'

/** What `fshare webhook --help` says before the list of its commands. */
export const WEBHOOK_GROUP = [
  "The account's webhook endpoints: the server POSTs a signed message to each for the events it",
  'subscribes to (file.uploaded, link.downloaded, …, or * for all), and retries failed deliveries.',
  "An endpoint's secret (whsec_…) is shown only by create and rotate-secret: receivers verify the",
  'messages with it (Webhooks.verify of @fileshare/sdk). Needs a key with the webhooks:manage scope.',
].join('\n')

function status(webhook: Webhook): string {
  return webhook.enabled ? 'enabled' : `disabled${webhook.disabled_reason ? ` (${webhook.disabled_reason})` : ''}`
}

function events(webhook: Webhook): string {
  return webhook.events.map(printable).join(',')
}

/** One endpoint as key/value lines, with its secret when the answer holds one. */
function describe(webhook: Webhook | WebhookWithSecret): string {
  const pairs: [string, string][] = [
    ['webhook', String(webhook.webhook_id)],
    ['url', printable(webhook.url)],
    ['events', events(webhook)],
    ['description', webhook.description === null ? '-' : printable(webhook.description)],
    ['status', status(webhook)],
    ['created', `${webhook.created_at} UTC`],
  ]
  if ('secret' in webhook) pairs.push(['secret', webhook.secret])
  return keyValues(pairs)
}

/** The one positional a command takes. */
function single(context: Context, what: string, usage: string): string {
  const [raw, ...rest] = context.args.positionals
  if (raw === undefined || rest.length > 0) throw new UsageError(`${usage} needs exactly one ${what}`)
  return raw
}

function printWebhook(context: Context, webhook: Webhook): number {
  context.out.jsonLine(webhook)
  context.out.result(describe(webhook))
  return EXIT_OK
}

/** The endpoint with its secret, and on stderr that no command shows the secret again. */
function printSecret(context: Context, webhook: WebhookWithSecret, overlap: boolean): number {
  printWebhook(context, webhook)
  context.out.note(
    [
      'fshare: the secret above is shown only now: keep it where the receiver verifies messages;',
      overlap
        ? 'for 24 hours the old secret signs every message too.'
        : `'fshare webhook rotate-secret ${webhook.webhook_id}' makes a new one.`,
    ].join('\n'),
  )
  return EXIT_OK
}

const RECORD_JSON = '"webhook_id","url","events","description","enabled","disabled_reason","created_at"'

/** `--events a,b` or `--events '*'`: the event types, as the API takes them. */
function eventsOption(value: string | boolean | undefined): string[] {
  if (typeof value !== 'string') throw new UsageError("webhook create needs --events: event types separated by commas, or '*' for all")
  const list = value.split(',').map((event) => event.trim())
  if (list.some((event) => event === ''))
    throw new UsageError(`--events is a list of event types separated by commas, got ${JSON.stringify(value).slice(0, 60)}`)
  return list
}

export const webhookCreate: Command = {
  name: 'webhook create',
  summary: 'add an endpoint; prints its secret, once',
  usage: "webhook create URL --events A,B|'*' [--description D]",
  description: [
    'Adds a webhook endpoint at URL (an https URL that reaches a public address) for the events',
    "given (--events file.uploaded,link.downloaded, or '*' for every type) and prints it with its",
    'secret. The secret is shown only now: keep it (rotate-secret makes a new one). A URL the server',
    'refuses is exit 7 (webhook_url_not_allowed, invalid_parameter); the 21st endpoint exit 5.',
    `--json: the endpoint with its secret, one object {${RECORD_JSON},"secret"}.`,
  ].join('\n'),
  options: {
    events: { type: 'string', value: 'A,B', description: "event types separated by commas, or '*' for all (required)" },
    description: { type: 'string', value: 'D', description: 'a note for you' },
  },
  examples: [
    'fshare webhook create https://example.com/hooks/fileshare --events file.uploaded,link.downloaded --description billing',
    "fshare webhook create https://example.com/hooks --events '*' --json | jq -r .secret > webhook-secret.txt",
  ],
  async run(context) {
    const url = single(context, 'URL', 'webhook create')
    const { values } = context.args
    const list = eventsOption(values.events)
    const description = typeof values.description === 'string' ? values.description : undefined
    const webhook = await context
      .client()
      .webhooks.create({ url, events: list, ...(description === undefined ? {} : { description }), signal: context.signal })
    return printSecret(context, webhook, false)
  },
}

export const webhookList: Command = {
  name: 'webhook list',
  summary: "list the account's endpoints",
  usage: 'webhook list',
  description: [
    "Lists the account's webhook endpoints (at most 20), without their secrets. STATUS is enabled,",
    'or disabled with the reason: owner (webhook disable), gone (the endpoint answered 410) or',
    'failing (no success for 5 days).',
    `--json: one object {"webhooks":[{${RECORD_JSON}}]}.`,
  ].join('\n'),
  options: {},
  examples: ['fshare webhook list', "fshare webhook list --json | jq -r '.webhooks[] | select(.enabled | not) | .webhook_id'"],
  async run(context) {
    if (context.args.positionals.length > 0) throw new UsageError('webhook list takes no arguments')
    const webhooks = await context.client().webhooks.list({ signal: context.signal })
    context.out.jsonLine({ webhooks })
    const rows = webhooks.map((w) => [
      String(w.webhook_id),
      status(w),
      events(w),
      w.created_at,
      w.description === null ? '-' : printable(w.description),
      printable(w.url),
    ])
    if (rows.length > 0) context.out.result(table(['ID', 'STATUS', 'EVENTS', 'CREATED (UTC)', 'DESCRIPTION', 'URL'], rows, new Set([0])))
    context.out.result(`${webhooks.length} endpoint${webhooks.length === 1 ? '' : 's'}`)
    return EXIT_OK
  },
}

export const webhookDelete: Command = {
  name: 'webhook delete',
  summary: 'delete endpoints',
  usage: 'webhook delete ID...',
  description: [
    'Deletes each endpoint in turn; its pending deliveries are dropped. An ID that fails is',
    'reported and the next one is tried; the exit code is that of the first failure.',
    '--json: one line per ID: {"ok":true,"webhook_id":5} or {"ok":false,"webhook_id":5,"error":{…}}.',
  ].join('\n'),
  options: {},
  examples: ['fshare webhook delete 5', "fshare webhook list --json | jq -r '.webhooks[].webhook_id' | xargs fshare webhook delete"],
  run: (context) =>
    forEachId(
      context,
      { command: 'webhook delete', argument: 'ID', parse: webhookIdArgument, done: 'deleted webhook', field: 'webhook_id' },
      (client, id) => client.webhooks.delete(id, { signal: context.signal }),
    ),
}

export const webhookTest: Command = {
  name: 'webhook test',
  summary: 'send a webhook.test message to an endpoint',
  usage: 'webhook test ID',
  description: [
    'Sends a webhook.test event to endpoint ID only (even when it is disabled); prints the',
    "message's id, its webhook-id header. 'fshare webhook deliveries ID' shows how it went.",
    '--json: one object {"webhook_id":5,"message_id":"msg_…"}.',
  ].join('\n'),
  options: {},
  examples: ['fshare webhook test 5', 'fshare webhook test 5 --json | jq -r .message_id'],
  async run(context) {
    const id = webhookIdArgument(single(context, 'ID', 'webhook test'))
    const { message_id } = await context.client().webhooks.test(id, { signal: context.signal })
    context.out.jsonLine({ webhook_id: id, message_id })
    context.out.result(`sent a webhook.test message to webhook ${id}: message id ${printable(message_id)}`)
    return EXIT_OK
  },
}

function lastAnswer(delivery: WebhookDelivery): string {
  const parts = [
    delivery.last_status === null ? '' : String(delivery.last_status),
    delivery.last_error ? printable(delivery.last_error) : '',
  ]
  return parts.filter(Boolean).join(' ') || '-'
}

export const webhookDeliveries: Command = {
  name: 'webhook deliveries',
  summary: "list an endpoint's deliveries, newest first",
  usage: 'webhook deliveries ID [--limit N] [--before-id ID]',
  description: [
    "Lists one page of endpoint ID's deliveries (kept 30 days), newest first: STATE is pending",
    '(attempts remain), succeeded or failed; LAST the last answer (HTTP status, or why none came).',
    'The last line names the --before-id of the next page.',
    '--json: one object {"deliveries":[{"delivery_id","event_type","message_id","attempts",',
    '"last_status","last_error","next_attempt_at","state","created_at"}],"pagination":{"limit",',
    '"next_before_id"}}.',
  ].join('\n'),
  options: {
    limit: { type: 'string', value: 'N', description: 'deliveries per page, 1 to 100 (default 20)' },
    'before-id': { type: 'string', value: 'ID', description: 'the deliveries older than delivery ID' },
  },
  examples: [
    'fshare webhook deliveries 5 --limit 50',
    'fshare webhook deliveries 5 --json | jq -r \'.deliveries[] | select(.state == "failed") | .delivery_id\' | xargs -n1 fshare webhook retry 5',
  ],
  async run(context) {
    const id = webhookIdArgument(single(context, 'ID', 'webhook deliveries'))
    const limit = integerOption(context.args.values.limit, 'limit', 1, 100)
    const beforeId = integerOption(context.args.values['before-id'], 'before-id', 1)
    const list = await context.client().webhooks.deliveries(id, { limit, before_id: beforeId, signal: context.signal })
    context.out.jsonLine(list)
    const rows = list.deliveries.map((d) => [
      String(d.delivery_id),
      printable(d.event_type),
      d.state,
      String(d.attempts),
      lastAnswer(d),
      d.next_attempt_at ?? '-',
      d.created_at,
      printable(d.message_id),
    ])
    const header = ['ID', 'EVENT', 'STATE', 'ATTEMPTS', 'LAST', 'NEXT ATTEMPT (UTC)', 'CREATED (UTC)', 'MESSAGE ID']
    if (rows.length > 0) context.out.result(table(header, rows, new Set([0, 3])))
    const n = list.deliveries.length
    const count = n === 0 ? 'no deliveries' : `${n} deliver${n === 1 ? 'y' : 'ies'}`
    const next = list.pagination.next_before_id
    context.out.result(next === null ? count : `${count}; older: --before-id ${next}`)
    return EXIT_OK
  },
}

export const webhookRetry: Command = {
  name: 'webhook retry',
  summary: 'have the server attempt a delivery again',
  usage: 'webhook retry ID DELIVERY_ID',
  description: [
    'Has the server attempt delivery DELIVERY_ID of endpoint ID again, as the same message (the',
    'same webhook-id, which receivers deduplicate by). The attempt is queued: see deliveries.',
    '--json: one object {"webhook_id":5,"delivery_id":12}.',
  ].join('\n'),
  options: {},
  examples: ['fshare webhook retry 5 12'],
  async run(context) {
    const [rawId, rawDelivery, ...rest] = context.args.positionals
    if (rawId === undefined || rawDelivery === undefined || rest.length > 0) {
      throw new UsageError('webhook retry needs exactly one ID and one DELIVERY_ID')
    }
    const id = webhookIdArgument(rawId)
    const deliveryId = deliveryIdArgument(rawDelivery)
    await context.client().webhooks.retryDelivery(id, deliveryId, { signal: context.signal })
    context.out.jsonLine({ webhook_id: id, delivery_id: deliveryId })
    context.out.result(`queued delivery ${deliveryId} of webhook ${id} again`)
    return EXIT_OK
  },
}

function toggle(enabled: boolean): Command {
  const word = enabled ? 'enable' : 'disable'
  return {
    name: `webhook ${word}`,
    summary: enabled ? 'turn an endpoint on again, whatever turned it off' : 'turn an endpoint off (no messages until enabled)',
    usage: `webhook ${word} ID`,
    description: [
      enabled
        ? 'Enables endpoint ID again, whatever disabled it (you, a 410 answer, 5 days of failures),'
        : 'Disables endpoint ID: no messages are sent to it until it is enabled again (its status',
      enabled ? 'and prints it.' : 'says disabled (owner)), and prints it.',
      `--json: the endpoint, one object {${RECORD_JSON}}.`,
    ].join('\n'),
    options: {},
    examples: [`fshare webhook ${word} 5`],
    async run(context) {
      const id = webhookIdArgument(single(context, 'ID', `webhook ${word}`))
      return printWebhook(context, await context.client().webhooks.update(id, { enabled, signal: context.signal }))
    },
  }
}

export const webhookEnable = toggle(true)
export const webhookDisable = toggle(false)

export const webhookRotateSecret: Command = {
  name: 'webhook rotate-secret',
  summary: 'give an endpoint a new secret; prints it, once',
  usage: 'webhook rotate-secret ID',
  description: [
    'Gives endpoint ID a new secret and prints it: it is shown only now. For 24 hours every',
    'message is signed with both the old and the new secret, so receivers keep verifying while',
    'you deploy the new one.',
    `--json: the endpoint with its new secret, one object {${RECORD_JSON},"secret"}.`,
  ].join('\n'),
  options: {},
  examples: ['fshare webhook rotate-secret 5', 'fshare webhook rotate-secret 5 --json | jq -r .secret > webhook-secret.txt'],
  async run(context) {
    const id = webhookIdArgument(single(context, 'ID', 'webhook rotate-secret'))
    return printSecret(context, await context.client().webhooks.rotateSecret(id, { signal: context.signal }), true)
  },
}

export const WEBHOOK_COMMANDS: readonly Command[] = [
  webhookCreate,
  webhookList,
  webhookDelete,
  webhookTest,
  webhookDeliveries,
  webhookRetry,
  webhookEnable,
  webhookDisable,
  webhookRotateSecret,
]
