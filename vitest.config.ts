import { execFileSync } from 'node:child_process'
import { defineConfig } from 'vitest/config'

/**
 * The HTTP contract suite runs twice: on the embedded stack (SQLite + folder) and on the
 * scale-out stack (PostgreSQL + S3 on s3rver + Redis). The second needs PostgreSQL and Redis on
 * 127.0.0.1; without them it is skipped with a message (CI fails earlier, in .ci/run, instead).
 */
function answers(command: string, args: string[]): boolean {
  try {
    execFileSync(command, args, { stdio: 'ignore', timeout: 5_000 })
    return true
  } catch {
    return false
  }
}
const scaleOutAvailable =
  answers('pg_isready', ['-h', '127.0.0.1', '-p', '5432', '-q']) && answers('redis-cli', ['-h', '127.0.0.1', '-p', '6379', 'ping'])
if (!scaleOutAvailable) {
  console.warn('\n!! PostgreSQL or Redis does not answer on 127.0.0.1: the scale-out suite is SKIPPED.\n')
}

const shared = {
  testTimeout: 30_000,
  hookTimeout: 30_000,
  // Checks every answer of the contract suite against the OpenAPI document.
  setupFiles: ['test/helpers/validate-responses.setup.ts'],
  // The AWS SDK warns on Node 20 that its releases after January 2027 need Node 22 (docs/scale-out.md).
  env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
}

export default defineConfig({
  test: {
    // Test files start real servers and child processes; two cores, so keep parallelism modest.
    maxWorkers: 2,
    minWorkers: 1,
    projects: [
      {
        test: { ...shared, name: 'embedded', include: ['test/**/*.test.ts'], exclude: ['test/scale-out/**'] },
      },
      ...(scaleOutAvailable
        ? [
            {
              test: {
                ...shared,
                name: 'scale-out',
                include: ['test/contract/**/*.test.ts', 'test/scale-out/**/*.test.ts'],
                env: { ...shared.env, FILESHARE_TEST_STACK: 'scale-out' },
              },
            },
          ]
        : []),
    ],
  },
})
