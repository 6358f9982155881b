import fs from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import openapiTS, { astToString } from 'openapi-typescript'
import ts from 'typescript'

/**
 * TypeScript types for a generated client (openapi-typescript, used with openapi-fetch), made from
 * the service's OpenAPI document. Binary strings become Blob, so an upload takes a file.
 * Run `npm run openapi:types` to rewrite the checked-in copy; a test fails when it is stale.
 */
export const CLIENT_TYPES_FILE = fileURLToPath(new URL('./generated/fileshare-api.d.ts', import.meta.url))

const BLOB = ts.factory.createTypeReferenceNode(ts.factory.createIdentifier('Blob'))

export async function clientTypes(document: object): Promise<string> {
  const ast = await openapiTS(document as Parameters<typeof openapiTS>[0], {
    transform: (schema) => (schema.format === 'binary' ? BLOB : undefined),
  })
  return `// Generated from GET /api/v1/openapi.json by test/openapi/client-types.ts: do not edit.\n${astToString(ast)}`
}

// `npm run openapi:types`: builds the app as the tests do and writes the types.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { startTestApp } = await import('../helpers/test-app.js')
  const t = await startTestApp()
  try {
    await fs.writeFile(CLIENT_TYPES_FILE, await clientTypes(t.app.swagger()))
    console.log(`wrote ${CLIENT_TYPES_FILE}`)
  } finally {
    await t.close()
  }
}
