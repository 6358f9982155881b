import pino from 'pino'

let destination: pino.DestinationStream | undefined

/**
 * stdout for the logger: pino's own destination (sonic-boom), collecting lines until 8 KiB wait or
 * 20 ms pass, so that under load one write carries dozens of access-log lines instead of one each
 * (a system call per line was a visible part of a metadata request's CPU). pino writes what still
 * waits when the process exits; only a kill -9 can lose the last 20 ms of lines. One per process:
 * every app built in it shares it.
 */
export function batchedStdout(): pino.DestinationStream {
  destination ??= pino.destination({ dest: 1, sync: false, minLength: 8 * 1024, periodicFlush: 20 })
  return destination
}
