// The Node.js runtime this package pins (the optional dependency `node`, docs/deployment.md,
// "Runtimes"): better-sqlite3 13 needs Node.js 22 or later, and the system Node of some machines is
// older. Plain JavaScript, no dependency: the `fileshare` command and the SDK test launcher use it
// before anything else loads.
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

/** The oldest major version the server runs on. */
export const MINIMUM_NODE_MAJOR = 22

/** True when the running Node.js is too old for the server. */
export function runningNodeTooOld() {
  return Number(process.versions.node.split('.')[0]) < MINIMUM_NODE_MAJOR
}

/** The pinned runtime's executable when `npm install` put it in place, else undefined. */
export function pinnedNode() {
  const executable = fileURLToPath(new URL('../node_modules/node/bin/node', import.meta.url))
  return existsSync(executable) ? executable : undefined
}

/** The executable to start the server or the CLI with: this one, unless it is too old and the pin is there. */
export function serverNode() {
  if (!runningNodeTooOld()) return process.execPath
  return pinnedNode() ?? process.execPath
}
