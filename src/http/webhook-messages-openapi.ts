import type { OpenAPIV3_1 as OpenApi } from 'openapi-types'
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../services/audit.js'

/**
 * The messages Fileshare sends, as the `webhooks` of the OpenAPI 3.1 document (../shared/spec/webhooks.md):
 * one entry per event type, each a POST to the endpoint's URL with the Standard Webhooks headers.
 */
type Schema = Record<string, unknown>

const REQUEST_COUNTS = {
  request_id: { type: 'integer' },
  label: { type: 'string' },
  files_received: { type: 'integer' },
  bytes_received: { type: 'integer' },
}

const DATA: Record<WebhookEventType, { summary: string; data: Schema }> = {
  'file.uploaded': {
    summary: 'A file was stored (multipart, resumable, or by a guest of an upload request).',
    data: { $ref: '#/components/schemas/File' },
  },
  'file.deleted': {
    summary: 'A file was deleted by its owner or an operator, or expired.',
    data: {
      type: 'object',
      required: ['file_id', 'filename', 'reason'],
      properties: {
        file_id: { type: 'integer' },
        filename: { type: 'string' },
        reason: { type: 'string', enum: ['owner', 'expired', 'operator', 'infected'] },
      },
    },
  },
  'link.created': { summary: 'A link was created.', data: { $ref: '#/components/schemas/Link' } },
  'link.updated': { summary: "A link's policy or label changed.", data: { $ref: '#/components/schemas/Link' } },
  'link.revoked': { summary: 'A link was revoked.', data: { $ref: '#/components/schemas/Link' } },
  'link.exhausted': { summary: 'A link with a download limit gave its last download.', data: { $ref: '#/components/schemas/Link' } },
  'link.downloaded': {
    summary: 'A link with a policy granted a download (once per download, never per range).',
    data: {
      type: 'object',
      required: ['link_id', 'file_id', 'downloads_left'],
      properties: { link_id: { type: 'integer' }, file_id: { type: 'integer' }, downloads_left: { type: ['integer', 'null'] } },
    },
  },
  'upload.expired': {
    summary: 'A resumable upload expired unfinished; its bytes are gone.',
    data: {
      type: 'object',
      required: ['upload_id', 'filename', 'offset', 'length'],
      properties: {
        upload_id: { type: 'string' },
        filename: { type: 'string' },
        offset: { type: 'integer' },
        length: { type: ['integer', 'null'] },
      },
    },
  },
  'upload_request.file_received': {
    summary: "A guest's file arrived through an upload request (a file.uploaded message is sent for it too).",
    data: {
      type: 'object',
      required: ['request_id', 'label', 'files_received', 'bytes_received', 'file'],
      properties: { ...REQUEST_COUNTS, file: { $ref: '#/components/schemas/File' } },
    },
  },
  'upload_request.full': {
    summary: 'An upload request received its max_files or max_total_size: it takes no more files.',
    data: { type: 'object', required: ['request_id', 'label', 'files_received', 'bytes_received'], properties: REQUEST_COUNTS },
  },
  'webhook.test': {
    summary: 'The test call (POST /webhooks/{webhook_id}/test), to that endpoint only.',
    data: { type: 'object', required: ['webhook_id'], properties: { webhook_id: { type: 'integer' } } },
  },
}

const header = (name: string, description: string): OpenApi.ParameterObject => ({
  name,
  in: 'header',
  required: true,
  description,
  schema: { type: 'string' },
})

const HEADERS = [
  header('webhook-id', 'msg_…: the same on every attempt of one message; deduplicate by it.'),
  header('webhook-timestamp', 'Unix seconds of this attempt; refuse messages more than 5 minutes off.'),
  header(
    'webhook-signature',
    'v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>" keyed with the base64-decoded secret after whsec_>; ' +
      'several, space-separated, during a secret rotation.',
  ),
]

export function webhookMessages(): NonNullable<OpenApi.Document['webhooks']> {
  return Object.fromEntries(
    WEBHOOK_EVENT_TYPES.map((type) => [
      type,
      {
        post: {
          operationId: `webhook_${type.replace('.', '_')}`,
          summary: DATA[type].summary,
          tags: ['webhooks'],
          // Not a call to the API: the receiver checks the signature (webhook-signature) instead.
          security: [],
          parameters: HEADERS,
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['type', 'timestamp', 'data'],
                  properties: {
                    type: { type: 'string', const: type },
                    timestamp: { type: 'string', format: 'date-time', description: 'When the change happened.' },
                    data: DATA[type].data,
                  },
                },
              },
            },
          },
          responses: {
            '2XX': {
              description: 'Received. Anything else (or no answer within 15 s) is retried on the schedule; 410 disables the endpoint.',
            },
          },
        },
      },
    ]),
  ) as NonNullable<OpenApi.Document['webhooks']>
}
