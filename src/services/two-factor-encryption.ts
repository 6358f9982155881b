import type { TwoFactorSecretsRepository } from '../db/repositories/two-factor-secrets-repository.js'
import { TwoFactorSecretBox, UnreadableTwoFactorSecretError } from './two-factor-secret.js'

/** What `fileshare two-factor encrypt-secrets` did and found. */
export interface EncryptionReport {
  /** Secrets stored as they were (before the key was set), encrypted now. */
  encrypted: number
  /** Secrets encrypted already, which decrypt with the key. */
  alreadyEncrypted: number
  /** Accounts whose secret does not decrypt with the key (another key, damaged): their holders cannot sign in. */
  unreadable: number[]
}

/** Rows read per query: a server's sign-ins go on between pages. */
const PAGE_SIZE = 500

/**
 * Encrypts the two-factor secrets stored before FILESHARE_TWO_FACTOR_KEY was set, at the
 * operator's command and all of them at once, rather than each at its holder's next sign-in: a
 * holder who never signs in again would keep a readable secret in every later backup, and the
 * operator, who set the key so that a dump gives no second factor away, must be able to tell
 * when none is left plain.
 * Safe while servers run (each secret replaced only if unchanged meanwhile) and to run again.
 * Every encrypted secret is read too, so that a key that is not the one they were encrypted with
 * is found here rather than at a holder's sign-in.
 */
export class TwoFactorSecretEncryption {
  constructor(
    private readonly secrets: TwoFactorSecretsRepository,
    private readonly box: TwoFactorSecretBox,
  ) {}

  /** Encrypts every plain secret under the key (the caller checked that one is set). */
  async encryptPlainSecrets(): Promise<EncryptionReport> {
    if (!this.box.encrypts) throw new Error('FILESHARE_TWO_FACTOR_KEY is not set: there is no key to encrypt the secrets with.')
    const report: EncryptionReport = { encrypted: 0, alreadyEncrypted: 0, unreadable: [] }
    for (let after = 0; ;) {
      const page = await this.secrets.page(after, PAGE_SIZE)
      for (const { account_id: accountId, secret: stored } of page) {
        await this.keep(accountId, stored, report)
      }
      if (page.length < PAGE_SIZE) return report
      after = page.at(-1)!.account_id
    }
  }

  private async keep(accountId: number, stored: string, report: EncryptionReport): Promise<void> {
    let secret: string
    try {
      secret = this.box.open(stored, accountId)
    } catch (error) {
      if (!(error instanceof UnreadableTwoFactorSecretError)) throw error
      report.unreadable.push(accountId)
      return
    }
    if (!TwoFactorSecretBox.isPlain(stored)) {
      report.alreadyEncrypted++
      return
    }
    // Changed meanwhile (a new enrolment, turned off): what is stored now was written by a server with the key.
    if (await this.secrets.replace(accountId, stored, this.box.seal(secret, accountId))) report.encrypted++
  }
}
