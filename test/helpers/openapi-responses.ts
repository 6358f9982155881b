import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'

/**
 * Checks answers against the service's own OpenAPI document: the status must be one the operation
 * documents, and a JSON body must match the documented schema. The contract suite runs every
 * fetch through this (validate-responses.setup.ts), so the document cannot drift from what the
 * service really answers on either stack.
 */
interface Operation {
  responses: Record<string, { content?: Record<string, { schema: unknown }> }>
}
interface Document {
  paths: Record<string, Record<string, Operation>>
}

interface LoadedDocument {
  document: Document
  ajv: Ajv2020
  routes: Array<{ pattern: RegExp; path: string }>
  validators: Map<string, ValidateFunction>
}

const documents = new Map<string, Promise<LoadedDocument | undefined>>()
/**
 * Test apps differ by origin but mostly serve the same document: one Ajv and one set of compiled
 * validators per distinct document text, not per app (checking every answer cost the embedded
 * contract suite about 3 s of CPU with validators compiled per app, 1 s with them shared).
 */
const compiled = new Map<string, LoadedDocument>()

async function load(origin: string, fetchOriginal: typeof fetch): Promise<LoadedDocument | undefined> {
  const response = await fetchOriginal(`${origin}/api/v1/openapi.json`).catch(() => undefined)
  if (!response || response.status !== 200) return undefined
  const text = await response.text()
  let loaded = compiled.get(text)
  if (!loaded) {
    loaded = compile(JSON.parse(text) as Document)
    compiled.set(text, loaded)
  }
  return loaded
}

function compile(document: Document): LoadedDocument {
  // The document as one schema resource, so that "#/components/schemas/File" resolves inside it.
  const ajv = new Ajv2020({ strict: false, allErrors: true })
  addFormats.default(ajv)
  ajv.addFormat('binary', true)
  ajv.addSchema(document as object, 'openapi')
  const routes = Object.keys(document.paths).map((path) => ({
    path,
    pattern: new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/\\\{[^}]+\\\}/g, '[^/]+')}$`),
  }))
  return { document, ajv, routes, validators: new Map() }
}

const pointer = (...parts: string[]) => parts.map((part) => part.replace(/~/g, '~0').replace(/\//g, '~1')).join('/')

/**
 * Problems of one answer: empty when it is documented. Answers outside the document (the dashboard,
 * unknown routes) pass. Reads the body of a JSON answer: pass a clone.
 */
export async function undocumented(method: string, url: string, response: Response, fetchOriginal: typeof fetch): Promise<string[]> {
  const { origin, pathname } = new URL(url)
  if (!documents.has(origin)) documents.set(origin, load(origin, fetchOriginal))
  const loaded = await documents.get(origin)
  if (!loaded) return []
  const route = loaded.routes.find((candidate) => candidate.pattern.test(pathname))
  const operation = route && loaded.document.paths[route.path]![method.toLowerCase()]
  // Paths or methods the API does not have answer 404 (checked by the contract tests themselves).
  if (!route || !operation) return []
  const what = `${method} ${pathname} ${response.status}`
  const documented = operation.responses[String(response.status)]
  if (!documented) return [`${what}: status not documented (documented: ${Object.keys(operation.responses).join(', ')})`]
  const type = response.headers.get('content-type') ?? ''
  if (!type.startsWith('application/json') || method === 'HEAD' || !documented.content?.['application/json']) return []
  const key = pointer(route.path, method.toLowerCase(), 'responses', String(response.status), 'content', 'application/json', 'schema')
  let validate = loaded.validators.get(key)
  if (!validate) {
    validate = loaded.ajv.compile({ $ref: `openapi#/paths/${key}` })
    loaded.validators.set(key, validate)
  }
  const body: unknown = await response.json().catch(() => undefined)
  if (validate(body)) return []
  return [`${what}: body does not match the document: ${loaded.ajv.errorsText(validate.errors)}`]
}
