import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const MODULE = fileURLToPath(new URL('../../src/http/batched-stdout.ts', import.meta.url))

/** Runs `body` in a process of its own with `logger`, a pino logger on batchedStdout(); resolves with its stdout once it ends. */
function run(body: string): Promise<{ stdout: string; code: number | null; signal: NodeJS.Signals | null }> {
  const script = `import pino from 'pino'\nimport { batchedStdout } from ${JSON.stringify(MODULE)}\nconst logger = pino({ base: null, timestamp: false }, batchedStdout())\n${body}`
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] })
  let stdout = ''
  child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text))
  return new Promise((resolve) => child.on('close', (code, signal) => resolve({ stdout, code, signal })))
}

const lines = (stdout: string) =>
  stdout
    .trim()
    .split('\n')
    .map((line) => (JSON.parse(line) as { msg: string }).msg)

describe('batchedStdout', () => {
  it('writes every line, in order, when the process exits with lines still waiting', async () => {
    const { stdout, code } = await run(`for (let i = 0; i < 2000; i++) logger.info('line ' + i)\nprocess.exit(0)`)
    expect(code).toBe(0)
    expect(lines(stdout)).toEqual(Array.from({ length: 2000 }, (_, i) => `line ${i}`))
  }, 30_000)

  it('writes a lone line within its batch time, without waiting for more', async () => {
    // Killed after a while: no exit handler runs, so the line can only have gone out on its own.
    const { stdout, signal } = await run(`logger.info('alone')\nsetTimeout(() => process.kill(process.pid, 'SIGKILL'), 2000)`)
    expect(signal).toBe('SIGKILL')
    expect(lines(stdout)).toEqual(['alone'])
  }, 30_000)
})
