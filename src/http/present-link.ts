import type { LinkView } from '../services/links.js'
import { linkRecord } from '../services/records.js'
import type { LinkObject } from './schemas.js'

/** The link object of the API (services/records.ts, also the `data` of link webhooks). */
export function presentLink(view: LinkView, linkBaseUrl: string): LinkObject {
  return linkRecord(view, linkBaseUrl)
}
