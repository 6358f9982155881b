import { spawn } from 'node:child_process'
import { once } from 'node:events'
import path from 'node:path'
import { ROOT } from '../test/helpers/server-process.js'

/** Bench scripts are TypeScript: their child processes load tsx, as `npm run bench` does. */
const TSX = ['--import', 'tsx']

/** The node arguments that run a TypeScript bench script (a client, or the baseline server). */
export function tsScriptArgs(script: string, nodeFlags: string[] = []): string[] {
  return [...nodeFlags, ...TSX, path.join(ROOT, 'bench', script)]
}

/**
 * Runs a client script in its own process (so that its CPU is not the server's) and returns the
 * JSON document it prints last. The input travels as one JSON argument.
 */
export async function runClientScript<T>(script: string, input: unknown): Promise<T> {
  const child = spawn(process.execPath, [...tsScriptArgs(script), JSON.stringify(input)], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  let output = ''
  child.stdout!.setEncoding('utf8')
  child.stdout!.on('data', (text: string) => (output += text))
  const [code] = (await once(child, 'exit')) as [number | null]
  if (code !== 0) throw new Error(`bench/${script} exited with code ${code}`)
  const last = output.trim().split('\n').pop() ?? ''
  return JSON.parse(last) as T
}
