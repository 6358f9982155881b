import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    // The machine has 2 cores, and the server under test needs one of them.
    pool: 'forks',
    maxWorkers: 2,
    minWorkers: 1,
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
})
