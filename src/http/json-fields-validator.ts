import { Ajv } from 'ajv'
import type { FastifySchema, FastifySchemaCompiler } from 'fastify'

/**
 * The validator of routes whose JSON body is a set of typed fields (links, file changes). The app's
 * own Ajv coerces types for query strings, which in a JSON body would turn `"5"` into 5 and, in a
 * union with null, `""` into null (clearing a field that was meant to be set): here nothing is
 * coerced, so a field of the wrong JSON type is refused. Params are numbers already (integer-parameters.ts).
 */
const ajv = new Ajv({ coerceTypes: false, removeAdditional: false, useDefaults: true, allErrors: false, strict: false })

export const jsonFieldsValidator: FastifySchemaCompiler<FastifySchema> = ({ schema }) => ajv.compile(schema as object)
