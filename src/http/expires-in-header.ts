import type { IncomingHttpHeaders } from 'node:http'
import { InvalidParameterError } from '../errors.js'
import { parseInteger } from '../lib/integers.js'
import { MAX_EXPIRES_IN_SECONDS } from '../services/expiry.js'

/**
 * The lifetime an upload asks for its file, in seconds (../shared/spec/links.md, File expiry):
 * the `Fileshare-Expires-In` header, or, on a tus creation, the metadata key `expires_in`.
 * Undefined when neither is given.
 */
export function requestedFileLifetime(headers: IncomingHttpHeaders, metadata?: Map<string, string>): number | undefined {
  const header = headers['fileshare-expires-in']
  const fromMetadata = metadata?.get('expires_in')
  if (header !== undefined && fromMetadata !== undefined) {
    throw new InvalidParameterError('Give the expiry either as Fileshare-Expires-In or as the expires_in metadata, not both.')
  }
  if (header !== undefined)
    return parseInteger('Fileshare-Expires-In', Array.isArray(header) ? header.join(',') : header, 1, MAX_EXPIRES_IN_SECONDS)
  if (fromMetadata !== undefined) return parseInteger('expires_in (Upload-Metadata)', fromMetadata, 1, MAX_EXPIRES_IN_SECONDS)
  return undefined
}
