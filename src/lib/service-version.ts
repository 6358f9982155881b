import { createRequire } from 'node:module'

/** The server's version, from package.json (src/lib and dist/lib both sit two folders below it). */
export const SERVICE_VERSION = (createRequire(import.meta.url)('../../package.json') as { version: string }).version
