import type { FastifyRequest } from 'fastify'
import type { TObject } from 'typebox'
import { parseInteger } from '../lib/integers.js'

interface IntegerProperty {
  type?: unknown
  minimum?: number
  maximum?: number
}

/**
 * A preValidation hook that reads the integer properties of `schema` from the query or the path
 * with parseInteger (bounds from the schema itself) and hands the numbers on to validation. Ajv's
 * coercion would read '1e1', '0x10', '+5', ' 5' or '5.0' as integers, and 400 nines as Infinity;
 * its messages name framework internals (`querystring/limit must be <= 100`). Runs after the
 * authentication checks, as the documented order of checks wants.
 */
export function integerParameters(source: 'params' | 'query', schema: TObject) {
  const integers = Object.entries(schema.properties as Record<string, IntegerProperty>).filter(
    ([, property]) => property.type === 'integer',
  )
  return async (request: FastifyRequest) => {
    const values = request[source] as Record<string, unknown>
    for (const [name, { minimum = 0, maximum = Number.MAX_SAFE_INTEGER }] of integers) {
      const value = values[name]
      if (value === undefined) continue
      values[name] = parseInteger(name, Array.isArray(value) ? value.join(',') : String(value), minimum, maximum)
    }
  }
}
