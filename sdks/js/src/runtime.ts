// What the platform can do. Node-only code lives in node/node-io.ts and is loaded on first use,
// so that the same ESM runs in browsers (bundlers map it to node-io.browser.js via "browser").

/** True in Node (and runtimes that present themselves as Node). */
export const isNode: boolean =
  typeof globalThis.process === 'object' && globalThis.process !== null && typeof globalThis.process.versions?.node === 'string'

/** Fetch can stream a request body (`duplex: 'half'`) over HTTP/1.1 in Node; browsers need HTTP/2. */
export const canStreamRequestBodies = isNode

type NodeIo = typeof import('./node/node-io.js')
let nodeIo: Promise<NodeIo> | undefined

/** The Node file-system and crypto helpers, loaded once. */
export function loadNodeIo(): Promise<NodeIo> {
  nodeIo ??= import('./node/node-io.js')
  return nodeIo
}

/** Reads an environment variable where there is an environment (Node); else undefined. */
export function env(name: string): string | undefined {
  if (!isNode) return undefined
  const value = globalThis.process.env[name]
  return value === undefined || value === '' ? undefined : value
}
