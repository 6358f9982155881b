import { beforeEach, inject } from 'vitest'

declare module 'vitest' {
  export interface ProvidedContext {
    /** Parts of test names (suite names included) the project behind-nginx skips: vitest.config.ts says why. */
    skippedBehindNginx: string[]
  }
}

/** The full name of a test, its suites' names first, as the reporter shows it. */
function fullName(task: { name: string; suite?: { name: string; suite?: unknown } }): string {
  const names = [task.name]
  for (let suite = task.suite as { name: string; suite?: unknown } | undefined; suite; suite = suite.suite as typeof suite) {
    if (suite.name) names.unshift(suite.name)
  }
  return names.join(' > ')
}

const skipped = inject('skippedBehindNginx')

beforeEach(({ task, skip }) => {
  const name = fullName(task)
  if (skipped.some((part) => name.includes(part))) skip()
})
