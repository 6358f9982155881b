#!/usr/bin/env node
// The `fileshare` command. The TypeScript is compiled to dist/ by `npm install` (prepare).
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { constants } from 'node:os'
import { fileURLToPath } from 'node:url'
import { MINIMUM_NODE_MAJOR, pinnedNode, runningNodeTooOld } from './pinned-node.js'

if (runningNodeTooOld()) {
  // Started by an older system Node (a global install on a machine with Node 20, say): run again on
  // the runtime the package pins, with the same Node.js flags (the memory bounds of the systemd
  // unit), passing signals on so that `fileshare serve` still stops cleanly.
  const runtime = pinnedNode()
  if (runtime === undefined) {
    console.error(
      `fileshare: Node.js ${MINIMUM_NODE_MAJOR} or later is required (this is ${process.version}); install it, or reinstall without --omit=optional to get the pinned runtime.`,
    )
    process.exit(1)
  }
  const child = spawn(runtime, [...process.execArgv, fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' })
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal))
  child.on('exit', (code, signal) => process.exit(code ?? 128 + (constants.signals[signal] ?? 0)))
} else {
  const entry = new URL('../dist/cli/main.js', import.meta.url)
  if (!existsSync(entry)) {
    console.error('fileshare: not built yet; run "npm install" (or "npm run build") in the checkout first.')
    process.exit(1)
  }
  const { main } = await import(entry.href)
  await main()
}
