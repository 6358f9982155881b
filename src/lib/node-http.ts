import { createRequire } from 'node:module'
import type * as NodeHttp from 'node:http'

/**
 * node:http, loaded as CommonJS. Imported as an ES module it would cost every process about 3 MiB of
 * resident memory for nothing: the ES module facade of a built-in reads all of its exports when it is
 * first imported, and since Node.js 22 node:http has `WebSocket`, `CloseEvent` and `MessageEvent`
 * among them, getters that load undici (Node's fetch and WebSocket; 2.3 MiB of live heap, measured
 * on Node.js 24). The service never uses them. `require` reads only what it is asked for.
 * Types still come from `import type { ... } from 'node:http'`, which loads nothing.
 */
export const http = createRequire(import.meta.url)('node:http') as typeof NodeHttp
