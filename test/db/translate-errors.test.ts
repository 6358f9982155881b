import { describe, expect, it } from 'vitest'
import { isDatabaseFull, isDatabaseUnavailable } from '../../src/db/translate-errors.js'
import { isConnectionError } from '../../src/lib/network-errors.js'

const withCode = (code: string, message = 'failed') => Object.assign(new Error(message), { code })

describe('isConnectionError', () => {
  it('knows the socket errors of an unreachable backend, also as a cause or inside an AggregateError', () => {
    expect(isConnectionError(withCode('ECONNREFUSED'))).toBe(true)
    expect(isConnectionError(new Error('wrapped', { cause: withCode('ETIMEDOUT') }))).toBe(true)
    expect(isConnectionError(new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNREFUSED')]))).toBe(true)
  })

  it('leaves every other error alone', () => {
    for (const error of [withCode('ENOENT'), withCode('EACCES'), new Error('plain'), 'text', undefined, null]) {
      expect(isConnectionError(error)).toBe(false)
    }
  })
})

describe('isDatabaseUnavailable', () => {
  it('is true for PostgreSQL connection and shutdown states, node-postgres connection failures and a busy SQLite', () => {
    for (const code of ['08006', '08001', '57P01', '57P02', '57P03', '53300', 'SQLITE_BUSY', 'SQLITE_BUSY_SNAPSHOT']) {
      expect(isDatabaseUnavailable(withCode(code)), code).toBe(true)
    }
    expect(isDatabaseUnavailable(new Error('Connection terminated unexpectedly'))).toBe(true)
    expect(isDatabaseUnavailable(new Error('timeout exceeded when trying to connect'))).toBe(true)
  })

  it('is false for errors of the query itself', () => {
    // unique violation, undefined table, syntax error, SQLite constraint
    for (const code of ['23505', '42P01', '42601', 'SQLITE_CONSTRAINT_UNIQUE']) {
      expect(isDatabaseUnavailable(withCode(code, 'Connection terminated')), code).toBe(false)
    }
    expect(isDatabaseUnavailable(new Error('something else'))).toBe(false)
  })
})

describe('isDatabaseFull', () => {
  it("is true for SQLITE_FULL, the write errors of SQLite's WAL on a full disk, and PostgreSQL disk_full only", () => {
    expect(isDatabaseFull(withCode('SQLITE_FULL'))).toBe(true)
    expect(isDatabaseFull(withCode('SQLITE_IOERR_SHMSIZE'))).toBe(true)
    expect(isDatabaseFull(withCode('SQLITE_IOERR_WRITE'))).toBe(true)
    expect(isDatabaseFull(withCode('SQLITE_IOERR_READ'))).toBe(false)
    expect(isDatabaseFull(withCode('53100'))).toBe(true)
    expect(isDatabaseFull(withCode('SQLITE_BUSY'))).toBe(false)
    expect(isDatabaseFull(withCode('ENOSPC'))).toBe(false)
  })
})
