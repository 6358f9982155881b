import type pg from 'pg'

/** What the seeded database holds, and the shares that shape its rows. */
export interface SeedPlan {
  accounts: number
  files: number
  /** Share of accounts with one webhook endpoint subscribed to every event. */
  webhookAccountShare: number
}

/** Rows per transaction: a chunk of uploads as they would arrive, every account mixed in. */
const CHUNK = 50_000

/** Filename stems and extensions with their content types: names of the lengths people give files. */
const STEMS = [
  'IMG_2026',
  'Scan ',
  'report-q3-',
  'invoice_',
  'backup-',
  'Screenshot 2026-11-',
  'video_',
  'dataset-',
  'Meeting notes ',
  'photo-',
]
const TYPES: Array<[string, string]> = [
  ['.jpg', 'image/jpeg'],
  ['.pdf', 'application/pdf'],
  ['.zip', 'application/zip'],
  ['.mp4', 'video/mp4'],
  ['.png', 'image/png'],
  ['.csv', 'text/csv'],
  ['.docx', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document'],
  ['.bin', 'application/octet-stream'],
]

const sqlArray = (values: string[]) => `array[${values.map((value) => `'${value.replaceAll("'", "''")}'`).join(', ')}]`

/**
 * Accounts (each new one with two API keys, a tenth of them with a webhook endpoint), then `files` file rows
 * as uploads write them (../../src/db/repositories/files-repository.ts insertFileIn and
 * insertTakingUploadSlot): the file, its default link, the account's counters, the audit event
 * `file.uploaded`, and for accounts with a webhook the outbox message, its delivery and one attempt.
 * Rows go in in time order with the accounts interleaved, through the indexes the migrations made,
 * so that the indexes grow (and split) as they do in service rather than being built packed.
 *
 * Shapes: a tenth of the files get a second link (a label; some with a download limit or a password
 * hash), a fifth expire, 8% come from the dashboard and 2% through upload requests. Files are spread
 * over accounts unevenly (account k of n gets a share that falls with k: the first holds about 10%).
 * Random values (tokens, digests, storage keys) have the lengths the service writes.
 */
export async function seedDatabase(client: pg.Client, plan: SeedPlan, log: (message: string) => void): Promise<void> {
  const now = Date.now()
  const firstAt = now - plan.files * 1000
  await client.query(
    `insert into accounts (email, plan, created_at)
     select 'sizing-' || g || '@example.com', 'pro', $1::bigint from generate_series(1, $2::int) g`,
    [firstAt, plan.accounts],
  )
  await client.query(
    `insert into api_keys (account_id, name, prefix, key_hash, created_at, last_used_at, scopes, last_used_ip)
     select a.id, 'key ' || k, 'fs_' || substr(md5(a.id || ':' || k), 1, 8), encode(sha256((a.id || ':' || k)::bytea), 'hex'),
            $1::bigint, $1::bigint, '*', '203.0.113.0'
     from accounts a cross join generate_series(1, 2) k where a.email like 'sizing-%'`,
    [firstAt],
  )
  await client.query(
    `insert into webhooks (account_id, url, events, description, enabled, secret, created_at)
     select id, 'https://hooks.example.com/fileshare/' || id, '*', 'CI notifications', 1, 'whsec_' || encode(sha256(id::text::bytea), 'base64'), $1::bigint
     from accounts where email like 'sizing-%' and id % $2::int = 0`,
    [firstAt, Math.round(1 / plan.webhookAccountShare)],
  )
  const { rows } = await client.query<{ min: string; max: string }>('select min(id) as min, max(id) as max from accounts')
  const firstAccount = Number(rows[0]!.min)
  const accounts = Number(rows[0]!.max) - firstAccount + 1

  for (let start = 0; start < plan.files; start += CHUNK) {
    const end = Math.min(plan.files, start + CHUNK)
    await client.query('begin')
    const before = (await client.query<{ max: string }>('select coalesce(max(id), 0) as max from files')).rows[0]!.max
    await client.query(
      `with g as (
         select i,
                $3::bigint + floor($4::int * power(random(), 2))::bigint as account_id,
                floor(random() * ${STEMS.length})::int + 1 as stem,
                floor(random() * ${TYPES.length})::int + 1 as kind,
                sha256((random()::text || i)::bytea) as r1,
                sha256((random()::text || i || 'b')::bytea) as r2,
                random() as p
         from generate_series($1::int, $2::int - 1) i
       ), rows as (
         select account_id,
                translate(encode(substring(r1 from 1 for 24), 'base64'), '+/', '-_') as token,
                (${sqlArray(STEMS)})[stem] || (100000 + (i % 900000)) || (${sqlArray(TYPES.map(([ext]) => ext))})[kind] as filename,
                (1024 + floor(power(random(), 3) * 83886080))::bigint as size,
                (${sqlArray(TYPES.map(([, type]) => type))})[kind] as content_type,
                encode(r2, 'hex') as sha256,
                encode(substring(r1 from 17 for 16), 'hex') as storage_key,
                $5::bigint + i * 1000::bigint as created_at,
                floor(random() * 50)::bigint as download_count,
                case when p < 0.2 then $5::bigint + i * 1000::bigint + 30 * 86400000::bigint end as expires_at,
                case when p > 0.98 then 'upload_request' when p > 0.90 then 'dashboard' else 'api' end as source_type,
                case when p > 0.98 then 1 + (i % 5000) end as upload_request_id
         from g order by i
       ), files_in as (
         insert into files (account_id, token, filename, size, content_type, sha256, storage_key, created_at, download_count,
                            expires_at, source_type, upload_request_id)
         select * from rows
         returning id, account_id, token, created_at, filename, size, content_type, sha256, download_count, expires_at, source_type
       ), default_links as (
         insert into links (file_id, account_id, token, is_default, download_count, created_at)
         select id, account_id, token, 1, download_count, created_at from files_in
       ), extra_links as (
         insert into links (file_id, account_id, token, is_default, label, expires_at, max_downloads, password_hash, created_at)
         select id, account_id, translate(encode(substring(sha256((token || 'x')::bytea) from 1 for 24), 'base64'), '+/', '-_'), 0,
                'shared with client', created_at + 7 * 86400000::bigint,
                case when id % 3 = 0 then 10 end,
                case when id % 5 = 0 then 'scrypt$16384$8$1$' || translate(encode(substring(sha256(token::bytea) from 1 for 16), 'base64'), '+/=', '-_')
                                         || '$' || translate(encode(sha256((token || 'h')::bytea), 'base64'), '+/=', '-_') end,
                created_at
         from files_in where id % 10 = 0
       ), audit as (
         insert into audit_events (account_id, at, action, actor_type, actor_id, actor_name, ip, user_agent, target_type, target_id, details)
         select account_id, created_at, 'file.uploaded', 'key', account_id * 2, 'key 1', '203.0.113.0',
                case when id % 2 = 0 then 'curl/8.5.0' else 'fileshare-js/1.4.0 node/24.2.0' end,
                'file', id, json_build_object('filename', filename, 'size', size, 'via', 'multipart')::text
         from files_in
       ), messages as (
         insert into webhook_messages (account_id, message_id, event_type, body, created_at)
         select f.account_id, 'msg_' || translate(encode(substring(sha256((f.token || 'm')::bytea) from 1 for 18), 'base64'), '+/', '-_'),
                'file.uploaded',
                json_build_object('type', 'file.uploaded', 'timestamp', to_char(to_timestamp(f.created_at / 1000.0) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                  'data', json_build_object('file_id', f.id, 'filename', f.filename, 'size', f.size,
                    'upload_date', to_char(to_timestamp(f.created_at / 1000.0) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                    'download_count', 0, 'public_link', 'https://files.example.com/download/' || f.token, 'content_type', f.content_type,
                    'sha256', f.sha256, 'expires_at', null, 'source', json_build_object('type', f.source_type), 'scan', null))::text,
                f.created_at
         from files_in f join webhooks w on w.account_id = f.account_id
         returning id, account_id, created_at
       ), deliveries as (
         insert into webhook_deliveries (webhook_id, message_id, state, attempts, next_attempt_at, locked_until, last_status, created_at)
         select w.id, m.id, 'delivered', 1, null, null, 200, m.created_at from messages m join webhooks w on w.account_id = m.account_id
         returning id, created_at
       )
       insert into webhook_attempts (delivery_id, at, status, duration_ms) select id, created_at + 120, 200, 85 from deliveries`,
      [start, end, firstAccount, accounts, firstAt],
    )
    await client.query(
      `update accounts a set total_files = a.total_files + c.n, total_size = a.total_size + c.size, total_downloads = a.total_downloads + c.downloads
       from (select account_id, count(*) as n, sum(size) as size, sum(download_count) as downloads from files
             where id > $1::bigint group by account_id) c
       where a.id = c.account_id`,
      [before],
    )
    await client.query('commit')
    if (end % 200_000 === 0 || end === plan.files) log(`seeded ${end.toLocaleString('en')} files`)
  }
}
