/**
 * First setup file of the vitest projects (vitest.config.ts). Test files share their worker
 * (`isolate: false`), and validate-responses.setup.ts wraps `globalThis.fetch` for a contract file:
 * every file starts here from Node's own fetch, so that no wrapper of an earlier file stays in the
 * chain and each file's wrapper checks its own answers once.
 */
const NODE_FETCH = Symbol.for('fileshare.test.nodeFetch')
const held = globalThis as typeof globalThis & { [NODE_FETCH]?: typeof fetch }

held[NODE_FETCH] ??= globalThis.fetch
globalThis.fetch = held[NODE_FETCH]
