import { execute } from '../../src/cli/main.js'
import { cleanEnv, type CliResult } from './server-process.js'

/**
 * Runs a `fileshare` command in this process, exactly as the binary would (src/cli/main.ts
 * `execute`: the same parsing, output and exit codes), with `env` over a clean environment. A
 * process per command costs a second; tests about processes use runCli (server-process.ts).
 */
export async function runCommand(args: string[], env: Record<string, string>): Promise<CliResult> {
  let stdout = ''
  let stderr = ''
  const code = await execute(args, cleanEnv(env), {
    stdout: (line) => (stdout += `${line}\n`),
    stderr: (line) => (stderr += `${line}\n`),
  })
  return { code, stdout, stderr }
}

/**
 * Creates the database of a new data folder with `fileshare migrate`, as an operator does before
 * the first command (every other command refuses a data folder without a database).
 */
export async function createDatabase(env: Record<string, string>): Promise<void> {
  const result = await runCommand(['migrate'], env)
  if (result.code !== 0) throw new Error(`fileshare migrate exited with code ${result.code}: ${result.stderr}`)
}
