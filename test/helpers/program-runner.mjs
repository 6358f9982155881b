// Runs programs for a test process (test/helpers/program-runner.ts). A vitest worker holds a large
// heap, and every process it spawns pays for copying its memory map: about 24 ms of CPU per curl
// in test/clients, a quarter of that file's CPU. Spawned from this small process instead, each
// command is the same real process with the same arguments, started for a fraction of that.
//
// Protocol: one JSON job a line on stdin, {"id", "command", "args"}; one JSON answer a line on
// stdout, {"id", "stdout", "stderr", "failed"}, in the order the commands finish.
import { execFile } from 'node:child_process'
import readline from 'node:readline'

const MAX_OUTPUT_BYTES = 16 * 1024 * 1024

readline.createInterface({ input: process.stdin }).on('line', (line) => {
  const { id, command, args } = JSON.parse(line)
  execFile(command, args, { maxBuffer: MAX_OUTPUT_BYTES }, (error, stdout, stderr) => {
    process.stdout.write(`${JSON.stringify({ id, stdout, stderr, failed: error !== null })}\n`)
  })
})
