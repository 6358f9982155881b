/** Keys per query: far below SQLite's and PostgreSQL's limits on bound parameters. */
const KEYS_PER_QUERY = 500

/**
 * Which of `keys` a query finds, asked a batch at a time: `find` gets one batch and returns the
 * keys of it that it found.
 */
export async function keysInBatches(keys: readonly string[], find: (batch: string[]) => Promise<string[]>): Promise<Set<string>> {
  const found = new Set<string>()
  for (let start = 0; start < keys.length; start += KEYS_PER_QUERY) {
    for (const key of await find(keys.slice(start, start + KEYS_PER_QUERY))) found.add(key)
  }
  return found
}
