import { execFile } from 'node:child_process'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { promisify } from 'node:util'
import type pg from 'pg'

export interface TableSize {
  table: string
  rows: number
  /** pg_relation_size: the heap's main fork. */
  heap: number
  /** pg_table_size: heap, TOAST, free-space and visibility maps. */
  table_size: number
  /** pg_indexes_size. */
  indexes: number
  /** pg_total_relation_size. */
  total: number
  index_sizes: Record<string, number>
}

/** Every table of the public schema with its exact row count and sizes (run VACUUM ANALYZE first). */
export async function tableSizes(client: pg.Client): Promise<TableSize[]> {
  const { rows: tables } = await client.query<{ table: string; heap: string; table_size: string; indexes: string; total: string }>(
    `select c.relname as table, pg_relation_size(c.oid) as heap, pg_table_size(c.oid) as table_size,
            pg_indexes_size(c.oid) as indexes, pg_total_relation_size(c.oid) as total
     from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where n.nspname = 'public' and c.relkind = 'r' order by pg_total_relation_size(c.oid) desc`,
  )
  const { rows: indexes } = await client.query<{ table: string; index: string; size: string }>(
    `select t.relname as table, i.relname as index, pg_relation_size(i.oid) as size
     from pg_index x join pg_class i on i.oid = x.indexrelid join pg_class t on t.oid = x.indrelid
     join pg_namespace n on n.oid = t.relnamespace where n.nspname = 'public' order by 1, 3 desc`,
  )
  const sizes: TableSize[] = []
  for (const row of tables) {
    const { rows: count } = await client.query<{ n: string }>(`select count(*) as n from "${row.table}"`)
    sizes.push({
      table: row.table,
      rows: Number(count[0]!.n),
      heap: Number(row.heap),
      table_size: Number(row.table_size),
      indexes: Number(row.indexes),
      total: Number(row.total),
      index_sizes: Object.fromEntries(
        indexes.filter((index) => index.table === row.table).map((index) => [index.index, Number(index.size)]),
      ),
    })
  }
  return sizes
}

/** Average stored width of a table's rows (pg_column_size of the whole row), for the rows `where` picks. */
export async function averageRowWidth(client: pg.Client, table: string, where: string): Promise<{ rows: number; bytes: number }> {
  const { rows } = await client.query<{ n: string; avg: string | null }>(
    `select count(*) as n, avg(pg_column_size(t.*)) as avg from "${table}" t where ${where}`,
  )
  return { rows: Number(rows[0]!.n), bytes: Math.round(Number(rows[0]!.avg ?? 0)) }
}

/** What the database's statistics say at one moment: rows written per table, transactions, the WAL position. */
export interface StatSnapshot {
  tables: Record<string, { ins: number; upd: number; hot: number; del: number }>
  commits: number
  rollbacks: number
  lsn: string
}

/**
 * Reads pg_stat_user_tables and pg_stat_database. A server's idle connections report their counts
 * within 10 s (PostgreSQL 15's PGSTAT_IDLE_INTERVAL), so the snapshot waits that long first.
 */
export async function statSnapshot(client: pg.Client): Promise<StatSnapshot> {
  await sleep(11_000)
  const { rows } = await client.query<{ relname: string; ins: string; upd: string; hot: string; del: string }>(
    `select relname, n_tup_ins as ins, n_tup_upd as upd, n_tup_hot_upd as hot, n_tup_del as del from pg_stat_user_tables`,
  )
  const { rows: database } = await client.query<{ commits: string; rollbacks: string; lsn: string }>(
    `select xact_commit as commits, xact_rollback as rollbacks, pg_current_wal_flush_lsn()::text as lsn
     from pg_stat_database where datname = current_database()`,
  )
  return {
    tables: Object.fromEntries(
      rows.map((row) => [row.relname, { ins: Number(row.ins), upd: Number(row.upd), hot: Number(row.hot), del: Number(row.del) }]),
    ),
    commits: Number(database[0]!.commits),
    rollbacks: Number(database[0]!.rollbacks),
    lsn: database[0]!.lsn,
  }
}

export interface StatDelta {
  /** Rows inserted, updated (of which HOT) and deleted per table, where any changed. */
  tables: Record<string, { ins: number; upd: number; hot: number; del: number }>
  /** Committed transactions in the database, this script's own snapshot queries included. */
  commits: number
}

export function statDelta(before: StatSnapshot, after: StatSnapshot): StatDelta {
  const tables: StatDelta['tables'] = {}
  for (const [name, now] of Object.entries(after.tables)) {
    const then = before.tables[name] ?? { ins: 0, upd: 0, hot: 0, del: 0 }
    const change = { ins: now.ins - then.ins, upd: now.upd - then.upd, hot: now.hot - then.hot, del: now.del - then.del }
    if (change.ins || change.upd || change.del) tables[name] = change
  }
  return { tables, commits: after.commits - before.commits }
}

export interface WalUse {
  records: number
  /** Record bytes with the full-page images the records carried. */
  bytes: number
  /** The same without full-page images (what the change itself writes). */
  bytesWithoutPageImages: number
  pageImages: number
  /** Commit records of this database's transactions that wrote. */
  commits: number
}

/**
 * The WAL this database wrote between two positions, from pg_waldump over the server's pg_wal (the
 * cluster is shared, so records are kept only when they touch a relation of this database, plus the
 * commit records of the transactions that did). Needs read access to the data directory.
 */
export async function walBetween(client: pg.Client, from: string, to: string): Promise<WalUse> {
  const use: WalUse = { records: 0, bytes: 0, bytesWithoutPageImages: 0, pageImages: 0, commits: 0 }
  // pg_waldump finds no record in an empty range.
  if (from === to) return use
  const { rows } = await client.query<{ dir: string; oid: string }>(
    `select current_setting('data_directory') as dir, oid::text as oid from pg_database where datname = current_database()`,
  )
  const { dir, oid } = rows[0]!
  const { stdout } = await promisify(execFile)(
    '/usr/lib/postgresql/15/bin/pg_waldump',
    ['-p', path.join(dir, 'pg_wal'), '-s', from, '-e', to],
    {
      maxBuffer: 1 << 30,
    },
  )
  const lines = stdout.split('\n')
  const ours = new Set<string>()
  const relation = new RegExp(`rel \\d+/${oid}/`)
  for (const line of lines) if (relation.test(line)) ours.add(/tx:\s+(\d+)/.exec(line)?.[1] ?? '')
  ours.delete('0')
  for (const line of lines) {
    const tx = /tx:\s+(\d+)/.exec(line)?.[1]
    if (!relation.test(line) && !(tx !== undefined && ours.has(tx))) continue
    const lengths = /len \(rec\/tot\):\s*(\d+)\/\s*(\d+)/.exec(line)
    if (!lengths) continue
    use.records++
    use.bytesWithoutPageImages += Number(lengths[1])
    use.bytes += Number(lengths[2])
    use.pageImages += (line.match(/\bFPW\b/g) ?? []).length
    if (/desc: COMMIT/.test(line)) use.commits++
  }
  return use
}
