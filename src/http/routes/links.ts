import { actorOf } from '../actor.js'
import { canonicalBody } from '../canonical-body.js'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { emptyBodyIsNoFields } from '../empty-body.js'
import { integerParameters } from '../integer-parameters.js'
import { jsonFieldsValidator } from '../json-fields-validator.js'
import { presentLink } from '../present-link.js'
import {
  authErrors,
  bodyErrors,
  DeleteResponse,
  ErrorBody,
  FileIdParams,
  IDEMPOTENCY_KEY_HEADER,
  idempotencyErrors,
  LinkBody,
  LinkIdParams,
  LinkListResponse,
  LinkResponse,
} from '../schemas.js'

/** Links as resources (../shared/spec/links.md): under /api/v1 with a key, and the dashboard's API with a session. */
export const linksRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { links } = app.services
  const present = (view: Parameters<typeof presentLink>[0]) => presentLink(view, app.config.linkBaseUrl)
  const fields = { validatorCompiler: jsonFieldsValidator, config: { bodyFieldsAreParameters: true } }
  app.post(
    '/files/:file_id/links',
    {
      ...fields,
      config: { scope: 'links:write', ...fields.config, idempotency: canonicalBody },
      preValidation: [integerParameters('params', FileIdParams), emptyBodyIsNoFields],
      schema: {
        operationId: 'createLink',
        summary: 'Create another link to a file, with its own policy',
        description:
          'Every field is optional: a link without a policy streams on GET like the default link. `expires_in` and `expires_at` ' +
          'exclude each other. At most 100 links that are not revoked per file (403 link_limit_exceeded).',
        params: FileIdParams,
        headers: Type.Object(IDEMPOTENCY_KEY_HEADER),
        body: LinkBody,
        response: { 201: LinkResponse, ...bodyErrors, 404: ErrorBody, ...idempotencyErrors, ...authErrors },
      },
    },
    async (request, reply) => {
      const view = await links.create(request.principal.account.id, request.params.file_id, request.body, actorOf(request))
      return reply
        .code(201)
        .header('Location', `/api/v1/links/${view.link.id}`)
        .send({ success: true as const, link: present(view) })
    },
  )

  app.get(
    '/files/:file_id/links',
    {
      config: { scope: 'links:read' },
      preValidation: integerParameters('params', FileIdParams),
      schema: {
        operationId: 'listLinks',
        summary: "A file's links: the default link first, then newest first (revoked ones for 30 days)",
        params: FileIdParams,
        response: { 200: LinkListResponse, ...bodyErrors, 404: ErrorBody, ...authErrors },
      },
    },
    async (request) => {
      const views = await links.list(request.principal.account.id, request.params.file_id)
      return { success: true as const, links: views.map(present) }
    },
  )

  app.get(
    '/links/:link_id',
    {
      config: { scope: 'links:read' },
      preValidation: integerParameters('params', LinkIdParams),
      schema: {
        operationId: 'getLink',
        summary: 'Read one link',
        params: LinkIdParams,
        response: { 200: LinkResponse, ...bodyErrors, 404: ErrorBody, ...authErrors },
      },
    },
    async (request) => ({ success: true as const, link: present(await links.get(request.principal.account.id, request.params.link_id)) }),
  )

  app.patch(
    '/links/:link_id',
    {
      ...fields,
      config: { ...fields.config, scope: 'links:write' },
      preValidation: integerParameters('params', LinkIdParams),
      schema: {
        operationId: 'updateLink',
        summary: "Change a link's policy or label",
        description:
          'Any of the create fields; null clears `label`, `expires_at`, `max_downloads` or `password`. `max_downloads` cannot go ' +
          'below the current `download_count`. A revoked link can only be read (404).',
        params: LinkIdParams,
        body: LinkBody,
        response: { 200: LinkResponse, ...bodyErrors, 404: ErrorBody, ...authErrors },
      },
    },
    async (request) => ({
      success: true as const,
      link: present(await links.update(request.principal.account.id, request.params.link_id, request.body, actorOf(request))),
    }),
  )

  app.delete(
    '/links/:link_id',
    {
      config: { scope: 'links:write' },
      preValidation: integerParameters('params', LinkIdParams),
      schema: {
        operationId: 'deleteLink',
        summary: 'Revoke a link: its URL answers 404 at once (the default link cannot be deleted: 409)',
        params: LinkIdParams,
        response: { 200: DeleteResponse, ...bodyErrors, 404: ErrorBody, 409: ErrorBody, ...authErrors },
      },
    },
    async (request) => {
      await links.revoke(request.principal.account.id, request.params.link_id, actorOf(request))
      return { success: true as const, message: 'Link revoked.' }
    },
  )

  app.post(
    '/links/:link_id/rotate',
    {
      config: { scope: 'links:write' },
      preValidation: integerParameters('params', LinkIdParams),
      schema: {
        operationId: 'rotateLink',
        summary: 'Give a link a new URL: the old one answers 404 at once; counts and policy stay',
        description: "Rotating the default link changes the file's public_link.",
        params: LinkIdParams,
        response: { 200: LinkResponse, ...bodyErrors, 404: ErrorBody, ...authErrors },
      },
    },
    async (request) => ({
      success: true as const,
      link: present(await links.rotate(request.principal.account.id, request.params.link_id, actorOf(request))),
    }),
  )
}
