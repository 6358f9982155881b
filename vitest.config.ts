import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { defineConfig } from 'vitest/config'

/**
 * The HTTP contract suite runs twice: on the embedded stack (SQLite + folder) and on the
 * scale-out stack (PostgreSQL + S3 on s3rver + Redis), where storage, rate limits and their
 * exactness under concurrency, the database, stats, download counting and upload integrity can
 * differ. The second needs PostgreSQL and Redis on 127.0.0.1; without them it is skipped with a
 * message (CI fails earlier, in .ci/run, instead). The repositories on PostgreSQL, the S3 store and
 * `fileshare gc` on S3 + PostgreSQL have their own tests in the embedded project (test/db,
 * test/storage, test/cli); several instances and outages have theirs here (test/scale-out).
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

// The contract suite behind Debian's nginx configured as docs/scale-out.md's sample (test/helpers/nginx.ts).
const nginxAvailable = existsSync('/usr/sbin/nginx')
if (!nginxAvailable) console.warn('\n!! /usr/sbin/nginx is not installed: the behind-nginx suite is SKIPPED.\n')

// The virus-scanning tests run Debian's clamd (test/helpers/clamd.ts); without it they are skipped.
if (!existsSync(process.env.FILESHARE_TEST_CLAMD ?? '/usr/sbin/clamd')) {
  console.warn('\n!! /usr/sbin/clamd (Debian package clamav-daemon) is not installed: the virus-scanning tests are SKIPPED.\n')
}

const shared = {
  testTimeout: 30_000,
  hookTimeout: 30_000,
  // Each file starts from Node's own fetch; then every answer of the contract suite is checked
  // against the OpenAPI document.
  setupFiles: ['test/helpers/real-fetch.setup.ts', 'test/helpers/validate-responses.setup.ts'],
  // The AWS SDK warns on Node 20 that its releases after January 2027 need Node 22 (docs/scale-out.md).
  env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
}

export default defineConfig({
  test: {
    // Test files start real servers and child processes; two cores, so keep parallelism modest.
    maxWorkers: 2,
    minWorkers: 1,
    // Test files share their worker process instead of each starting a fresh one: importing the app
    // (Fastify, Kysely, the drivers, TypeBox) cost each file about a second. Every file still gets
    // fresh test modules and closes what it opens; the one global a file changes, fetch, is reset
    // for the next (test/helpers/real-fetch.setup.ts). Vitest gives each project workers of its own,
    // so FILESHARE_TEST_STACK never crosses from one project to the other.
    poolOptions: { forks: { isolate: false } },
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
                exclude: [
                  // Which host a request names is decided in an onRequest hook (src/http/plugins/
                  // download-host.ts), before authentication and before any backend is asked: no
                  // answer there can differ by stack. What the file also touches on the way runs
                  // here in other files: downloads with their headers and HEAD (download.test.ts),
                  // listing and details (files-api.test.ts), stats (stats.test.ts), /readyz
                  // (errors-and-routes.test.ts), and uploads refused before they reach the store
                  // leave nothing in it (upload.test.ts).
                  'test/contract/download-host.test.ts',
                  // Files that mix both kinds run whole: their stack-free parts (dashboard-security's
                  // pages and headers, auth's logging) cost an app start or two next to the sessions,
                  // sign-in guards, keys and limits that do depend on PostgreSQL and Redis.
                ],
                env: { ...shared.env, FILESHARE_TEST_STACK: 'scale-out' },
              },
            },
          ]
        : []),
      ...(nginxAvailable
        ? [
            {
              test: {
                ...shared,
                name: 'behind-nginx',
                include: ['test/contract/**/*.test.ts'],
                exclude: [
                  // Tells clients apart by the X-Forwarded-For each request sends; nginx replaces it with
                  // the connection's address, so every sign-in is 127.0.0.1's and one guard fills up.
                  'test/contract/dashboard-account-security.test.ts',
                ],
                // Single tests of what nginx legitimately changes, skipped by name (test/helpers/nginx-front.setup.ts);
                // test/scale-out/nginx-front.test.ts tests X-Forwarded-For from real client addresses instead.
                setupFiles: [...shared.setupFiles, 'test/helpers/nginx-front.setup.ts'],
                provide: {
                  skippedBehindNginx: [
                    // clients told apart by a client-sent X-Forwarded-For, which nginx replaces
                    'counts failures per client IP',
                    'limits each X-Forwarded-For client on its own',
                    'failed sign-in guard',
                    // a client-sent X-Forwarded-Host, which nginx replaces with the Host it was asked for
                    'the host comes from X-Forwarded-Host',
                    // a request nginx's own parser refuses is answered by nginx (its 400 page)
                    'answers requests the HTTP parser refuses',
                    // an early refusal closes nginx's upstream connection; the client's stays open (keep-alive)
                    'refuses a declared Content-Length beyond the limit plus 64 KiB before reading the body',
                  ],
                },
                env: { ...shared.env, FILESHARE_TEST_FRONT: 'nginx' },
              },
            },
          ]
        : []),
    ],
  },
})
