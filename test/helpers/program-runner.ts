import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import readline from 'node:readline'
import { fileURLToPath } from 'node:url'
import { afterAll } from 'vitest'

const RUNNER = fileURLToPath(new URL('./program-runner.mjs', import.meta.url))

export interface ProgramResult {
  stdout: string
  stderr: string
  /** The program exited with a non-zero code or a signal, or could not start. */
  failed: boolean
}

let runner: ChildProcessWithoutNullStreams | undefined
let nextId = 0
const waiting = new Map<number, (result: ProgramResult) => void>()

/** The test file's program runner (program-runner.mjs), started on first use and ended with the file. */
function programRunner(): ChildProcessWithoutNullStreams {
  if (runner) return runner
  const child = spawn(process.execPath, [RUNNER])
  let stderr = ''
  child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text))
  readline.createInterface({ input: child.stdout }).on('line', (line) => {
    const { id, ...result } = JSON.parse(line) as ProgramResult & { id: number }
    waiting.get(id)?.(result)
    waiting.delete(id)
  })
  child.on('exit', (code) => {
    runner = undefined
    for (const resolve of waiting.values()) resolve({ stdout: '', stderr: `program runner exited (${code}): ${stderr}`, failed: true })
    waiting.clear()
  })
  runner = child
  return child
}

afterAll(() => runner?.stdin.end())

/**
 * Runs `command` with `args` as its own process, as execFile would, but spawned by a small helper
 * process rather than by the test's worker, whose large heap makes every spawn cost about 24 ms of
 * CPU (program-runner.mjs says why).
 */
export function runProgram(command: string, args: string[]): Promise<ProgramResult> {
  const id = nextId++
  return new Promise((resolve) => {
    waiting.set(id, resolve)
    programRunner().stdin.write(`${JSON.stringify({ id, command, args })}\n`)
  })
}
