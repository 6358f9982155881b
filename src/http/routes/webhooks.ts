import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { WebhookDeliveryRow, WebhookRow } from '../../db/schema.js'
import { formatOptionalUtcTime, formatUtcTime } from '../../lib/utc-time.js'
import { actorOf } from '../actor.js'
import { canonicalBody } from '../canonical-body.js'
import { emptyBodyIsNoFields } from '../empty-body.js'
import { integerParameters } from '../integer-parameters.js'
import { jsonFieldsValidator } from '../json-fields-validator.js'
import {
  AcceptedResponse,
  authErrors,
  bodyErrors,
  DeleteResponse,
  ErrorBody,
  IDEMPOTENCY_KEY_HEADER,
  idempotencyErrors,
  WebhookBody,
  WebhookDeliveriesQuery,
  WebhookDeliveriesResponse,
  WebhookDeliveryParams,
  WebhookIdParams,
  WebhookListResponse,
  WebhookResponse,
  WebhookTestResponse,
} from '../schemas.js'

function presentWebhook(webhook: WebhookRow, secret?: string) {
  return {
    webhook_id: webhook.id,
    url: webhook.url,
    events: webhook.events.split(' '),
    description: webhook.description,
    enabled: webhook.enabled === 1,
    disabled_reason: webhook.disabled_reason as 'gone' | 'failing' | 'owner' | null,
    created_at: formatUtcTime(webhook.created_at),
    ...(secret !== undefined && { secret }),
  }
}

function presentDelivery(delivery: WebhookDeliveryRow & { message_key: string; event_type: string }) {
  return {
    delivery_id: Number(delivery.id),
    event_type: delivery.event_type,
    message_id: delivery.message_key,
    attempts: delivery.attempts,
    last_status: delivery.last_status,
    last_error: delivery.last_error,
    next_attempt_at: delivery.state === 'pending' ? formatOptionalUtcTime(delivery.next_attempt_at) : null,
    state: delivery.state,
    created_at: formatUtcTime(delivery.created_at),
  }
}

const DEFAULT_LIMIT = 20

/** Webhook endpoints (../shared/spec/webhooks.md): scope webhooks:manage. */
export const webhooksRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { webhooks } = app.services
  const fields = { validatorCompiler: jsonFieldsValidator }
  const config = { scope: 'webhooks:manage' as const, bodyFieldsAreParameters: true }
  const errors = { ...bodyErrors, 404: ErrorBody, ...authErrors }

  app.post(
    '/webhooks',
    {
      ...fields,
      config: { ...config, idempotency: canonicalBody },
      schema: {
        operationId: 'createWebhook',
        summary: 'Add a webhook endpoint; its secret is in this answer only',
        description:
          'With an Idempotency-Key, a retried creation answers the first one again (its secret included, kept 24 hours with the ' +
          'stored answer) instead of making a second endpoint.',
        headers: Type.Object(IDEMPOTENCY_KEY_HEADER),
        body: WebhookBody,
        response: { 201: WebhookResponse, ...errors, ...idempotencyErrors },
      },
    },
    async (request, reply) => {
      const { webhook, secret } = await webhooks.create(request.principal.account.id, request.body, actorOf(request))
      return reply
        .code(201)
        .header('Location', `/api/v1/webhooks/${webhook.id}`)
        .send({ success: true as const, webhook: presentWebhook(webhook, secret) })
    },
  )

  app.get(
    '/webhooks',
    {
      config,
      schema: {
        operationId: 'listWebhooks',
        summary: "The account's webhook endpoints",
        response: { 200: WebhookListResponse, ...errors },
      },
    },
    async (request) => ({
      success: true as const,
      webhooks: (await webhooks.list(request.principal.account.id)).map((row) => presentWebhook(row)),
    }),
  )

  app.get(
    '/webhooks/:webhook_id',
    {
      config,
      preValidation: integerParameters('params', WebhookIdParams),
      schema: {
        operationId: 'getWebhook',
        summary: 'One webhook endpoint',
        params: WebhookIdParams,
        response: { 200: WebhookResponse, ...errors },
      },
    },
    async (request) => ({
      success: true as const,
      webhook: presentWebhook(await webhooks.get(request.principal.account.id, request.params.webhook_id)),
    }),
  )

  app.patch(
    '/webhooks/:webhook_id',
    {
      ...fields,
      config,
      preValidation: [integerParameters('params', WebhookIdParams), emptyBodyIsNoFields],
      schema: {
        operationId: 'updateWebhook',
        summary: 'Change an endpoint, or turn it on or off',
        params: WebhookIdParams,
        body: WebhookBody,
        response: { 200: WebhookResponse, ...errors },
      },
    },
    async (request) => ({
      success: true as const,
      webhook: presentWebhook(
        await webhooks.update(request.principal.account.id, request.params.webhook_id, request.body, actorOf(request)),
      ),
    }),
  )

  app.delete(
    '/webhooks/:webhook_id',
    {
      config,
      preValidation: integerParameters('params', WebhookIdParams),
      schema: {
        operationId: 'deleteWebhook',
        summary: 'Delete an endpoint; its pending deliveries are dropped',
        params: WebhookIdParams,
        response: { 200: DeleteResponse, ...errors },
      },
    },
    async (request) => {
      await webhooks.delete(request.principal.account.id, request.params.webhook_id, actorOf(request))
      return { success: true as const, message: 'Webhook deleted.' }
    },
  )

  app.post(
    '/webhooks/:webhook_id/rotate-secret',
    {
      config,
      preValidation: [integerParameters('params', WebhookIdParams), emptyBodyIsNoFields],
      schema: {
        operationId: 'rotateWebhookSecret',
        summary: 'A new secret; the old one goes on signing too for 24 hours',
        params: WebhookIdParams,
        response: { 200: WebhookResponse, ...errors },
      },
    },
    async (request) => {
      const { webhook, secret } = await webhooks.rotateSecret(request.principal.account.id, request.params.webhook_id, actorOf(request))
      return { success: true as const, webhook: presentWebhook(webhook, secret) }
    },
  )

  app.post(
    '/webhooks/:webhook_id/test',
    {
      config,
      preValidation: [integerParameters('params', WebhookIdParams), emptyBodyIsNoFields],
      schema: {
        operationId: 'testWebhook',
        summary: 'Send a webhook.test message to this endpoint only',
        params: WebhookIdParams,
        response: { 202: WebhookTestResponse, ...errors },
      },
    },
    async (request, reply) => {
      const messageId = await webhooks.test(request.principal.account.id, request.params.webhook_id)
      return reply.code(202).send({ success: true as const, message_id: messageId })
    },
  )

  app.get(
    '/webhooks/:webhook_id/deliveries',
    {
      config,
      preValidation: [integerParameters('params', WebhookIdParams), integerParameters('query', WebhookDeliveriesQuery)],
      schema: {
        operationId: 'listWebhookDeliveries',
        summary: "An endpoint's deliveries, newest first, with their last attempt",
        params: WebhookIdParams,
        querystring: WebhookDeliveriesQuery,
        response: { 200: WebhookDeliveriesResponse, ...errors },
      },
    },
    async (request) => {
      const { limit = DEFAULT_LIMIT, before_id: beforeId } = request.query
      const page = await webhooks.deliveries(request.principal.account.id, request.params.webhook_id, { limit, beforeId })
      return {
        success: true as const,
        deliveries: page.deliveries.map(presentDelivery),
        pagination: { limit, next_before_id: page.nextBeforeId },
      }
    },
  )

  app.post(
    '/webhooks/:webhook_id/deliveries/:delivery_id/retry',
    {
      config,
      preValidation: [integerParameters('params', WebhookDeliveryParams), emptyBodyIsNoFields],
      schema: {
        operationId: 'retryWebhookDelivery',
        summary: 'Send one delivery again now',
        params: WebhookDeliveryParams,
        response: { 202: AcceptedResponse, ...errors },
      },
    },
    async (request, reply) => {
      await webhooks.retry(request.principal.account.id, request.params.webhook_id, request.params.delivery_id)
      return reply.code(202).send({ success: true as const })
    },
  )
}
