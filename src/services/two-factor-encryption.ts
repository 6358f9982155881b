import type { TwoFactorSecretsRepository } from '../db/repositories/two-factor-secrets-repository.js'
import { TwoFactorSecretBox, UnreadableTwoFactorSecretError } from './two-factor-secret.js'

/** What `fileshare two-factor encrypt-secrets` found and did. */
export interface EncryptionReport {
  /** Secrets stored as they were (before the key was set), encrypted now. */
  encrypted: number
  /** Secrets still stored as they were: none after a run that encrypted; all of them after a dry run or a refusal. */
  plain: number
  /** Secrets encrypted already, which decrypt with the key. */
  alreadyEncrypted: number
  /** Accounts whose secret does not decrypt with the key (another key, damaged): their holders cannot sign in. */
  unreadable: number[]
  /**
   * Whether the key was checked against the servers': only a secret they encrypted can tell. With
   * none encrypted yet, a mistyped key would pass every check, and nothing is written unless the
   * operator says the key is the servers' (`uncheckedKey`).
   */
  keyChecked: boolean
}

/** Rows read per query: a server's sign-ins go on between pages. */
const PAGE_SIZE = 500

/**
 * Encrypts the two-factor secrets stored before FILESHARE_TWO_FACTOR_KEY was set, at the
 * operator's command and all of them at once, rather than each at its holder's next sign-in: a
 * holder who never signs in again would keep a readable secret in every later backup, and the
 * operator, who set the key so that a dump gives no second factor away, must be able to tell
 * when none is left plain. Safe while servers run (each secret replaced only if unchanged
 * meanwhile) and to run again.
 *
 * Every encrypted secret is read first. If one does not decrypt, nothing is encrypted: the key
 * given is most likely not the servers' (a typo, another environment's), and secrets encrypted
 * under it would lock their holders out of the servers that have the right one.
 */
export class TwoFactorSecretEncryption {
  constructor(
    private readonly secrets: TwoFactorSecretsRepository,
    private readonly box: TwoFactorSecretBox,
  ) {}

  /**
   * Encrypts every plain secret under the key (the caller checked that one is set), unless a stored
   * secret does not decrypt with it, no encrypted secret could check the key and `uncheckedKey` is not
   * given, or `dryRun`: then only says what it found.
   */
  async encryptPlainSecrets({
    dryRun = false,
    uncheckedKey = false,
  }: { dryRun?: boolean; uncheckedKey?: boolean } = {}): Promise<EncryptionReport> {
    if (!this.box.encrypts) throw new Error('FILESHARE_TWO_FACTOR_KEY is not set: there is no key to encrypt the secrets with.')
    const report: EncryptionReport = { encrypted: 0, plain: 0, alreadyEncrypted: 0, unreadable: [], keyChecked: false }
    // First every secret is read (nothing written), then, if all decrypt, the plain ones are encrypted:
    // two walks rather than a list of secrets in memory.
    await this.eachSecret(async (accountId, stored) => {
      try {
        this.box.open(stored, accountId)
        if (TwoFactorSecretBox.isPlain(stored)) report.plain++
        else report.alreadyEncrypted++
      } catch (error) {
        if (!(error instanceof UnreadableTwoFactorSecretError)) throw error
        report.unreadable.push(accountId)
      }
    })
    report.keyChecked = report.alreadyEncrypted > 0
    if (dryRun || report.unreadable.length > 0 || (!report.keyChecked && !uncheckedKey)) return report
    await this.eachSecret(async (accountId, stored) => {
      if (!TwoFactorSecretBox.isPlain(stored)) return
      const sealed = this.box.seal(this.box.open(stored, accountId), accountId)
      // Changed meanwhile (a new enrolment, turned off): what is stored now was written by a server with the key.
      if (await this.secrets.replace(accountId, stored, sealed)) report.encrypted++
    })
    report.plain = 0
    return report
  }

  private async eachSecret(visit: (accountId: number, stored: string) => Promise<void>): Promise<void> {
    for (let after = 0; ;) {
      const page = await this.secrets.page(after, PAGE_SIZE)
      for (const row of page) await visit(row.account_id, row.secret)
      if (page.length < PAGE_SIZE) return
      after = page.at(-1)!.account_id
    }
  }
}
