import SQLite from 'better-sqlite3'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { ROWS_AS_ARRAYS, withStatementCache } from '../../src/db/statement-cache.js'

describe('withStatementCache (SQLite)', () => {
  let database: SQLite.Database
  afterEach(() => database.close())

  function open() {
    database = new SQLite(':memory:')
    database.exec('create table t (n integer)')
    database.exec('insert into t values (1), (2), (3)')
    const prepare = vi.spyOn(database, 'prepare')
    return { cached: withStatementCache(database), prepare }
  }

  it('compiles each SQL text once and hands out the same statement again', () => {
    const { cached, prepare } = open()
    const first = cached.prepare('select n from t where n > ?')
    const second = cached.prepare('select n from t where n > ?')
    expect(second).toBe(first)
    expect(second.all([1])).toEqual([{ n: 2 }, { n: 3 }])
    expect(prepare).toHaveBeenCalledTimes(1)
    cached.prepare('select count(*) as c from t')
    expect(prepare).toHaveBeenCalledTimes(2)
  })

  it('never hands out a statement that is still being iterated', () => {
    const { cached } = open()
    const sql = 'select n from t order by n'
    const iterating = cached.prepare(sql) as unknown as SQLite.Statement
    const rows = iterating.iterate()
    expect(rows.next().value).toEqual({ n: 1 })
    const other = cached.prepare(sql)
    expect(other).not.toBe(iterating)
    expect(other.all([])).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }])
    expect([...rows]).toEqual([{ n: 2 }, { n: 3 }])
  })

  it('hands out the rows of a query marked ROWS_AS_ARRAYS as arrays, and only those', () => {
    const { cached } = open()
    const sql = `${ROWS_AS_ARRAYS}select n, n * 2 as twice from t order by n`
    expect(cached.prepare(sql).all([])).toEqual([
      [1, 2],
      [2, 4],
      [3, 6],
    ])
    // A second statement for the same text (the first still iterating) reads arrays too.
    const iterating = (cached.prepare(sql) as unknown as SQLite.Statement).iterate()
    expect(iterating.next().value).toEqual([1, 2])
    expect(cached.prepare(sql).all([])).toHaveLength(3)
    expect([...iterating]).toEqual([
      [2, 4],
      [3, 6],
    ])
    expect(cached.prepare('select n from t order by n').all([])).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }])
  })

  it('keeps a bounded number of statements, dropping those long unused', () => {
    const { cached, prepare } = open()
    const hot = 'select n from t where n = ?'
    cached.prepare(hot)
    for (let i = 0; i < 500; i++) {
      cached.prepare(`select n + ${i} from t`)
      if (i % 50 === 0) cached.prepare(hot) // still in use: stays cached
    }
    expect(prepare).toHaveBeenCalledTimes(501)
    cached.prepare(hot)
    expect(prepare).toHaveBeenCalledTimes(501)
    cached.prepare('select n + 0 from t') // long unused: compiled anew
    expect(prepare).toHaveBeenCalledTimes(502)
  })
})

describe('readNow (SQLite reads round Kysely)', () => {
  let database: SQLite.Database
  afterEach(() => database.close())

  function open() {
    database = new SQLite(':memory:')
    database.exec('create table t (n integer)')
    database.exec('insert into t values (1), (2), (3)')
    return withStatementCache(database)
  }

  it('reads at once with the cached statement, as arrays where the SQL asks for them', () => {
    const cached = open()
    expect(cached.readNow('select n from t where n > ? order by n', [1])).toEqual([{ n: 2 }, { n: 3 }])
    expect(cached.readNow(`${ROWS_AS_ARRAYS}select n, n * 2 from t where n = ?`, [2])).toEqual([[2, 4]])
    expect(cached.prepare('select n from t where n > ? order by n')).toBe(cached.prepare('select n from t where n > ? order by n'))
  })

  it('declines while a transaction is open on the connection: it would read uncommitted rows', () => {
    const cached = open()
    database.exec('begin')
    database.exec('insert into t values (4)')
    expect(cached.readNow('select count(*) as c from t', [])).toBeUndefined()
    database.exec('rollback')
    expect(cached.readNow('select count(*) as c from t', [])).toEqual([{ c: 3 }])
  })

  it('declines a statement that writes, without running it', () => {
    const cached = open()
    expect(cached.readNow('insert into t values (?)', [9])).toBeUndefined()
    expect(database.prepare('select count(*) as c from t').get()).toEqual({ c: 3 })
  })

  it('declines a read that fails, for Kysely to run and report', () => {
    const cached = open()
    expect(cached.readNow('select abs(?) as a', [-9223372036854775808n])).toBeUndefined()
  })
})
