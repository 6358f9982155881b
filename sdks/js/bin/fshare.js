#!/usr/bin/env node
// `fshare`, the Fileshare command line: runs the built CLI (dist/cli/main.js, from src/cli/).
import { main } from '../dist/cli/main.js'

await main()
