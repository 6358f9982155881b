import type { FastifyReply } from 'fastify'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { FilePreviewService, type PreviewType } from '../../services/file-previews.js'
import { integerParameters } from '../integer-parameters.js'
import { FileIdParams } from '../schemas.js'

/**
 * What a preview's own document may do if it is opened by itself (a new tab, "Open image"): nothing.
 * `sandbox` gives it an opaque origin without scripts, forms or popups; an image needs nothing more
 * to show, so it may load nothing either. The PDF viewer needs its own resources (docs/security.md).
 */
const PREVIEW_POLICY: Record<PreviewType, string> = {
  'image/png': "sandbox; default-src 'none'",
  'image/jpeg': "sandbox; default-src 'none'",
  'image/gif': "sandbox; default-src 'none'",
  'image/webp': "sandbox; default-src 'none'",
  'application/pdf': 'sandbox',
}

/**
 * A holder's file shown in the dashboard (GET /dashboard/api/files/{id}/preview, with the
 * session): the stored bytes, only when they really are a PNG, JPEG, GIF, WebP or PDF file, typed
 * from those bytes, inline and sandboxed; anything else 404. Not a download: nothing is counted.
 */
export const filePreviewRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { files, downloads, scanPolicy } = app.services
  const previews = new FilePreviewService(files, downloads, scanPolicy)

  app.route({
    method: ['GET', 'HEAD'],
    url: '/files/:file_id/preview',
    // HEAD is this handler's own: Fastify's would read the whole file to count its length.
    exposeHeadRoute: false,
    preValidation: integerParameters('params', FileIdParams),
    schema: { params: FileIdParams },
    handler: async (request, reply) => {
      const preview = await previews.find(request.principal.account.id, request.params.file_id)
      reply.headers({
        // From the bytes, never the uploader's claim; nosniff keeps the browser to it.
        'Content-Type': preview.type,
        'X-Content-Type-Options': 'nosniff',
        'Content-Security-Policy': PREVIEW_POLICY[preview.type],
        'Content-Disposition': 'inline',
        'Content-Length': String(preview.size),
        // The holder's own bytes behind a session: kept by no cache, shared by none.
        'Cache-Control': 'private, no-store',
      })
      if (request.method === 'HEAD') return reply.send()
      const body = await preview.open()
      // The folder store reuses its read buffers once the response has written them (fs-blob-store.ts).
      ;(body as { drainsInto?: (sink: FastifyReply['raw']) => void }).drainsInto?.(reply.raw)
      return reply.send(body)
    },
  })
}
