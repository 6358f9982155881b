import { http } from '../lib/node-http.js'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { InvalidRequestError, TusVersionNotSupportedError } from '../errors.js'
import { parseInteger } from '../lib/integers.js'
import { PREFLIGHT_HEADERS } from './cors.js'
import { CHECKSUM_ALGORITHMS, type ChecksumAlgorithm } from '../services/resumable-uploads.js'

/** The tus protocol as this server speaks it (https://tus.io/protocols/resumable-upload). */
export const TUS_VERSION = '1.0.0'
export const TUS_EXTENSIONS = ['creation', 'creation-with-upload', 'creation-defer-length', 'termination', 'expiration', 'checksum']
export const OFFSET_OCTET_STREAM = 'application/offset+octet-stream'

// Node has no reason phrase for tus's own status; without this its status line says "unknown".
http.STATUS_CODES[460] ??= 'Checksum Mismatch'

/**
 * Put on every answer of /api/v1/uploads before anything can refuse the request, so that a 401 or
 * a 429 carries it too: Tus-Resumable, except on OPTIONS.
 */
export async function tusResponseHeaders(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  if (request.method !== 'OPTIONS') reply.header('Tus-Resumable', TUS_VERSION)
}

/**
 * The dashboard's variant, as an onSend hook of its upload routes, so that every answer, a
 * refused session or CSRF token included, carries Tus-Resumable. No CORS headers: those routes
 * take the session cookie and serve the dashboard's own origin only.
 */
export async function sameOriginTusHeaders(request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
  if (request.method !== 'OPTIONS') reply.header('Tus-Resumable', TUS_VERSION)
  return payload
}

/** The capability answer of OPTIONS, which is also a browser's CORS preflight. */
export function capabilityHeaders(maxSize: number): Record<string, string> {
  return {
    'Tus-Version': TUS_VERSION,
    'Tus-Extension': TUS_EXTENSIONS.join(','),
    'Tus-Max-Size': String(maxSize),
    'Tus-Checksum-Algorithm': CHECKSUM_ALGORITHMS.join(','),
    ...PREFLIGHT_HEADERS,
  }
}

/** 412 (with Tus-Version) unless the request speaks tus 1.0.0. */
export function checkTusVersion(request: FastifyRequest, reply: FastifyReply): void {
  if (request.headers['tus-resumable'] !== TUS_VERSION) {
    reply.header('Tus-Version', TUS_VERSION)
    throw new TusVersionNotSupportedError()
  }
}

/** A request header as one string (repeated headers joined as HTTP joins them). */
export function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name]
  return Array.isArray(value) ? value.join(',') : value
}

/** A non-negative integer header (Upload-Length, Upload-Offset), or undefined when absent. */
export function integerHeader(request: FastifyRequest, name: string): number | undefined {
  const raw = header(request, name.toLowerCase())
  return raw === undefined ? undefined : parseInteger(name, raw.trim(), 0, Number.MAX_SAFE_INTEGER)
}

/** Plain digits of a number too large to hold exactly (past 2^53 − 1). */
const BEYOND_SAFE_INTEGER = /^[1-9][0-9]{15,}$/

/**
 * Upload-Length, or undefined when absent. Plain digits past 2^53 − 1 are still a length, one
 * above any max_file_size: Infinity, which the service refuses with 413 file_too_large as it does
 * every length above the limit, before storing anything.
 */
export function uploadLengthHeader(request: FastifyRequest): number | undefined {
  const raw = header(request, 'upload-length')?.trim()
  if (raw !== undefined && BEYOND_SAFE_INTEGER.test(raw) && !Number.isSafeInteger(Number(raw))) return Number.POSITIVE_INFINITY
  return integerHeader(request, 'Upload-Length')
}

/** Upload-Length or Upload-Defer-Length: 1 on creation; exactly one of them. */
export function creationLength(request: FastifyRequest): number | undefined {
  const length = uploadLengthHeader(request)
  const deferred = header(request, 'upload-defer-length')
  if (deferred !== undefined && deferred.trim() !== '1') throw new InvalidRequestError('Upload-Defer-Length must be 1.')
  if ((length === undefined) === (deferred === undefined)) {
    throw new InvalidRequestError('Creating an upload takes either Upload-Length or Upload-Defer-Length: 1.')
  }
  return length
}

const METADATA_KEY = /^[^\s,]+$/
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/

/**
 * Upload-Metadata: comma-separated `key base64value` pairs (the value may be absent). Keys must be
 * unique. Returns the decoded values of the pairs (UTF-8).
 */
export function parseMetadata(raw: string | undefined): Map<string, string> {
  const pairs = new Map<string, string>()
  if (raw === undefined || raw.trim() === '') return pairs
  for (const pair of raw.split(',')) {
    const [key, value = '', ...rest] = pair.trim().split(' ')
    if (!key || !METADATA_KEY.test(key) || rest.length > 0 || !BASE64.test(value) || value.length % 4 === 1) {
      throw new InvalidRequestError('Upload-Metadata must be comma-separated pairs of a key and a base64 value.')
    }
    if (pairs.has(key)) throw new InvalidRequestError(`Upload-Metadata names "${key}" twice.`)
    pairs.set(key, Buffer.from(value, 'base64').toString('utf8'))
  }
  return pairs
}

/** Upload-Checksum: `<algorithm> <base64 digest>`; 400 for an algorithm we do not offer. */
export function parseChecksum(raw: string | undefined): { algorithm: ChecksumAlgorithm; digest: Buffer } | undefined {
  if (raw === undefined) return undefined
  const [algorithm = '', digest = '', ...rest] = raw.trim().split(' ')
  if (!(CHECKSUM_ALGORITHMS as readonly string[]).includes(algorithm)) {
    throw new InvalidRequestError(`Upload-Checksum algorithm "${algorithm}" is not supported; use ${CHECKSUM_ALGORITHMS.join(' or ')}.`)
  }
  if (!BASE64.test(digest) || digest === '' || rest.length > 0) throw new InvalidRequestError('The Upload-Checksum digest must be base64.')
  return { algorithm: algorithm as ChecksumAlgorithm, digest: Buffer.from(digest, 'base64') }
}

/** An RFC 9110 date, as Upload-Expires wants it. */
export function httpDate(epochMs: number): string {
  return new Date(epochMs).toUTCString()
}
