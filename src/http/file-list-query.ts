import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { InvalidParameterError } from '../errors.js'
import { shownValue } from '../lib/integers.js'
import {
  asciiLowerCase,
  FILE_SORTS,
  FILE_STATES,
  NEWEST_FIRST,
  SORT_ORDERS,
  type FileListing,
  type FileSort,
  type FileState,
  type SortOrder,
} from '../services/files.js'
import { integerParameters } from './integer-parameters.js'
import { ListQuery } from './schemas.js'

/** The longest search, in characters (code points): a filename holds at most 255 bytes. */
export const SEARCH_MAX_LENGTH = 255

/** The most values `type` and `state` each take: a listing is one query, its filters kept to a readable size. */
export const FILTER_MAX_VALUES = 20

/**
 * A media type's top-level name, or a type/subtype: RFC 6838 restricted-name tokens (4.2), up to
 * 127 characters each, without parameters (stored content types have none, files.content_type).
 */
const RESTRICTED_NAME = '[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}'
const MEDIA_TYPE = new RegExp(`^${RESTRICTED_NAME}(/${RESTRICTED_NAME})?$`)

/** A character no filename holds (sanitizeFilename drops them), and that PostgreSQL's text cannot take (NUL). */
const CONTROL = /\p{Cc}/u

/** GET /files's query: paging, and the search and order of the listing (docs/api.md, GET /files). */
export const FileListQuery = Type.Object(
  {
    page: ListQuery.properties.page,
    limit: ListQuery.properties.limit,
    before_id: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: Number.MAX_SAFE_INTEGER,
        description:
          'Stable paging (pagination.next_before_id): the files past this file_id in the order asked for, lower ids with ' +
          'order=desc, higher with order=asc. Only with sort=upload_date, and not with `page`.',
      }),
    ),
    q: Type.Optional(
      Type.String({
        maxLength: SEARCH_MAX_LENGTH,
        description:
          'Only files whose filename contains this text, up to 255 characters: A to Z match either case, every other ' +
          'character (non-ASCII letters, %, _ and \\ included) only itself. Empty: every file.',
      }),
    ),
    type: Type.Optional(
      Type.Array(Type.String({ pattern: MEDIA_TYPE.source }), {
        maxItems: FILTER_MAX_VALUES,
        description:
          'Only files of these content types (any of them when repeated: type=application/pdf&type=text): a top-level ' +
          'type (image: image/png, image/jpeg, ...) or a full type/subtype, matched exactly; A to Z in either case.',
      }),
    ),
    state: Type.Optional(
      Type.Array(Type.Union(FILE_STATES.map((state) => Type.Literal(state))), {
        maxItems: FILTER_MAX_VALUES,
        description:
          'Only files in these states (any of them when repeated): expiring (the file has an expiry), expired_links (one of ' +
          'its links is past its expiry or download limit, revoked links aside), from_upload_request (came in through an upload request).',
      }),
    ),
    sort: Type.Optional(
      Type.Union(
        FILE_SORTS.map((sort) => Type.Literal(sort)),
        {
          default: NEWEST_FIRST.sort,
          description: 'upload_date (default), filename (A to Z folded, then by code point), size or download_count; ties by file_id.',
        },
      ),
    ),
    order: Type.Optional(
      Type.Union(
        SORT_ORDERS.map((order) => Type.Literal(order)),
        { default: NEWEST_FIRST.order },
      ),
    ),
  },
  { additionalProperties: true },
)

function oneOf(values: readonly string[]): string {
  return values.length === 2 ? `${values[0]} or ${values[1]}` : values.join(', ')
}

/** A text parameter as given once; a repeated one is refused, as a repeated integer is. */
function single(name: string, value: unknown): string | undefined {
  if (value === undefined) return undefined
  if (Array.isArray(value)) throw new InvalidParameterError(`${name} must be given once, got ${value.length} values.`)
  return String(value)
}

function choice<T extends string>(name: string, value: unknown, allowed: readonly T[]): T | undefined {
  const given = single(name, value)
  if (given === undefined) return undefined
  if (!(allowed as readonly string[]).includes(given)) {
    throw new InvalidParameterError(`${name} must be ${allowed.length === 2 ? '' : 'one of '}${oneOf(allowed)}, got ${shownValue(given)}.`)
  }
  return given as T
}

/** A parameter that may be repeated (any of its values), as a list; undefined when absent. */
function repeatable(name: string, value: unknown): string[] | undefined {
  if (value === undefined) return undefined
  const values = (Array.isArray(value) ? value : [value]).map(String)
  if (values.length > FILTER_MAX_VALUES) {
    throw new InvalidParameterError(`${name} must be given at most ${FILTER_MAX_VALUES} times, got ${values.length}.`)
  }
  return values
}

/** The media types asked for, A to Z lower-cased as content types are stored, each once. */
function mediaTypes(value: unknown): string[] | undefined {
  const given = repeatable('type', value)
  if (given === undefined) return undefined
  for (const type of given) {
    if (!MEDIA_TYPE.test(type)) {
      throw new InvalidParameterError(`type must be a media type (image) or type/subtype (application/pdf), got ${shownValue(type)}.`)
    }
  }
  return [...new Set(given.map(asciiLowerCase))]
}

function states(value: unknown): FileState[] | undefined {
  const given = repeatable('state', value)
  if (given === undefined) return undefined
  for (const state of given) {
    if (!(FILE_STATES as readonly string[]).includes(state)) {
      throw new InvalidParameterError(`state must be one of ${oneOf(FILE_STATES)}, got ${shownValue(state)}.`)
    }
  }
  return [...new Set(given as FileState[])]
}

/** The search as filenames are stored (NFC); undefined for none or an empty one (every file). */
function search(value: unknown): string | undefined {
  const given = single('q', value)
  if (given === undefined || given === '') return undefined
  const normalized = given.normalize('NFC')
  if ([...normalized].length > SEARCH_MAX_LENGTH) {
    throw new InvalidParameterError(`q must be at most ${SEARCH_MAX_LENGTH} characters, got ${[...normalized].length}.`)
  }
  if (CONTROL.test(normalized)) throw new InvalidParameterError('q must not contain control characters.')
  return normalized
}

/**
 * preValidation of GET /files: the integers as integer-parameters.ts reads them, then q, sort and
 * order with messages in the same style (`sort must be one of upload_date, filename, size,
 * download_count, got "name".`) rather than the validator's. Runs after authentication. q is left
 * as it is searched for: NFC, as filenames are stored; gone when empty.
 */
export function fileListParameters() {
  const integers = integerParameters('query', FileListQuery)
  return async (request: FastifyRequest) => {
    await integers(request)
    const query = request.query as Record<string, unknown>
    choice('sort', query.sort, FILE_SORTS)
    choice('order', query.order, SORT_ORDERS)
    const q = search(query.q)
    if (q === undefined) delete query.q
    else query.q = q
    // Each filter as a list (one value or repeated), checked here for the messages' sake.
    const types = mediaTypes(query.type)
    if (types !== undefined) query.type = types
    const fileStates = states(query.state)
    if (fileStates !== undefined) query.state = fileStates
  }
}

/** The listing a checked query asks for (the schema's defaults filled in). */
export function listingOf(query: { q?: string; sort?: FileSort; order?: SortOrder; type?: string[]; state?: FileState[] }): FileListing {
  return {
    sort: query.sort ?? NEWEST_FIRST.sort,
    order: query.order ?? NEWEST_FIRST.order,
    ...(query.q === undefined ? {} : { search: query.q }),
    ...(query.type === undefined ? {} : { types: query.type }),
    ...(query.state === undefined ? {} : { states: query.state }),
  }
}
