/**
 * An email address with its letter case folded as account emails compare: ASCII only (A-Z to
 * a-z), which is what SQLite's lower() does, and PostgreSQL's on the "C" column (migration 006).
 * Never toLowerCase(), which folds É to é as well: the database would then disagree.
 */
export function foldEmailCase(email: string): string {
  return email.replace(/[A-Z]+/g, (letters) => letters.toLowerCase())
}
