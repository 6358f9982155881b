import swagger from '@fastify/swagger'
import fp from 'fastify-plugin'

/** The OpenAPI 3.1 document, generated from the route schemas. */
export default fp(
  async (app) => {
    await app.register(swagger, {
      openapi: {
        openapi: '3.1.0',
        info: {
          title: 'Fileshare API',
          version: '1.0.0',
          description: 'Upload, list, inspect and delete files; read account statistics. See docs/api.md.',
        },
        servers: [{ url: app.config.publicUrl }],
        components: {
          securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API key: fsk_…' } },
        },
      },
    })
  },
  { name: 'openapi', dependencies: ['backends'] },
)
