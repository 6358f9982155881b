#!/usr/bin/env node
// The `fileshare` command. The TypeScript is compiled to dist/ by `npm install` (prepare).
import { existsSync } from 'node:fs'

const entry = new URL('../dist/cli/main.js', import.meta.url)
if (!existsSync(entry)) {
  console.error('fileshare: not built yet; run "npm install" (or "npm run build") in the checkout first.')
  process.exit(1)
}
const { main } = await import(entry.href)
await main()
